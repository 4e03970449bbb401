package kube

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// TestClientConfigRateLimit: no client-side rate limit unless the rest.Config or the Options
// ask for one (client-go's zero value would mean 5 QPS; fedkit's old default of 50 QPS shared
// by every loop on the host capped propagation near 7 objects a second).
func TestClientConfigRateLimit(t *testing.T) {
	limiter := flowcontrol.NewFakeAlwaysRateLimiter()
	tests := []struct {
		name      string
		cfg       rest.Config
		opts      Options
		wantQPS   float32
		wantBurst int
	}{
		{name: "neither sets one: none", wantQPS: -1},
		{name: "the rest.Config's limit is kept", cfg: rest.Config{QPS: 20, Burst: 30}, wantQPS: 20, wantBurst: 30},
		{name: "Options override the rest.Config", cfg: rest.Config{QPS: 20, Burst: 30}, opts: Options{QPS: 100, Burst: 200}, wantQPS: 100, wantBurst: 200},
		{name: "negative QPS in Options: none", cfg: rest.Config{QPS: 20}, opts: Options{QPS: -1}, wantQPS: -1},
		{name: "a Burst alone does not bring client-go's 5 QPS back", cfg: rest.Config{Burst: 30}, wantQPS: -1, wantBurst: 30},
		{name: "the rest.Config's own RateLimiter is kept", cfg: rest.Config{RateLimiter: limiter}, wantQPS: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.cfg
			got := clientConfig(&in, tt.opts)
			if diff := cmp.Diff([]any{tt.wantQPS, tt.wantBurst}, []any{got.QPS, got.Burst}); diff != "" {
				t.Errorf("QPS, Burst (-want +got):\n%s", diff)
			}
			if in.QPS != tt.cfg.QPS {
				t.Errorf("the caller's rest.Config was modified")
			}
		})
	}
}
