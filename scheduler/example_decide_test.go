package scheduler_test

import (
	"fmt"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/scheduler"
)

// Decide is the Scheduler's whole decision as a pure function: the same placement rules,
// preference defaulting, capacity estimate and condition as Reconcile, from plain values.
// A placement-strategy test needs no host and no loop.
func ExampleDecide() {
	var fed federation.FederatedObject
	var rsp federation.ReplicaSchedulingPreference
	var eu, us federation.Cluster
	for doc, into := range map[string]any{
		`{metadata: {name: web, namespace: shop}, spec: {template: {spec: {replicas: 3}}, placement: {clusterSelector: {}}}}`:                                                &fed,
		`{metadata: {name: web, namespace: shop}, spec: {targetKind: FederatedDeployment, totalReplicas: 10, clusters: {eu: {weight: 3}, us: {weight: 1, maxReplicas: 2}}}}`: &rsp,
		`{metadata: {name: eu}, status: {conditions: [{type: Ready, status: "True"}]}}`:                                                                                      &eu,
		`{metadata: {name: us}, status: {conditions: [{type: Ready, status: "True"}]}}`:                                                                                      &us,
	} {
		if err := yaml.Unmarshal([]byte(doc), into); err != nil {
			fmt.Println(err)
			return
		}
	}

	d, err := scheduler.Decide(scheduler.Input{
		Type:       federation.DeploymentType,
		Object:     &fed,
		Preference: &rsp,
		Clusters:   []federation.Cluster{eu, us},
		Now:        time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range d.Schedule.Clusters {
		fmt.Printf("%s: %d\n", c.Name, c.Replicas)
	}
	fmt.Println(d.Plan.Explain("us"))
	fmt.Println(d.Condition.Type, d.Condition.Status, d.Condition.Reason)
	// Output:
	// eu: 8
	// us: 2
	// us: 2 = min 1 + weight 1 (weight 1), capped by maxReplicas 2
	// Scheduled True Scheduled
}
