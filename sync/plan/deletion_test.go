package plan_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/sync/plan"
)

// TestSameDeletions: a version of the federated object that another loop's status write
// alone moved leads to the same deletions; a new spec, annotation, schedule, deletion or
// object does not, and a driver deletes nothing on the old one.
func TestSameDeletions(t *testing.T) {
	base := func() *federation.FederatedObject {
		o := &federation.FederatedObject{}
		o.UID, o.Generation, o.ResourceVersion = "fed-1", 2, "10"
		o.Annotations = map[string]string{"a": "1"}
		o.Status.Schedule = &federation.Schedule{Clusters: []federation.ScheduledCluster{{Name: "a"}}}
		return o
	}
	for _, tc := range []struct {
		name   string
		change func(*federation.FederatedObject)
		want   bool
	}{
		{name: "a status write of another loop", change: func(o *federation.FederatedObject) {
			o.ResourceVersion = "11"
			o.Status.Clusters = []federation.MemberStatus{{Name: "a"}}
		}, want: true},
		{name: "a new generation", change: func(o *federation.FederatedObject) { o.Generation++ }},
		{name: "another object of the name", change: func(o *federation.FederatedObject) { o.UID = "fed-2" }},
		{name: "deleted since", change: func(o *federation.FederatedObject) { o.DeletionTimestamp = &metav1.Time{} }},
		{name: "a new annotation", change: func(o *federation.FederatedObject) {
			o.Annotations = map[string]string{"a": "1", federation.OrphanAnnotation: "true"}
		}},
		{name: "a new schedule", change: func(o *federation.FederatedObject) { o.Status.Schedule = &federation.Schedule{} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := base()
			tc.change(b)
			if got := plan.SameDeletions(base(), b); got != tc.want {
				t.Errorf("SameDeletions() = %v; want %v", got, tc.want)
			}
		})
	}
}

// TestSamePlacement: a Cluster's heartbeat does not change where objects go; its labels,
// taints, deletion or a new Cluster of the name do.
func TestSamePlacement(t *testing.T) {
	base := func() *federation.Cluster {
		c := &federation.Cluster{}
		c.UID, c.Labels = "c-1", map[string]string{"region": "eu"}
		return c
	}
	for _, tc := range []struct {
		name   string
		change func(*federation.Cluster)
		want   bool
	}{
		{name: "a heartbeat", change: func(c *federation.Cluster) { c.Status.LastHeartbeatTime = &metav1.Time{} }, want: true},
		{name: "a new label", change: func(c *federation.Cluster) { c.Labels = map[string]string{"region": "us"} }},
		{name: "a taint", change: func(c *federation.Cluster) {
			c.Spec.Taints = []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoExecute}}
		}},
		{name: "leaving", change: func(c *federation.Cluster) { c.DeletionTimestamp = &metav1.Time{} }},
		{name: "a new Cluster of the name", change: func(c *federation.Cluster) { c.UID = "c-2" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := base()
			tc.change(c)
			if got := plan.SamePlacement(base(), c); got != tc.want {
				t.Errorf("SamePlacement() = %v; want %v", got, tc.want)
			}
		})
	}
}
