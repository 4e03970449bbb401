package dnsrecord

import (
	"context"
	"fmt"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/gate"
)

// Record kinds, as metric labels and owner reference kinds.
const (
	kindService = "ServiceDNSRecord"
	kindIngress = "IngressDNSRecord"
)

// DNSEndpointName returns the name of the DNSEndpoint the controller writes for a record of
// kind ("ServiceDNSRecord" or "IngressDNSRecord") and name: service-<name> or ingress-<name>.
func DNSEndpointName(kind, name string) string {
	if kind == kindIngress {
		return "ingress-" + name
	}
	return "service-" + name
}

// owner identifies the record a DNSEndpoint belongs to.
type owner struct {
	kind, namespace, name string
	uid                   types.UID // "" when the record is gone: any uid matches
}

func (o owner) reference() metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{
		APIVersion: federation.DNSGroupVersion.String(), Kind: o.kind, Name: o.name, UID: o.uid,
		Controller: &yes, BlockOwnerDeletion: &yes,
	}
}

// owns reports whether ref points at o (at any incarnation of it when o.uid is "").
func (o owner) owns(ref metav1.OwnerReference) bool {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && gv.Group == federation.DNSGroup && ref.Kind == o.kind && ref.Name == o.name &&
		(o.uid == "" || ref.UID == o.uid)
}

// errConflict is the DNSEndpoint of a record's name belonging to something else.
type errConflict struct{ namespace, name, kind, record string }

func (e *errConflict) Error() string {
	return fmt.Sprintf("DNSEndpoint %s/%s exists and is not owned by %s %s/%s; delete it or rename the record",
		e.namespace, e.name, e.kind, e.namespace, e.record)
}

// writeEndpoints makes the DNSEndpoint of o hold eps: it creates it, or updates it when its
// endpoints (or owner) differ. A DNSEndpoint owned by an earlier record of the same kind and
// name (deleted and created again) is adopted; one owned by anything else is an *errConflict.
// The DNSEndpoint is read through r; the update carries its resourceVersion, so a stale read
// fails with a Conflict.
func (c *Controller) writeEndpoints(ctx context.Context, r federation.Reader, o owner, eps []Endpoint) (changed bool, err error) {
	name := DNSEndpointName(o.kind, o.name)
	spec, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&DNSEndpointSpec{Endpoints: eps})
	if err != nil {
		return false, fmt.Errorf("dnsrecord: encode DNSEndpoint %s/%s: %w", o.namespace, name, err)
	}
	u, err := r.Get(ctx, DNSEndpointGVR, o.namespace, name)
	if apierrors.IsNotFound(err) {
		obj := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
		obj.SetGroupVersionKind(DNSEndpointGVK)
		obj.SetNamespace(o.namespace)
		obj.SetName(name)
		obj.SetOwnerReferences([]metav1.OwnerReference{o.reference()})
		if _, err := c.host.Create(ctx, DNSEndpointGVR, obj); err != nil {
			return false, fmt.Errorf("dnsrecord: create DNSEndpoint %s/%s: %w", o.namespace, name, err)
		}
		c.metrics.write(o.kind, "create")
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("dnsrecord: get DNSEndpoint %s/%s: %w", o.namespace, name, err)
	}

	refs := u.GetOwnerReferences()
	mine, stale := -1, -1
	earlier := owner{kind: o.kind, namespace: o.namespace, name: o.name} // any uid
	for i, ref := range refs {
		switch {
		case o.owns(ref):
			mine = i
		case earlier.owns(ref):
			stale = i
		}
	}
	if mine < 0 && stale < 0 {
		return false, &errConflict{namespace: o.namespace, name: name, kind: o.kind, record: o.name}
	}
	var current DNSEndpoint
	decoded := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &current) == nil
	if mine >= 0 && decoded && apiequality.Semantic.DeepEqual(current.Spec.Endpoints, eps) {
		return false, nil
	}
	out := u.DeepCopy()
	out.Object["spec"] = spec
	if mine < 0 {
		refs[stale] = o.reference()
		out.SetOwnerReferences(refs)
	}
	if _, err := c.host.Update(ctx, DNSEndpointGVR, out); err != nil {
		return false, fmt.Errorf("dnsrecord: update DNSEndpoint %s/%s: %w", o.namespace, name, err)
	}
	c.metrics.write(o.kind, "update")
	return true, nil
}

// deleteEndpoints deletes the DNSEndpoint of o when o owns it, as the garbage collector of a
// real cluster would once the record is gone. A DNSEndpoint that belongs to something else
// is left alone. The delete is conditional on the uid and resourceVersion read.
func (c *Controller) deleteEndpoints(ctx context.Context, r federation.Reader, o owner) (bool, error) {
	name := DNSEndpointName(o.kind, o.name)
	u, err := r.Get(ctx, DNSEndpointGVR, o.namespace, name)
	switch {
	case apierrors.IsNotFound(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("dnsrecord: get DNSEndpoint %s/%s: %w", o.namespace, name, err)
	case u.GetDeletionTimestamp() != nil:
		return false, nil
	}
	var owned types.UID
	for _, ref := range u.GetOwnerReferences() {
		if o.owns(ref) {
			owned = ref.UID
		}
	}
	if owned == "" {
		return false, nil
	}
	uid, rv := u.GetUID(), u.GetResourceVersion()
	// The evidence: the record's owner reference.
	err = c.opts.Gate.Delete(ctx, c.host, gate.Write{
		Verb: gate.Delete, Resource: DNSEndpointGVR, Object: u,
		Evidence: gate.Evidence{Mark: gate.Mark{OwnerUID: owned}},
	}, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("dnsrecord: delete DNSEndpoint %s/%s: %w", o.namespace, name, err)
	}
	c.metrics.write(o.kind, "delete")
	return true, nil
}

// updateStatus writes status as u's status through the status subresource, with u's
// resourceVersion.
func (c *Controller) updateStatus(ctx context.Context, gvr schema.GroupVersionResource, u *unstructured.Unstructured, status any) error {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(status)
	if err != nil {
		return fmt.Errorf("dnsrecord: encode status of %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	out := u.DeepCopy()
	out.Object["status"] = m
	if _, err := c.host.UpdateStatus(ctx, gvr, out); err != nil {
		return fmt.Errorf("dnsrecord: write status of %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	return nil
}
