package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/fedkit/fedkit/controlplane"
)

// servers are the process's HTTP endpoints: /metrics; /healthz and /readyz; /debug/pprof/.
// Each listens on its own address (--metrics-bind-address, --health-probe-bind-address,
// --pprof-bind-address), as in a controller-runtime manager, so a NetworkPolicy or a
// Service can expose the metrics without the profiler.
type servers struct {
	log  logr.Logger
	srvs []*http.Server
	wg   sync.WaitGroup
}

// disabledAddr turns an endpoint off, as controller-runtime's "0" does.
const disabledAddr = "0"

// startServers listens on every address that is not "0" and serves until shutdown. It fails
// before serving anything when an address cannot be listened on (taken, malformed), so a
// wrong flag stops the process at once.
func startServers(f *flags, reg prometheus.Gatherer, cp *controlplane.ControlPlane, log logr.Logger) (*servers, error) {
	s := &servers{log: log}
	endpoints := []struct {
		name, addr string
		handler    http.Handler
	}{
		{"metrics", f.metricsAddr, metricsHandler(reg)},
		{"health probes", f.probeAddr, probeHandler(cp)},
		{"pprof", f.pprofAddr, pprofHandler()},
	}
	var listeners []net.Listener
	for _, e := range endpoints {
		if e.addr == disabledAddr || e.addr == "" {
			continue
		}
		ln, err := net.Listen("tcp", e.addr)
		if err != nil {
			for _, l := range listeners {
				_ = l.Close()
			}
			return nil, fmt.Errorf("%s: %w", e.name, err)
		}
		listeners = append(listeners, ln)
		srv := &http.Server{Handler: e.handler, ReadHeaderTimeout: 10 * time.Second}
		s.srvs = append(s.srvs, srv)
		log.Info("Serving "+e.name, "address", ln.Addr().String())
		s.wg.Go(func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Error(err, "Serving "+e.name+" failed")
			}
		})
	}
	return s, nil
}

// shutdown stops every server, letting requests under way finish within timeout, and
// returns once they have stopped.
func (s *servers) shutdown(timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for _, srv := range s.srvs {
		if err := srv.Shutdown(ctx); err != nil {
			_ = srv.Close()
		}
	}
	s.wg.Wait()
}

func metricsHandler(reg prometheus.Gatherer) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	return mux
}

// probeHandler serves the kubelet's probes. /healthz answers 200 while the process serves:
// a control plane that cannot work (every loop failed) ends Run, and the process exits,
// so liveness needs no check of its own. /readyz answers 200 once cp.Ready() is nil (its
// caches synced, or it stands by) and 503 with the reason otherwise.
func probeHandler(cp *controlplane.ControlPlane) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if err := cp.Ready(); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		_, _ = fmt.Fprintln(w, "ok")
	})
	return mux
}

// pprofHandler serves net/http/pprof's profiles under /debug/pprof/.
func pprofHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}
