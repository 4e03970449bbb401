package propagation_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/propagation"
)

// A platform-wide ClusterPropagationPolicy federates a team's Deployment first. The team's
// PropagationPolicy of higher priority selects it too, and takes it over only once it says
// preemption: Always.
func ExampleDecide() {
	web := &unstructured.Unstructured{}
	web.SetAPIVersion("apps/v1")
	web.SetKind("Deployment")
	web.SetNamespace("shop")
	web.SetName("web")
	platform := propagation.Policy{Name: "platform", Spec: federation.PropagationSpec{
		ResourceSelectors: []federation.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}},
	}}
	team := propagation.Policy{Namespace: "shop", Name: "team", Spec: federation.PropagationSpec{
		Priority:          10,
		ResourceSelectors: []federation.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}},
	}}

	d := propagation.Decide(web, []propagation.Policy{platform, team}, "cluster/platform")
	fmt.Println(d.Winner.Policy.Ref(), "keeps it;", d.Losers[0].Policy.Ref(), propagation.LossReason(d.Winner, d.Losers[0]))

	team.Spec.Preemption = federation.PreemptAlways
	d = propagation.Decide(web, []propagation.Policy{platform, team}, "cluster/platform")
	fmt.Println(d.Winner.Policy.Ref(), "takes it;", d.Losers[0].Policy.Ref(), propagation.LossReason(d.Winner, d.Losers[0]))
	// Output:
	// cluster/platform keeps it; shop/team NotPreempting
	// shop/team takes it; cluster/platform LowerPrecedence
}
