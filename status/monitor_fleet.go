package status

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/placement"
)

// A fleet disruption (placement.FleetDisruption): every cluster, or a large share of the fleet,
// lost together is the control plane's own outage, not the fleet's. The monitor then taints
// no cluster NoExecute. The clusters that came back within the disruption window still count
// with the lost ones, so while contact returns cluster by cluster nothing is drained; a
// cluster still lost once the fleet is out of the disruption turns NoExecute at once if it
// has been not Ready for EvictionDelay (the window after the others came back is its settle
// period). The judgement is made from the Cluster objects alone: it survives a restart and
// every replica of the monitor makes the same.

// judgeFleet judges the fleet's disruption from the Clusters r lists, with cluster's Ready
// condition as this pass is about to write it.
func (m *ClusterMonitor) judgeFleet(ctx context.Context, r federation.Reader, cluster string, ready metav1.Condition, now time.Time, log logr.Logger) (placement.Disruption, error) {
	listed, err := m.clusterList.List(ctx, r, log)
	if err != nil {
		return placement.Disruption{}, fmt.Errorf("status: list Clusters to judge the fleet: %w", err)
	}
	// The decoded Clusters are shared: this one gets a copy of its conditions to change.
	fleet := slices.Clone(listed)
	for i := range fleet {
		if fleet[i].Name != cluster {
			continue
		}
		conds := slices.Clone(fleet[i].Status.Conditions)
		j := slices.IndexFunc(conds, func(c metav1.Condition) bool { return c.Type == federation.ConditionReady })
		if j < 0 {
			conds = append(conds, ready)
		} else {
			conds[j] = ready
		}
		fleet[i].Status.Conditions = conds
	}
	return placement.FleetDisruption(fleet, now, m.opts.Disruption), nil
}
