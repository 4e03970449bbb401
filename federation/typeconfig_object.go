package federation

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// FederatedTypeConfigGVR addresses FederatedTypeConfigs (cluster-scoped) on the host.
var FederatedTypeConfigGVR = CoreGroupVersion.WithResource("federatedtypeconfigs")

// Scopes of an [APIResource].
const (
	ScopeNamespaced = "Namespaced"
	ScopeCluster    = "Cluster"
)

// TypeConfigName is the name of t's FederatedTypeConfig: the target's resource and group,
// "widgets.example.com", "deployments.apps", or the resource alone for the core group.
func TypeConfigName(t TypeConfig) string {
	if t.Target.Group == "" {
		return t.TargetResource
	}
	return t.TargetResource + "." + t.Target.Group
}

// NewFederatedTypeConfig returns the FederatedTypeConfig that enables t.
func NewFederatedTypeConfig(t TypeConfig) *FederatedTypeConfig {
	scope := ScopeCluster
	if t.Namespaced {
		scope = ScopeNamespaced
	}
	fedScope := ScopeCluster
	if t.FederatedNamespaced() {
		fedScope = ScopeNamespaced
	}
	ftc := &FederatedTypeConfig{Spec: FederatedTypeConfigSpec{
		TargetType: APIResource{Group: t.Target.Group, Version: t.Target.Version, Kind: t.Target.Kind, PluralName: t.TargetResource, Scope: scope},
		FederatedType: &APIResource{Group: t.Federated.Group, Version: t.Federated.Version, Kind: t.Federated.Kind,
			PluralName: t.FederatedResource, Scope: fedScope},
		ReplicasPath: t.ReplicasPath,
		Rules:        t.Rules.DeepCopy(),
	}}
	ftc.APIVersion, ftc.Kind = CoreGroupVersion.WithKind("FederatedTypeConfig").ToAPIVersionAndKind()
	ftc.Name = TypeConfigName(t)
	return ftc
}

// TypeConfig returns the TypeConfig the FederatedTypeConfig describes, checked: an error
// wrapping ErrUnknownType names the field that is missing or wrong. Its name must be
// [TypeConfigName]'s, so one target type has one configuration.
func (c *FederatedTypeConfig) TypeConfig() (TypeConfig, error) {
	tt := c.Spec.TargetType
	if tt.Scope != ScopeNamespaced && tt.Scope != ScopeCluster {
		return TypeConfig{}, fmt.Errorf("%w: spec.targetType.scope %q: want %s or %s", ErrUnknownType, tt.Scope, ScopeNamespaced, ScopeCluster)
	}
	t := NewTypeConfig(schema.GroupVersionKind{Group: tt.Group, Version: tt.Version, Kind: tt.Kind}, tt.PluralName, tt.Scope == ScopeNamespaced, c.Spec.ReplicasPath)
	if ft := c.Spec.FederatedType; ft != nil {
		t.Federated = schema.GroupVersionKind{Group: ft.Group, Version: ft.Version, Kind: ft.Kind}
		t.FederatedResource = ft.PluralName
		want := ScopeCluster
		if t.FederatedNamespaced() {
			want = ScopeNamespaced
		}
		if ft.Scope != want {
			return TypeConfig{}, fmt.Errorf("%w: spec.federatedType.scope %q: a %s target's Federated<Kind> is %s", ErrUnknownType, ft.Scope, tt.Scope, want)
		}
	}
	t.Rules = c.Spec.Rules.DeepCopy()
	if err := t.Validate(); err != nil {
		return TypeConfig{}, err
	}
	if p := c.Spec.ReplicasPath; p != "" && (strings.HasPrefix(p, ".") || strings.HasSuffix(p, ".") || strings.Contains(p, "..")) {
		return TypeConfig{}, fmt.Errorf("%w: spec.replicasPath %q: want a dotted path such as spec.replicas", ErrUnknownType, p)
	}
	if want := TypeConfigName(t); c.Name != want {
		return TypeConfig{}, fmt.Errorf("%w: metadata.name %q: a configuration of %s is named %q", ErrUnknownType, c.Name, t.Target.Kind, want)
	}
	return t, nil
}
