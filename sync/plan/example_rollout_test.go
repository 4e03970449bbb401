package plan_test

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/sync/plan"
)

// ExampleRolloutStages shows which placed clusters start running a new revision in which
// stage: what a preview of a rollout prints.
func ExampleRolloutStages() {
	var r federation.Rollout
	must(yaml.Unmarshal([]byte(`
stages:
- {name: canary, clusters: [us-east]}
- {name: europe, clusterSelector: {matchLabels: {region: eu}}, minReadySeconds: 300}
- {name: most, percentage: 80}
`), &r))
	var clusters []federation.Cluster
	for _, c := range [][2]string{{"us-east", "us"}, {"us-west", "us"}, {"eu-west", "eu"}, {"eu-north", "eu"}, {"ap-south", "ap"}, {"ap-east", "ap"}} {
		clusters = append(clusters, federation.Cluster{ObjectMeta: metav1.ObjectMeta{Name: c[0], Labels: map[string]string{"region": c[1]}}})
	}
	placed := []string{"us-east", "us-west", "eu-west", "eu-north", "ap-south", "ap-east"}
	stages, err := plan.RolloutStages(&r, placed, clusters)
	must(err)
	for i, s := range stages {
		fmt.Printf("stage %d (%s): %v, then %s ready\n", i+1, s.Name, s.Clusters, s.MinReady)
	}
	// Output:
	// stage 1 (canary): [us-east], then 0s ready
	// stage 2 (europe): [eu-north eu-west], then 5m0s ready
	// stage 3 (most): [ap-east ap-south], then 0s ready
	// stage 4 (remaining): [us-west], then 0s ready
}

// ExampleDecideRollout decides one step of a rollout: revision 5 replaces revision 4, the
// canary has reported it ready for longer than its minReadySeconds, so the next stage starts.
func ExampleDecideRollout() {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	spec := func(image string) federation.FederatedSpec {
		return federation.FederatedSpec{Template: federation.RawObject{Object: map[string]any{"spec": map[string]any{"image": image}}}}
	}
	obj := &federation.FederatedObject{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"}, Spec: spec("web:5")}
	obj.Spec.Rollout = &federation.Rollout{Stages: []federation.RolloutStage{{Name: "canary", Clusters: []string{"a"}, MinReadySeconds: 60}}}
	federation.DefaultFederatedObject(obj)
	started, readySince := metav1.NewTime(now.Add(-3*time.Minute)), metav1.NewTime(now.Add(-2*time.Minute))
	obj.Status.Rollout = &federation.RolloutStatus{Revision: 5, StableRevision: 4, StableRevisionName: "web-4",
		Phase: federation.RolloutProgressing, Stage: 1, Stages: 2, StageName: "canary", StageStartTime: &started, ReadySince: &readySince}
	seen := metav1.NewTime(now.Add(-time.Minute))
	for _, c := range []struct {
		name     string
		revision int64
	}{{"a", 5}, {"b", 4}, {"c", 4}} {
		ready := true
		obj.Status.Clusters = append(obj.Status.Clusters, federation.MemberStatus{
			Name: c.name, Revision: c.revision, ObservedRevision: c.revision, Ready: &ready, LastObserved: &seen})
	}
	var clusters []federation.Cluster
	for _, n := range []string{"a", "b", "c"} {
		clusters = append(clusters, federation.Cluster{ObjectMeta: metav1.ObjectMeta{Name: n}, Status: federation.ClusterStatus{
			Conditions: []metav1.Condition{{Type: federation.ConditionReady, Status: metav1.ConditionTrue}}}})
	}
	d, err := plan.DecideRollout(plan.RolloutInput{
		Object: obj, Revision: 5, Placed: []string{"a", "b", "c"}, Clusters: clusters, Now: now,
		History: []plan.Revision{{Number: 4, Name: "web-4", Spec: spec("web:4")}, {Number: 5, Name: "web-5", Spec: spec("web:5")}},
	})
	must(err)
	fmt.Println(d.Status.Phase, d.Status.Reason)
	fmt.Println(d.Status.Message)
	fmt.Println("a:", d.Assign["a"], "b:", d.Assign["b"], "c:", d.Assign["c"])
	// Output:
	// Progressing WaitingForReady
	// stage 2 of 2 (remaining): waiting for b (not updated yet), c (not updated yet) to report revision 5 ready
	// a: 5 b: 5 c: 5
}
