package federation_test

import (
	"fmt"

	"github.com/fedkit/fedkit/federation"
)

// Replicas gives status.schedule as a map, the shape tests compare; nil means the scheduler
// has not written a schedule yet.
func ExampleSchedule_Replicas() {
	var obj federation.FederatedObject
	fmt.Println("before scheduling:", obj.Status.Schedule.Replicas() == nil)

	obj.Status.Schedule = &federation.Schedule{Clusters: []federation.ScheduledCluster{
		{Name: "cluster-aws-us-east", Replicas: 5}, {Name: "cluster-gcp-eu-west", Replicas: 4},
	}}
	fmt.Println(obj.Status.Schedule.Replicas())
	// Output:
	// before scheduling: true
	// map[cluster-aws-us-east:5 cluster-gcp-eu-west:4]
}
