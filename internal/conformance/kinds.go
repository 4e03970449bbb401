package conformance

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// templateGenerationAnnotation is how apps/v1 serves a DaemonSet's spec.templateGeneration.
const templateGenerationAnnotation = "deprecated.daemonset.template.generation"

// kindBehaviours: the rules that differ by kind, as each type's REST strategy (or the custom
// resource strategy) sets them, and that a controller can observe: which updates bump
// metadata.generation, server-owned annotations, and which types refuse an update without a
// resourceVersion.
func kindBehaviours() []behaviour {
	return []behaviour{
		{"generation/config-map-has-none", func(t *testing.T, e *env) {
			created := e.create(t, ConfigMapGVR, configMap(e.ns, "no-gen", nil, map[string]string{"k": "1"}))
			set(t, created, "2", "data", "k")
			updated := e.update(t, ConfigMapGVR, created)
			require.Zero(t, created.GetGeneration(), "ConfigMaps have no generation")
			require.Zero(t, updated.GetGeneration(), "ConfigMaps have no generation")
		}},
		{"generation/deployment-bumps-on-spec-and-annotations-only", func(t *testing.T, e *env) {
			d := e.create(t, DeploymentGVR, deployment(e.ns, "gen", 1))
			require.EqualValues(t, 1, d.GetGeneration(), "create")

			d.SetLabels(map[string]string{"team": "a"})
			d = e.update(t, DeploymentGVR, d)
			require.EqualValues(t, 1, d.GetGeneration(), "a label change does not bump")

			set(t, d, int64(2), "spec", "replicas")
			d = e.update(t, DeploymentGVR, d)
			require.EqualValues(t, 2, d.GetGeneration(), "a spec change bumps")

			// The Deployment rule: annotations are copied to ReplicaSets, so they bump too.
			d.SetAnnotations(map[string]string{"note": "x"})
			d = e.update(t, DeploymentGVR, d)
			require.EqualValues(t, 3, d.GetGeneration(), "an annotation change bumps a Deployment")

			set(t, d, int64(7), "status", "observedGeneration")
			d, err := e.c.UpdateStatus(e.ctx, DeploymentGVR, d)
			require.NoError(t, err)
			require.EqualValues(t, 3, d.GetGeneration(), "a status update does not bump")
		}},
		{"generation/custom-resource-bumps-on-spec-only", func(t *testing.T, e *env) {
			c := e.create(t, ClusterGVR, cluster(e.name("gen")))
			require.EqualValues(t, 1, c.GetGeneration(), "create")

			c.SetLabels(map[string]string{"tier": "prod"})
			c.SetAnnotations(map[string]string{"note": "x"})
			c.SetGeneration(99)
			c = e.update(t, ClusterGVR, c)
			require.EqualValues(t, 1, c.GetGeneration(), "metadata changes do not bump a custom resource, and clients cannot set it")

			set(t, c, "us-east-1", "spec", "region")
			c = e.update(t, ClusterGVR, c)
			require.EqualValues(t, 2, c.GetGeneration(), "a spec change bumps")

			set(t, c, "v1.37.2", "status", "kubernetesVersion")
			c, err := e.c.UpdateStatus(e.ctx, ClusterGVR, c)
			require.NoError(t, err)
			require.EqualValues(t, 2, c.GetGeneration(), "a status update does not bump")
		}},
		{"generation/daemonset-template-generation-is-the-servers", func(t *testing.T, e *env) {
			ds := e.create(t, DaemonSetGVR, daemonSet(e.ns, "agent"))
			require.EqualValues(t, 1, ds.GetGeneration())
			require.Equal(t, "1", ds.GetAnnotations()[templateGenerationAnnotation], "create sets it")

			ds.SetAnnotations(map[string]string{templateGenerationAnnotation: "7", "note": "x"})
			ds = e.update(t, DaemonSetGVR, ds)
			require.Equal(t, "1", ds.GetAnnotations()[templateGenerationAnnotation], "clients cannot set it")
			require.Equal(t, "x", ds.GetAnnotations()["note"])
			require.EqualValues(t, 1, ds.GetGeneration(), "annotations do not bump a DaemonSet")

			ds.SetAnnotations(nil)
			ds = e.update(t, DaemonSetGVR, ds)
			require.Equal(t, "1", ds.GetAnnotations()[templateGenerationAnnotation], "nor remove it")

			set(t, ds, int64(5), "spec", "minReadySeconds")
			ds = e.update(t, DaemonSetGVR, ds)
			require.EqualValues(t, 2, ds.GetGeneration(), "a spec change bumps generation")
			require.Equal(t, "1", ds.GetAnnotations()[templateGenerationAnnotation], "but not the template generation")

			containers, _, _ := unstructured.NestedSlice(ds.Object, "spec", "template", "spec", "containers")
			containers[0].(map[string]any)["image"] = "registry.example/app:2"
			require.NoError(t, unstructured.SetNestedSlice(ds.Object, containers, "spec", "template", "spec", "containers"))
			ds = e.update(t, DaemonSetGVR, ds)
			require.EqualValues(t, 3, ds.GetGeneration())
			require.Equal(t, "2", ds.GetAnnotations()[templateGenerationAnnotation], "a template change bumps both")
		}},
		{"generation/endpointslice-bumps-on-labels", func(t *testing.T, e *env) {
			s := e.create(t, EndpointSliceGVR, endpointSlice(e.ns, "web-abcde"))
			require.EqualValues(t, 1, s.GetGeneration())
			s.SetAnnotations(map[string]string{"note": "x"})
			s = e.update(t, EndpointSliceGVR, s)
			require.EqualValues(t, 1, s.GetGeneration(), "an annotation change does not bump")
			s.SetLabels(map[string]string{"kubernetes.io/service-name": "web"})
			s = e.update(t, EndpointSliceGVR, s)
			require.EqualValues(t, 2, s.GetGeneration(), "a label change bumps an EndpointSlice")
		}},
		{"generation/priority-class-never-bumps", func(t *testing.T, e *env) {
			pc := e.create(t, PriorityClassGVR, priorityClass(e.name("prio"), 1000))
			require.EqualValues(t, 1, pc.GetGeneration())
			pc.Object["description"] = "changed"
			pc = e.update(t, PriorityClassGVR, pc)
			require.Equal(t, "changed", pc.Object["description"])
			require.EqualValues(t, 1, pc.GetGeneration(), "PriorityClass updates keep generation 1")
		}},
		{"update/without-resource-version-is-unconditional", func(t *testing.T, e *env) {
			created := e.create(t, ConfigMapGVR, configMap(e.ns, "uncond", nil, map[string]string{"k": "1"}))
			created.SetResourceVersion("")
			set(t, created, "2", "data", "k")
			updated := e.update(t, ConfigMapGVR, created)
			require.Equal(t, "2", str(updated, "data", "k"))
		}},
		{"update/custom-resource-requires-resource-version", func(t *testing.T, e *env) {
			created := e.create(t, ClusterGVR, cluster(e.name("needs-rv")))
			created.SetResourceVersion("")
			set(t, created, "us-east-1", "spec", "region")
			_, err := e.c.Update(e.ctx, ClusterGVR, created)
			require.Equal(t, []string{"metadata.resourceVersion"}, invalidFields(t, err), "custom resources refuse unconditional updates")
			require.Contains(t, err.Error(), "must be specified for an update")
			require.Equal(t, "eu-west-1", str(e.get(t, ClusterGVR, "", created.GetName()), "spec", "region"))
		}},
		{"update/lease-requires-resource-version", func(t *testing.T, e *env) {
			l := e.create(t, LeaseGVR, lease(e.ns, "leader", "a"))
			l.SetResourceVersion("")
			set(t, l, "b", "spec", "holderIdentity")
			_, err := e.c.Update(e.ctx, LeaseGVR, l)
			require.Equal(t, []string{"metadata.resourceVersion"}, invalidFields(t, err),
				"Leases, like custom resources, refuse unconditional updates")
			require.Equal(t, "a", str(e.get(t, LeaseGVR, e.ns, "leader"), "spec", "holderIdentity"))
		}},
		{"update/custom-resource-status-requires-resource-version", func(t *testing.T, e *env) {
			c := e.create(t, ClusterGVR, cluster(e.name("status-needs-rv")))
			c.SetResourceVersion("")
			set(t, c, "v1.37.2", "status", "kubernetesVersion")
			_, err := e.c.UpdateStatus(e.ctx, ClusterGVR, c)
			require.Equal(t, []string{"metadata.resourceVersion"}, invalidFields(t, err))
		}},
	}
}
