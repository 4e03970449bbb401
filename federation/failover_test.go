package federation_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
)

func TestValidateFailover(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{name: "absent"},
		{name: "valid", yaml: "purgeMode: Never\ngracePeriodSeconds: 0\napplication: {toleranceSeconds: 10, backoffSeconds: 0}"},
		{name: "unknown mode, negative seconds", yaml: "purgeMode: Sometimes\ngracePeriodSeconds: -1\napplication: {toleranceSeconds: -2, backoffSeconds: -3}",
			want: []string{
				"FieldValueNotSupported spec.placement.failover.purgeMode",
				"FieldValueInvalid spec.placement.failover.gracePeriodSeconds",
				"FieldValueInvalid spec.placement.failover.application.toleranceSeconds",
				"FieldValueInvalid spec.placement.failover.application.backoffSeconds",
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var p federation.Placement
			if tc.yaml != "" {
				p.Failover = &federation.Failover{}
				require.NoError(t, yaml.UnmarshalStrict([]byte(tc.yaml), p.Failover))
			}
			got := errorPaths(federation.ValidatePlacement(p, field.NewPath("spec", "placement")))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ValidatePlacement() paths (-want +got):\n%s", diff)
			}
			rsp := &federation.ReplicaSchedulingPreference{Spec: federation.ReplicaSchedulingPreferenceSpec{TargetKind: "FederatedDeployment", Failover: p.Failover}}
			var wantRSP []string
			for _, w := range tc.want {
				wantRSP = append(wantRSP, replacePrefix(w, "spec.placement.failover", "spec.failover"))
			}
			if diff := cmp.Diff(wantRSP, errorPaths(federation.ValidateReplicaSchedulingPreference(rsp))); diff != "" {
				t.Errorf("ValidateReplicaSchedulingPreference() paths (-want +got):\n%s", diff)
			}
		})
	}
}

func replacePrefix(s, old, repl string) string {
	for i := 0; i+len(old) <= len(s); i++ {
		if s[i:i+len(old)] == old {
			return s[:i] + repl + s[i+len(old):]
		}
	}
	return s
}

func TestEffectiveFailover(t *testing.T) {
	defaults := federation.Failover{PurgeMode: federation.PurgeGraciously, GracePeriodSeconds: ptr(federation.DefaultGracePeriodSeconds)}
	never := &federation.Failover{PurgeMode: federation.PurgeNever}
	short := &federation.Failover{GracePeriodSeconds: ptr[int32](30)}
	app := &federation.Failover{Application: &federation.ApplicationFailover{}}
	tests := []struct {
		name      string
		placement *federation.Failover
		rsp       *federation.Failover
		want      federation.Failover
	}{
		{name: "nothing: the defaults", want: defaults},
		{name: "the preference's when the placement has none", rsp: never,
			want: federation.Failover{PurgeMode: federation.PurgeNever, GracePeriodSeconds: ptr(federation.DefaultGracePeriodSeconds)}},
		{name: "the placement's wins, whole", placement: short, rsp: never,
			want: federation.Failover{PurgeMode: federation.PurgeGraciously, GracePeriodSeconds: ptr[int32](30)}},
		{name: "application timers defaulted", placement: app,
			want: federation.Failover{PurgeMode: federation.PurgeGraciously, GracePeriodSeconds: ptr(federation.DefaultGracePeriodSeconds),
				Application: &federation.ApplicationFailover{ToleranceSeconds: ptr(federation.DefaultApplicationToleranceSeconds), BackoffSeconds: ptr(federation.DefaultApplicationBackoffSeconds)}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := federation.Placement{Failover: tc.placement}
			var rsp *federation.ReplicaSchedulingPreference
			if tc.rsp != nil {
				rsp = &federation.ReplicaSchedulingPreference{Spec: federation.ReplicaSchedulingPreferenceSpec{Failover: tc.rsp}}
			}
			got := federation.EffectiveFailover(p, rsp)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("EffectiveFailover() (-want +got):\n%s", diff)
			}
			if tc.placement == app && app.GracePeriodSeconds != nil {
				t.Errorf("EffectiveFailover changed its input: %+v", app)
			}
		})
	}
}

func TestDefaultFailover(t *testing.T) {
	obj := &federation.FederatedObject{}
	obj.Spec.Placement.Failover = &federation.Failover{}
	federation.DefaultFederatedObject(obj)
	want := &federation.Failover{PurgeMode: federation.PurgeGraciously, GracePeriodSeconds: ptr(federation.DefaultGracePeriodSeconds)}
	if diff := cmp.Diff(want, obj.Spec.Placement.Failover); diff != "" {
		t.Errorf("DefaultFederatedObject placement.failover (-want +got):\n%s", diff)
	}
	rsp := &federation.ReplicaSchedulingPreference{}
	rsp.Spec.Failover = &federation.Failover{}
	federation.DefaultReplicaSchedulingPreference(rsp)
	if diff := cmp.Diff(want, rsp.Spec.Failover); diff != "" {
		t.Errorf("DefaultReplicaSchedulingPreference failover (-want +got):\n%s", diff)
	}
	none := &federation.FederatedObject{}
	federation.DefaultFederatedObject(none)
	if none.Spec.Placement.Failover != nil {
		t.Errorf("an absent failover must stay absent (the preference's may apply), got %+v", none.Spec.Placement.Failover)
	}
}

// TestPropagationBlocked: the reasons that say sync cannot write in a cluster block it (the
// scheduler gives it no new replicas); those that pass by themselves, or are about a
// deletion, and "" (in sync) do not.
func TestPropagationBlocked(t *testing.T) {
	for _, r := range []string{federation.PropagationClusterNotReady, federation.PropagationClusterUnreachable, federation.PropagationClusterNotFound,
		federation.PropagationCreationFailed, federation.PropagationUpdateFailed, federation.PropagationAlreadyExists, federation.PropagationManagedByOther,
		federation.PropagationRenderFailed, federation.PropagationTypeNotServed, federation.PropagationNamespaceTerminating, federation.PropagationNamespaceNotPlaced} {
		if !federation.PropagationBlocked(r) {
			t.Errorf("PropagationBlocked(%q) = false; want true", r)
		}
	}
	for _, r := range []string{"", "WaitingForNamespace", "WaitingForRemoval", "DeletionFailed", "NamespaceInUse"} {
		if federation.PropagationBlocked(r) {
			t.Errorf("PropagationBlocked(%q) = true; want false", r)
		}
	}
}
