package override_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/override"
)

func entry(t *testing.T, y string) federation.ClusterOverride {
	t.Helper()
	var o federation.ClusterOverride
	require.NoError(t, yaml.UnmarshalStrict([]byte(y), &o))
	return o
}

// TestOps checks what typed overriders render to: the operations are the contract between
// the typed API and the one application path.
func TestOps(t *testing.T) {
	tests := []struct {
		name  string
		entry string
		want  string // YAML list of operations
	}{
		{
			name:  "replicas",
			entry: `{clusterName: a, replicas: 2}`,
			want:  `[{op: add, path: /spec/replicas, value: 2}]`,
		},
		{
			name:  "images compose: registry for all, then a tag for one",
			entry: `{clusterName: a, images: [{registry: m.io}, {containerName: app, tag: "2"}]}`,
			want: `
- {op: replace, path: /spec/template/spec/containers/0/image, value: "m.io/library/nginx:1.27"}
- {op: replace, path: /spec/template/spec/containers/1/image, value: m.io/library/envoy}
- {op: replace, path: /spec/template/spec/containers/0/image, value: "m.io/library/nginx:2"}`,
		},
		{
			name:  "an image override that changes nothing renders nothing",
			entry: `{clusterName: a, images: [{containerName: app, tag: "1.27"}]}`,
			want:  `[]`,
		},
		{
			name:  "containers: command, args, env set and remove",
			entry: `{clusterName: a, containers: [{name: sidecar, command: [/bin/envoy], args: [-l, debug], env: [{name: A, value: "1"}, {name: B, value: "2"}]}]}`,
			want: `
- {op: add, path: /spec/template/spec/containers/1/command, value: [/bin/envoy]}
- {op: add, path: /spec/template/spec/containers/1/args, value: [-l, debug]}
- {op: add, path: /spec/template/spec/containers/1/env, value: [{name: A, value: "1"}]}
- {op: add, path: /spec/template/spec/containers/1/env/-, value: {name: B, value: "2"}}`,
		},
		{
			name:  "labels set in key order, remove only present keys",
			entry: `{clusterName: a, labels: {set: {z: "1", app.kubernetes.io/part-of: shop}, remove: [app, absent]}}`,
			want: `
- {op: add, path: /metadata/labels/app.kubernetes.io~1part-of, value: shop}
- {op: add, path: /metadata/labels/z, value: "1"}
- {op: remove, path: /metadata/labels/app}`,
		},
		{
			name:  "annotations on an object without any",
			entry: `{clusterName: a, annotations: {set: {note: hi}}}`,
			want:  `[{op: add, path: /metadata/annotations, value: {note: hi}}]`,
		},
		{
			name:  "typed first, raw last",
			entry: `{clusterName: a, replicas: 1, clusterOverrides: [{path: /spec/replicas, value: 7}]}`,
			want: `
- {op: add, path: /spec/replicas, value: 1}
- {op: replace, path: /spec/replicas, value: 7}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := obj(t, deployment)
			before := u.DeepCopy()
			got, err := override.Ops(u, entry(t, tc.entry), federation.DeploymentType)
			require.NoError(t, err)
			want := ops(t, tc.want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Ops() mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before.Object, u.Object); diff != "" {
				t.Errorf("Ops() changed its input (-before +after):\n%s", diff)
			}
			// Applying the rendered operations gives what ApplyOverride gives.
			viaOps, viaEntry := u.DeepCopy(), u.DeepCopy()
			require.NoError(t, override.Apply(viaOps, got))
			require.NoError(t, override.ApplyOverride(viaEntry, entry(t, tc.entry), federation.DeploymentType))
			if diff := cmp.Diff(viaEntry.Object, viaOps.Object); diff != "" {
				t.Errorf("Apply(Ops()) differs from ApplyOverride (-entry +ops):\n%s", diff)
			}
		})
	}
}

func TestTypedOverriderErrors(t *testing.T) {
	tests := []struct {
		name, object, entry string
		wantErr             error
		wantPath            string
	}{
		{name: "unknown container", object: deployment, entry: `{clusterName: a, containers: [{name: nope, args: [x]}]}`, wantErr: override.ErrContainerNotFound, wantPath: "/spec/template/spec/containers"},
		{name: "image for an unknown container", object: deployment, entry: `{clusterName: a, images: [{containerName: nope, tag: x}]}`, wantErr: override.ErrContainerNotFound},
		{name: "image for a kind without pods", object: `{apiVersion: v1, kind: ConfigMap, metadata: {name: c}}`, entry: `{clusterName: a, images: [{tag: x}]}`, wantErr: override.ErrContainerNotFound},
		{name: "unparsable image is an error, not skipped", object: `{kind: Pod, spec: {containers: [{name: a, image: "UPPER/Case"}]}}`, entry: `{clusterName: a, images: [{tag: x}]}`, wantErr: override.ErrInvalidImage, wantPath: "/spec/containers/0/image"},
		{name: "container without image", object: `{kind: Pod, spec: {containers: [{name: a}]}}`, entry: `{clusterName: a, images: [{tag: x}]}`, wantErr: override.ErrInvalidImage},
		{name: "bad tag in the override", object: deployment, entry: `{clusterName: a, images: [{tag: "a b"}]}`, wantErr: override.ErrInvalidImage},
		{name: "negative replicas", object: deployment, entry: `{clusterName: a, replicas: -1}`, wantErr: override.ErrInvalidOverride},
		{name: "raw op fails after typed ones: nothing applied", object: deployment, entry: `{clusterName: a, replicas: 1, clusterOverrides: [{op: remove, path: /nope}]}`, wantErr: override.ErrPathNotFound, wantPath: "/nope"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := obj(t, tc.object)
			before := u.DeepCopy()
			err := override.ApplyOverride(u, entry(t, tc.entry), federation.DeploymentType)
			require.ErrorIs(t, err, tc.wantErr)
			var pe *override.PathError
			require.ErrorAs(t, err, &pe)
			if tc.wantPath != "" {
				require.Equal(t, tc.wantPath, pe.Path)
			}
			if diff := cmp.Diff(before.Object, u.Object); diff != "" {
				t.Errorf("a failed ApplyOverride changed the object (-before +after):\n%s", diff)
			}
		})
	}
}

func TestCronJobAndPodSpecs(t *testing.T) {
	cron := obj(t, `{apiVersion: batch/v1, kind: CronJob, metadata: {name: c}, spec: {jobTemplate: {spec: {template: {spec: {containers: [{name: a, image: busybox}]}}}}}}`)
	require.NoError(t, override.ApplyOverride(cron, entry(t, `{clusterName: x, images: [{registry: m.io}]}`), federation.JobType))
	require.Equal(t, "m.io/library/busybox", cron.Object["spec"].(map[string]any)["jobTemplate"].(map[string]any)["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"])
}
