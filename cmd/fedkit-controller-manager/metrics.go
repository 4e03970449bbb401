package main

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/fedkit/fedkit/controlplane"
)

// newRegistry returns the registry /metrics serves. The control plane's loops and the
// cluster set register every family of METRICS.md into it; the process adds its own, under
// the names controller-runtime's managers use, so dashboards built for those work here too:
// go_* and process_* (Prometheus' Go and process collectors), and the given collectors
// (main's rest_client_requests_total).
func newRegistry(extra ...prometheus.Collector) (*prometheus.Registry, error) {
	reg := prometheus.NewRegistry()
	for _, c := range append([]prometheus.Collector{collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})}, extra...) {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return reg, nil
}

// leaderStatus is leader_election_master_status, as client-go's leader election reports it
// in a controller-runtime manager: one series per Lease this replica campaigns for, 1 while
// it holds the Lease, 0 otherwise. With --shards there is one series per shard Lease. It is
// read from the control plane's Status at each scrape.
type leaderStatus struct {
	cp    *controlplane.ControlPlane
	names []string // the Leases; with --shards, one per shard, in shard order
	desc  *prometheus.Desc
}

func newLeaderStatus(cp *controlplane.ControlPlane, names []string) *leaderStatus {
	return &leaderStatus{cp: cp, names: names, desc: prometheus.NewDesc("leader_election_master_status",
		"Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
		[]string{"name"}, nil)}
}

func (l *leaderStatus) Describe(ch chan<- *prometheus.Desc) { ch <- l.desc }

func (l *leaderStatus) Collect(ch chan<- prometheus.Metric) {
	held := map[int]bool{} // shard index (0 without sharding) -> a loop runs for it
	for _, s := range l.cp.Status() {
		if s.Name == controlplane.ClusterSetLoop || s.State == controlplane.StateStandby || s.State == controlplane.StateStopped {
			continue
		}
		held[s.Shard.Index] = true
	}
	sharded := len(l.names) > 1
	for i, name := range l.names {
		v := 0.0
		if held[i] || (!sharded && len(held) > 0) {
			v = 1
		}
		if m, err := prometheus.NewConstMetric(l.desc, prometheus.GaugeValue, v, name); err == nil {
			ch <- m
		}
	}
}

// restRequests counts client-go's requests as controller-runtime does,
// rest_client_requests_total{code, method, host}: main hands it to client-go's metrics
// hooks (k8s.io/client-go/tools/metrics), which are process-wide and set once.
type restRequests struct{ *prometheus.CounterVec }

func newRESTRequests() restRequests {
	return restRequests{prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rest_client_requests_total",
		Help: "Number of HTTP requests, partitioned by status code, method, and host.",
	}, []string{"code", "method", "host"})}
}

// Increment implements client-go's metrics.ResultMetric.
func (r restRequests) Increment(_ context.Context, code, method, host string) {
	r.WithLabelValues(code, method, host).Inc()
}
