package plan_test

import (
	"time"

	"github.com/fedkit/fedkit/federation"
)

var (
	key = federation.Key{Namespace: "production", Name: "app-frontend"}
	now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
)

func must(err error) {
	if err != nil {
		panic(err)
	}
}
