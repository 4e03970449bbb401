package controlplane_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/controlplane"
	"github.com/fedkit/fedkit/fake"
	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/sync/plan"
)

// The control plane runs sync waiting for the scheduler of the type (unless the scheduler is
// off, or covers less than sync): an object whose preference the scheduler refuses then goes
// nowhere, rather than with the template's 4 replicas to both members.
func TestSyncWaitsForTheScheduler(t *testing.T) {
	for _, tc := range []struct {
		name    string
		options func(*controlplane.Options)
		waits   bool
	}{
		{name: "the scheduler runs", options: func(*controlplane.Options) {}, waits: true},
		{name: "the scheduler is off", options: func(o *controlplane.Options) { o.Disable.Scheduler = true }},
		{name: "the scheduler is restricted to another namespace", options: func(o *controlplane.Options) { o.Scheduler.Namespace = "other" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			e := newEnv(t)
			opts := e.options(federation.DeploymentType)
			opts.Disable.DNS = true
			tc.options(&opts)
			cp, err := controlplane.New(e.host, e.fleet, opts)
			require.NoError(t, err)

			// Both objects exist before the loops start, so the scheduler's caches hold the
			// preference when it first looks at the object. Created after, the scheduler could
			// see the object before its preference (separate informers), schedule it
			// Duplicated, and then keep that schedule when the preference turns out invalid.
			create(t, e.host, federation.ReplicaSchedulingPreferenceGVR, `
apiVersion: core.federation.k8s.io/v1alpha1
kind: ReplicaSchedulingPreference
metadata: {name: web, namespace: default}
spec: {targetKind: FederatedDeployment, totalReplicas: 2, clusters: {"*": {minReplicas: 3, maxReplicas: 1}}}
`)
			create(t, e.host, deployments, federatedDeployment("web"))
			stop := run(cp)
			defer func() { require.NoError(t, stop()) }()
			if !tc.waits {
				stepUntil(t, e.clock, time.Second, "the template's count in both members", func() bool {
					return e.memberReplicas("eu", "web") == 4 && e.memberReplicas("us", "web") == 4
				})
				return
			}
			var last string
			stepUntilf(t, e.clock, time.Second, func() string {
				return fmt.Sprintf("Propagated=False, NotScheduled (last reason seen: %q)", last)
			}, func() bool {
				last = e.propagatedReason("web")
				return last == plan.ReasonNotScheduled
			})
			require.Equal(t, "False", e.condition(deployments, "web", "Scheduled"))
			for _, name := range []string{"eu", "us"} {
				m, _ := e.fleet.Member(name)
				for _, a := range m.Actions() {
					switch a.Verb {
					case fake.VerbCreate, fake.VerbUpdate, fake.VerbPatch, fake.VerbDelete:
						require.NotEqual(t, federation.DeploymentType.TargetGVR(), a.Resource, "%s: %s", name, a)
					}
				}
				require.EqualValues(t, -1, e.memberReplicas(name, "web"), name)
			}
		})
	}
}

// propagatedReason returns the reason of the Propagated condition of default/name.
func (e *env) propagatedReason(name string) string {
	u, err := e.host.Peek(deployments, "default", name)
	if err != nil {
		return ""
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == federation.ConditionPropagated {
			s, _ := m["reason"].(string)
			return s
		}
	}
	return ""
}
