package agent

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
)

// renew renews the agent's Lease in its namespace on the host, creating it the first time.
func (a *Agent) renew(ctx context.Context) error {
	now, err := metav1.NewMicroTime(a.opts.Clock.Now()).MarshalQueryParameter()
	if err != nil {
		return err
	}
	u, err := a.hub.Get(ctx, leaseGVR, a.ns, federation.AgentLeaseName)
	switch {
	case apierrors.IsNotFound(err):
		u = &unstructured.Unstructured{Object: map[string]any{}}
		u.SetAPIVersion("coordination.k8s.io/v1")
		u.SetKind("Lease")
		u.SetNamespace(a.ns)
		u.SetName(federation.AgentLeaseName)
		setLease(u, a.opts.Cluster, now, int64(a.opts.LeaseDuration.Seconds()))
		_, err = a.hub.Create(ctx, leaseGVR, u)
	case err == nil:
		setLease(u, a.opts.Cluster, now, int64(a.opts.LeaseDuration.Seconds()))
		_, err = a.hub.Update(ctx, leaseGVR, u)
	}
	if err != nil {
		return fmt.Errorf("agent: cluster %q: renew Lease %s/%s on the host: %w", a.opts.Cluster, a.ns, federation.AgentLeaseName, err)
	}
	return nil
}

func setLease(u *unstructured.Unstructured, holder, now string, seconds int64) {
	_ = unstructured.SetNestedField(u.Object, holder, "spec", "holderIdentity")
	_ = unstructured.SetNestedField(u.Object, now, "spec", "renewTime")
	_ = unstructured.SetNestedField(u.Object, seconds, "spec", "leaseDurationSeconds")
}
