package propagation

import (
	"context"
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fedkit/fedkit/federation"
)

// DecodePolicy decodes and validates a PropagationPolicy or ClusterPropagationPolicy (by its
// kind). The error names the policy and every invalid field.
func DecodePolicy(u *unstructured.Unstructured) (Policy, error) {
	pol := decodePolicy(u)
	if pol.Err != nil {
		return Policy{}, pol.Err
	}
	return pol, nil
}

// decodePolicy is DecodePolicy with the error in the Policy, which always has u's name:
// an invalid policy still names what it federated.
func decodePolicy(u *unstructured.Unstructured) Policy {
	switch u.GetKind() {
	case federation.ClusterPropagationPolicyGVK.Kind:
		pol := Policy{Name: u.GetName()}
		cp, err := federation.ClusterPropagationPolicyFromUnstructured(u)
		if err != nil {
			pol.Err = err
			return pol
		}
		pol.Spec = cp.Spec
		pol.Err = federation.NewInvalidError(cp.Kind, federation.Key{Name: cp.Name}, federation.ValidateClusterPropagationPolicy(cp))
		return pol
	case federation.PropagationPolicyGVK.Kind:
		pol := Policy{Namespace: u.GetNamespace(), Name: u.GetName()}
		pp, err := federation.PropagationPolicyFromUnstructured(u)
		if err != nil {
			pol.Err = err
			return pol
		}
		pol.Spec = pp.Spec
		pol.Err = federation.NewInvalidError(pp.Kind, federation.Key{Namespace: pp.Namespace, Name: pp.Name}, federation.ValidatePropagationPolicy(pp))
		return pol
	}
	return Policy{Namespace: u.GetNamespace(), Name: u.GetName(),
		Err: fmt.Errorf("%w: %s %s is not a propagation policy", federation.ErrInvalidObject, u.GetKind(), u.GetName())}
}

// decodeCache keeps decoded policies per uid and resourceVersion: a pass reads every
// policy of its scope, and a policy changes seldom.
type decodeCache struct {
	mu sync.Mutex
	m  map[types.UID]decodedPolicy
}

type decodedPolicy struct {
	resourceVersion string
	policy          Policy
}

func (c *decodeCache) decode(u *unstructured.Unstructured) Policy {
	uid, rv := u.GetUID(), u.GetResourceVersion()
	c.mu.Lock()
	if d, ok := c.m[uid]; ok && d.resourceVersion == rv && uid != "" {
		c.mu.Unlock()
		return d.policy
	}
	c.mu.Unlock()
	pol := decodePolicy(u)
	if uid == "" {
		return pol
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[types.UID]decodedPolicy{}
	}
	c.m[uid] = decodedPolicy{resourceVersion: rv, policy: pol}
	return pol
}

// list reads the PropagationPolicies of namespace ("": every namespace) and every
// ClusterPropagationPolicy, decoded and validated once per resourceVersion. Invalid ones
// are in the list with their error: they select nothing, but keep what they federate as it
// is ([Decide]).
func (c *decodeCache) list(ctx context.Context, r federation.Reader, namespace string) ([]Policy, error) {
	var out []Policy
	for _, src := range []struct {
		gvr       schema.GroupVersionResource
		namespace string
	}{{federation.PropagationPolicyGVR, namespace}, {federation.ClusterPropagationPolicyGVR, ""}} {
		list, err := r.List(ctx, src.gvr, src.namespace, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("propagation: list %s: %w", src.gvr.Resource, err)
		}
		for i := range list.Items {
			out = append(out, c.decode(&list.Items[i]))
		}
	}
	return out, nil
}

// forget drops a deleted policy.
func (c *decodeCache) forget(u *unstructured.Unstructured) {
	c.mu.Lock()
	delete(c.m, u.GetUID())
	c.mu.Unlock()
}
