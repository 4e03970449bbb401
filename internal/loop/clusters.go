package loop

import (
	"context"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fedkit/fedkit/federation"
)

// Clusters lists and decodes the host's Clusters for one loop. Through a Loop's Reader each
// Cluster is decoded once per uid and resourceVersion for every loop of the Cache
// ([Cache.DecodeCluster]); through any other reader (an embedder's own, for Reconcile) once
// per uid and resourceVersion for this Clusters. The zero value is ready; it is safe for
// concurrent use.
type Clusters struct {
	own clusterDecoder
}

// List returns the Clusters r lists, in its order. The copies share maps and slices with the
// decoded Clusters, which callers must not change. A Cluster that does not decode cannot be
// placed on or synced to: it is logged and left out. The error is r's List error, unwrapped.
//
// A wrapper around r that passes Cluster reads through (federation.PendingReader) is looked
// past (ReaderFor), and the Clusters are read without copies (ViewList): only what decodes
// them reads them.
func (cl *Clusters) List(ctx context.Context, r federation.Reader, log logr.Logger) ([]federation.Cluster, error) {
	r = ReaderFor(r, federation.ClusterGVR)
	items, err := ViewList(ctx, r, federation.ClusterGVR, "", metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	shared, isShared := r.(ClusterDecoder)
	out := make([]federation.Cluster, 0, len(items))
	seen := make(map[types.UID]bool, len(items))
	for _, item := range items {
		seen[item.GetUID()] = true
		var c *federation.Cluster
		if isShared {
			c, err = shared.DecodeCluster(item)
		} else {
			c, err = cl.own.decode(item)
		}
		if err != nil {
			log.Error(err, "Ignoring a Cluster that does not decode", "cluster", item.GetName())
			continue
		}
		out = append(out, *c)
	}
	if !isShared {
		cl.own.keep(seen)
	}
	return out, nil
}
