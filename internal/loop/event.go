package loop

import (
	"context"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fedkit/fedkit/federation"
)

// Event records an event on obj through rec (nil: none) and logs it with the logger of ctx:
// warnings at V(0), the rest at V(1). The loops' passes report through it.
func Event(ctx context.Context, rec federation.EventRecorder, obj runtime.Object, typ, reason, msg string) {
	log := logr.FromContextOrDiscard(ctx)
	if typ != federation.EventTypeWarning {
		log = log.V(1)
	}
	log.Info(msg, "reason", reason)
	if rec != nil {
		rec.Eventf(obj, typ, reason, "%s", msg)
	}
}
