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
	log := s.opts.Logger
	if typ != eventWarning {
		log = log.V(1)
	}
	record := s.opts.Events != nil && obj != nil
	if !record && !log.Enabled() {
		return // nobody listens: do not even format the message
	}
	msg := fmt.Sprintf(format, args...)
	log.Info(msg, "reason", reason)
	if record {
		s.opts.Events.Eventf(obj, typ, reason, "%s", msg)
	}
}
