package dnsrecord

import (
	"github.com/prometheus/client_golang/prometheus"

	fedmetrics "github.com/fedkit/fedkit/internal/metrics"
)

// metrics are per Controller, registered into the embedder's registerer; a nil registerer
// leaves them unregistered (they still count, cheaply). A second Controller on the same
// registerer shares the first one's collectors.
type metrics struct {
	// reconciles has the passes over each record kind, by kind.
	reconciles map[string]*fedmetrics.Reconciles
	members    *fedmetrics.Members
	writes     *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{reconciles: map[string]*fedmetrics.Reconciles{}}
	for _, kind := range []string{kindService, kindIngress} {
		r, err := fedmetrics.NewReconciles(reg, fedmetrics.LoopDNS, kind)
		if err != nil {
			return nil, err
		}
		m.reconciles[kind] = r
	}
	var err error
	if m.members, err = fedmetrics.NewMembers(reg, fedmetrics.LoopDNS); err != nil {
		return nil, err
	}
	m.writes, err = fedmetrics.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "fedkit_dns_endpoint_writes_total",
		Help: "Writes of DNSEndpoints on the host by record type and verb (create, update, delete).",
	}, []string{fedmetrics.LabelType, fedmetrics.LabelVerb}))
	if err != nil {
		return nil, err
	}
	return m, nil
}

// observe records one pass over a record of kind. A pass over a key that has no record of
// that kind, and had nothing to clean up, is no pass over a record: it is not counted.
func (m *metrics) write(kind, verb string) {
	m.writes.WithLabelValues(kind, verb).Inc()
}
