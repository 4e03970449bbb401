// Package metrics holds what every fedkit loop does the same way with Prometheus: registering
// its collectors into the embedder's registerer, where a second loop of the same kind (one
// per federated type, say) shares the collectors the first one registered.
package metrics

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Register registers c into reg and returns it, or returns the collector of the same
// description already registered there (so two loops share one family). A nil reg registers
// nothing: the loop's metrics still count, unexported. Any other registration failure (a name
// registered with other labels) is returned.
func Register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	if reg == nil {
		return c, nil
	}
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, err
}
