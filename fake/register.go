package fake

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/fedkit/fedkit/federation"
)

// Register writes the fleet's members to host as Cluster objects, as an operator joining
// clusters and a cluster monitor would: each Cluster of [Fleet.Clusters] is created (or its
// spec and labels updated) and its status written. Call it again after Partition or Heal to
// refresh the Ready conditions the scheduler and placement read. host is usually a
// fake.NewHost("host"), but any ClusterClient serving the Cluster CRD works. A write that
// meets a Conflict (a cluster monitor writing the same Cluster) reads the Cluster again and
// is retried.
func (f *Fleet) Register(ctx context.Context, host federation.ClusterClient) error {
	for _, c := range f.Clusters() {
		if err := registerCluster(ctx, host, c); err != nil {
			return fmt.Errorf("fake: register cluster %q: %w", c.Name, err)
		}
	}
	return nil
}

func registerCluster(ctx context.Context, host federation.ClusterClient, c federation.Cluster) error {
	c.CreationTimestamp = metav1.Time{} // the host sets its own
	u, err := federation.ToUnstructured(&c)
	if err != nil {
		return err
	}
	status := u.Object["status"]
	stored, err := host.Create(ctx, federation.ClusterGVR, u)
	if apierrors.IsAlreadyExists(err) {
		// A cluster monitor may write the Cluster at the same time: read again on a Conflict.
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := host.Get(ctx, federation.ClusterGVR, "", c.Name)
			if err != nil {
				return err
			}
			cur.Object["spec"] = u.Object["spec"]
			cur.SetLabels(c.Labels)
			stored, err = host.Update(ctx, federation.ClusterGVR, cur)
			return err
		})
	}
	if err != nil {
		return err
	}
	first := true
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if !first {
			cur, err := host.Get(ctx, federation.ClusterGVR, "", c.Name)
			if err != nil {
				return err
			}
			stored = cur
		}
		first = false
		stored.Object["status"] = status
		_, err := host.UpdateStatus(ctx, federation.ClusterGVR, stored)
		return err
	})
}
