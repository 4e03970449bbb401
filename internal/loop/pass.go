package loop

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/metrics"
)

// Pass is how one loop wraps each of its passes over one key (its Reconcile, and the
// reconciler it gives Run): the one place that sets up the pass's logger, times it and
// records its outcome. The scheduler, sync, the Collector, the ClusterMonitor and the DNS
// controller all use it.
type Pass struct {
	// Loop names the loop in logs ("loop"), as its metrics label does (metrics.Loop*).
	Loop string
	// Type is the kind of object the pass is about, in logs as "type"; "": none.
	Type string
	// KeyName is the log key naming the key. Default: "object".
	KeyName string
	// Clock times the pass.
	Clock clock.PassiveClock
	// Logger is used when ctx carries no logger (Run puts its own in ctx, with the queue).
	Logger logr.Logger
	// Observe records one pass (a metrics.Reconciles' Observe). nil: nothing is recorded.
	Observe func(outcome string, err error, start, end time.Time)
}

// PassFunc is one pass over one key. It logs through logr.FromContextOrDiscard(ctx), the
// logger Pass.Run put there, and returns what it did as a metrics.Outcome* value.
type PassFunc func(ctx context.Context) (federation.Result, string, error)

// Run runs pass for key the way controller-runtime's reconcileHandler does: the logger from
// ctx (else p.Logger) with the loop, type and key goes into the pass's ctx, the only way a
// pass gets it. The pass is timed on p.Clock and its outcome recorded, an OutcomeError whose
// error is a Conflict as OutcomeConflict; an empty outcome (a pass over nothing) records
// nothing. The Result and error are the pass's.
func (p Pass) Run(ctx context.Context, key federation.Key, pass PassFunc) (federation.Result, error) {
	start := p.Clock.Now()
	log, err := logr.FromContext(ctx)
	if err != nil {
		log = p.Logger
	}
	name := p.KeyName
	if name == "" {
		name = "object"
	}
	if p.Type != "" {
		log = log.WithValues("loop", p.Loop, "type", p.Type, name, key.String())
	} else {
		log = log.WithValues("loop", p.Loop, name, key.String())
	}
	res, outcome, err := pass(logr.NewContext(ctx, log))
	if outcome == metrics.OutcomeError && apierrors.IsConflict(err) {
		outcome = metrics.OutcomeConflict
	}
	if outcome != "" && p.Observe != nil {
		p.Observe(outcome, err, start, p.Clock.Now())
	}
	return res, err
}
