package loop

import (
	"testing"

	"k8s.io/apimachinery/pkg/labels"
)

func TestCovers(t *testing.T) {
	for _, tc := range []struct {
		held, want string
		covered    bool
	}{
		{"owner", "owner=abc", true},
		{"owner", "owner in (a,b)", true},
		{"owner", "owner", true},
		{"owner", "other=abc", false},
		{"owner", "", false},
		{"owner", "!owner", false},
		{"owner", "owner!=abc", false},
		{"app=web", "app=web,tier=1", true},
		{"app=web", "app=db", false},
		{"app=web,owner", "owner=x,app=web", true},
		{"app=web,owner", "owner=x", false},
	} {
		want, err := labels.Parse(tc.want)
		if err != nil {
			t.Fatal(err)
		}
		if got := covers(tc.held, want); got != tc.covered {
			t.Errorf("covers(%q, %q) = %v; want %v", tc.held, tc.want, got, tc.covered)
		}
	}
}
