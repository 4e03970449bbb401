package sync

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/fedkit/fedkit/federation"
	fedmetrics "github.com/fedkit/fedkit/internal/metrics"
)

// Event types, as core/v1 names them.
const (
	eventNormal  = federation.EventTypeNormal
	eventWarning = federation.EventTypeWarning
)

// event records an event on obj (a federated object or a Cluster, typed or unstructured)
// through Options.Events, and logs it at V(1) (warnings at V(0)), with the loop, the type and
// the object (or cluster) it is about. A nil obj is only logged.
func (s *Syncer) event(obj runtime.Object, typ, reason, format string, args ...any) {
	log := s.opts.Logger
	if typ != eventWarning {
		log = log.V(1)
	}
	record := s.opts.Events != nil && obj != nil
	if !record && !log.Enabled() {
		return // nobody listens: neither format the message nor name the object (one per write)
	}
	log = log.WithValues("loop", fedmetrics.LoopSync, "type", s.typ.Federated.Kind)
	if m, err := meta.Accessor(obj); obj != nil && err == nil {
		if obj.GetObjectKind().GroupVersionKind().Kind == "Cluster" {
			log = log.WithValues("cluster", m.GetName())
		} else {
			log = log.WithValues("object", federation.Key{Namespace: m.GetNamespace(), Name: m.GetName()}.String())
		}
	}
	msg := fmt.Sprintf(format, args...)
	log.Info(msg, "reason", reason)
	if record {
		s.opts.Events.Eventf(obj, typ, reason, "%s", msg)
	}
}
