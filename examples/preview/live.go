package main

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/preview"
)

// readLive reads, from each cluster's member of set (clusters maps a Cluster's name to its
// member's name in set), the member object of every federated object of the input: what
// sync would read before it decides. A cluster that is not in set is not read (the preview
// shows no change for it); one that cannot be read is an error naming it, since a preview
// that guessed would mislead.
func readLive(ctx context.Context, set federation.ClusterSet, clusters map[string]string, in preview.Input) (map[string][]*unstructured.Unstructured, error) {
	live := map[string][]*unstructured.Unstructured{}
	var errs []error
	for _, c := range in.Clusters {
		member, ok := clusters[c.Name]
		if !ok {
			continue
		}
		client, err := set.Client(member)
		if errors.Is(err, federation.ErrClusterNotFound) {
			continue // no context of that name
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("cluster %q: %w", c.Name, err))
			continue
		}
		objs := []*unstructured.Unstructured{}
		for _, o := range in.Objects {
			typ, ok := federation.BuiltinTypeFor(o.Kind)
			if !ok {
				continue // the report says the kind is unknown
			}
			ns := o.Namespace
			if !typ.Namespaced {
				ns = ""
			}
			u, err := client.Get(ctx, typ.TargetGVR(), ns, o.Name)
			switch {
			case apierrors.IsNotFound(err):
			case err != nil:
				errs = append(errs, fmt.Errorf("cluster %q: read %s %s: %w", c.Name, typ.Target.Kind, federation.Key{Namespace: ns, Name: o.Name}, err))
			default:
				objs = append(objs, u)
			}
		}
		live[c.Name] = objs
	}
	return live, errors.Join(errs...)
}
