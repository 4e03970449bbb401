package federation

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// AddToScheme registers the core group (Cluster, ReplicaSchedulingPreference, the propagation
// policies) and the
// Federated<Kind> of every built-in TypeConfig with s. Register the federated kinds of your own
// types with [AddFederatedKind]. DNS types register through package dnsrecord.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(CoreGroupVersion,
		&Cluster{}, &ClusterList{},
		&Assignment{}, &AssignmentList{},
		&ReplicaSchedulingPreference{}, &ReplicaSchedulingPreferenceList{},
		&PropagationPolicy{}, &PropagationPolicyList{},
		&ClusterPropagationPolicy{}, &ClusterPropagationPolicyList{},
		&FederatedTypeConfig{}, &FederatedTypeConfigList{},
	)
	metav1.AddToGroupVersion(s, CoreGroupVersion)
	for _, t := range BuiltinTypes() {
		if err := AddFederatedKind(s, t); err != nil {
			return err
		}
	}
	return nil
}

// AddFederatedKind registers t's Federated<Kind> and Federated<Kind>List with s, both backed by
// [FederatedObject].
func AddFederatedKind(s *runtime.Scheme, t TypeConfig) error {
	if err := t.Validate(); err != nil {
		return err
	}
	s.AddKnownTypeWithName(t.Federated, &FederatedObject{})
	s.AddKnownTypeWithName(t.Federated.GroupVersion().WithKind(t.Federated.Kind+"List"), &FederatedObjectList{})
	metav1.AddToGroupVersion(s, t.Federated.GroupVersion())
	return nil
}

// ToUnstructured converts a typed object (Cluster, ReplicaSchedulingPreference,
// FederatedObject, or any API type) to unstructured. Cluster and ReplicaSchedulingPreference get
// their apiVersion and kind filled in when empty; a FederatedObject must have its kind set (it
// is Federated<Kind> for some Kind).
func ToUnstructured(obj runtime.Object) (*unstructured.Unstructured, error) {
	switch o := obj.(type) {
	case *Cluster:
		if o.Kind == "" {
			o = o.DeepCopy()
			o.APIVersion, o.Kind = ClusterGVK.ToAPIVersionAndKind()
			obj = o
		}
	case *ReplicaSchedulingPreference:
		if o.Kind == "" {
			o = o.DeepCopy()
			o.APIVersion, o.Kind = ReplicaSchedulingPreferenceGVK.ToAPIVersionAndKind()
			obj = o
		}
	case *PropagationPolicy:
		if o.Kind == "" {
			o = o.DeepCopy()
			o.APIVersion, o.Kind = PropagationPolicyGVK.ToAPIVersionAndKind()
			obj = o
		}
	case *ClusterPropagationPolicy:
		if o.Kind == "" {
			o = o.DeepCopy()
			o.APIVersion, o.Kind = ClusterPropagationPolicyGVK.ToAPIVersionAndKind()
			obj = o
		}
	case *FederatedObject:
		if o.Kind == "" {
			return nil, fmt.Errorf("%w: federated object %s/%s has no kind", ErrInvalidObject, o.Namespace, o.Name)
		}
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidObject, err)
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// FromUnstructured converts u into the typed object into (a pointer to an API struct). It
// returns an error wrapping ErrInvalidObject, naming the object, when a field has the wrong type.
func FromUnstructured(u *unstructured.Unstructured, into runtime.Object) error {
	if u == nil {
		return fmt.Errorf("%w: nil object", ErrInvalidObject)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
		return fmt.Errorf("%w: %s %s: %v", ErrInvalidObject, u.GetKind(), objectName(u.GetNamespace(), u.GetName()), err)
	}
	return nil
}

// FederatedObjectFromUnstructured converts a Federated<Kind> object.
func FederatedObjectFromUnstructured(u *unstructured.Unstructured) (*FederatedObject, error) {
	out := &FederatedObject{}
	if err := FromUnstructured(u, out); err != nil {
		return nil, err
	}
	return out, nil
}

// ClusterFromUnstructured converts a Cluster object.
func ClusterFromUnstructured(u *unstructured.Unstructured) (*Cluster, error) {
	out := &Cluster{}
	if err := FromUnstructured(u, out); err != nil {
		return nil, err
	}
	return out, nil
}

// ReplicaSchedulingPreferenceFromUnstructured converts a ReplicaSchedulingPreference object.
func ReplicaSchedulingPreferenceFromUnstructured(u *unstructured.Unstructured) (*ReplicaSchedulingPreference, error) {
	out := &ReplicaSchedulingPreference{}
	if err := FromUnstructured(u, out); err != nil {
		return nil, err
	}
	return out, nil
}

// PropagationPolicyFromUnstructured converts a PropagationPolicy object.
func PropagationPolicyFromUnstructured(u *unstructured.Unstructured) (*PropagationPolicy, error) {
	out := &PropagationPolicy{}
	if err := FromUnstructured(u, out); err != nil {
		return nil, err
	}
	return out, nil
}

// ClusterPropagationPolicyFromUnstructured converts a ClusterPropagationPolicy object.
func ClusterPropagationPolicyFromUnstructured(u *unstructured.Unstructured) (*ClusterPropagationPolicy, error) {
	out := &ClusterPropagationPolicy{}
	if err := FromUnstructured(u, out); err != nil {
		return nil, err
	}
	return out, nil
}

func objectName(namespace, name string) string {
	return Key{Namespace: namespace, Name: name}.String()
}
