package sync

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
)

// Event types, as core/v1 names them.
const (
	eventNormal  = "Normal"
	eventWarning = "Warning"
)

// event records an event on obj (a federated object, typed or unstructured) through
// Options.Events, and logs it at V(1) (warnings at V(0)). A nil obj is only logged.
func (s *Syncer) event(obj runtime.Object, typ, reason, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	log := s.opts.Logger
	if typ == eventWarning {
		log.Info(msg, "reason", reason)
	} else {
		log.V(1).Info(msg, "reason", reason)
	}
	if s.opts.Events != nil && obj != nil {
		s.opts.Events.Eventf(obj, typ, reason, "%s", msg)
	}
}
