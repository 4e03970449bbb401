//go:build tools

// Package tools pins the module's dependencies before code imports them.
package tools

import (
	_ "github.com/evanphx/json-patch/v5"
	_ "github.com/go-logr/logr"
	_ "github.com/google/go-cmp/cmp"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/stretchr/testify/require"
	_ "golang.org/x/sync/errgroup"
	_ "k8s.io/api/apps/v1"
	_ "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	_ "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	_ "k8s.io/client-go/dynamic"
	_ "k8s.io/client-go/dynamic/fake"
	_ "k8s.io/utils/clock"
	_ "sigs.k8s.io/yaml"
)
