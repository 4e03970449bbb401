package dependencies

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Kinds of dependency, each a core/v1 kind.
const (
	KindConfigMap             = "ConfigMap"
	KindSecret                = "Secret"
	KindServiceAccount        = "ServiceAccount"
	KindPersistentVolumeClaim = "PersistentVolumeClaim"
)

// Reference is one object a workload's template refers to, in the workload's namespace.
type Reference struct {
	// Kind is one of the Kind* constants.
	Kind string
	// Name is the referenced object's name.
	Name string
	// Optional is true when every reference to the object says optional: true; a missing
	// optional dependency is not an error.
	Optional bool
}

// String returns "Kind/name".
func (r Reference) String() string { return r.Kind + "/" + r.Name }

// Extractor returns what a federated object's template (spec.template: the member object
// without apiVersion, kind, name and namespace) refers to. It must be pure and must not panic
// on any input; an error names the field that could not be read.
type Extractor func(template map[string]any) ([]Reference, error)

// Builtin returns the extractors of the built-in workload kinds, keyed by target GVK:
// Deployment, StatefulSet, DaemonSet, ReplicaSet (apps/v1), Job, CronJob (batch/v1) and Pod
// (v1). Options.Extractors adds or replaces entries.
func Builtin() map[schema.GroupVersionKind]Extractor {
	apps := func(kind string) schema.GroupVersionKind {
		return schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: kind}
	}
	batch := func(kind string) schema.GroupVersionKind {
		return schema.GroupVersionKind{Group: "batch", Version: "v1", Kind: kind}
	}
	return map[schema.GroupVersionKind]Extractor{
		apps("Deployment"):  PodTemplateAt("spec", "template"),
		apps("StatefulSet"): statefulSet,
		apps("DaemonSet"):   PodTemplateAt("spec", "template"),
		apps("ReplicaSet"):  PodTemplateAt("spec", "template"),
		batch("Job"):        PodTemplateAt("spec", "template"),
		batch("CronJob"):    PodTemplateAt("spec", "jobTemplate", "spec", "template"),
		{Version: "v1", Kind: "Pod"}: func(template map[string]any) ([]Reference, error) {
			return podTemplate(template, "")
		},
	}
}

// PodTemplateAt returns the Extractor of a kind whose pod template (a PodTemplateSpec:
// metadata and spec) is at path in the template, as spec.template is for a Deployment. A
// custom workload kind with a pod template registers it in Options.Extractors.
func PodTemplateAt(path ...string) Extractor {
	return func(template map[string]any) ([]Reference, error) {
		tmpl, where, err := at(template, path)
		if err != nil || tmpl == nil {
			return nil, err
		}
		return podTemplate(tmpl, where+".")
	}
}

// statefulSet is spec.template's references, but not the PVCs spec.volumeClaimTemplates
// creates: the StatefulSet makes those itself in each cluster.
func statefulSet(template map[string]any) ([]Reference, error) {
	refs, err := PodTemplateAt("spec", "template")(template)
	if err != nil {
		return nil, err
	}
	claims, _, err := at(template, []string{"spec"})
	if err != nil || claims == nil {
		return refs, err
	}
	vcts, ok := claims["volumeClaimTemplates"].([]any)
	if !ok {
		return refs, nil
	}
	for _, v := range vcts {
		m, _ := v.(map[string]any)
		meta, _ := m["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		refs = slices.DeleteFunc(refs, func(r Reference) bool { return r.Kind == KindPersistentVolumeClaim && r.Name == name })
	}
	return refs, nil
}

// at returns the object at path, nil when a step is absent, or an error when a step is not an
// object.
func at(obj map[string]any, path []string) (map[string]any, string, error) {
	where := "spec.template"
	cur := obj
	for i, p := range path {
		where = "spec.template." + strings.Join(path[:i+1], ".")
		v, ok := cur[p]
		if !ok || v == nil {
			return nil, where, nil
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, where, fmt.Errorf("%s: want an object, got %T", where, v)
		}
		cur = m
	}
	return cur, where, nil
}

// podTemplate reads a PodTemplateSpec (or a Pod: metadata and spec) and returns its
// references. prefix names where it is, for errors.
func podTemplate(tmpl map[string]any, prefix string) (refs []Reference, err error) {
	raw, ok := tmpl["spec"]
	if !ok || raw == nil {
		return nil, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%sspec: want an object, got %T", prefix, raw)
	}
	var spec corev1.PodSpec
	if err := fromUnstructured(m, &spec); err != nil {
		return nil, fmt.Errorf("%sspec: %w", prefix, err)
	}
	return FromPodSpec(&spec), nil
}

// fromUnstructured converts, turning a panic of the converter on hostile input into an error:
// bad input never crashes a loop.
func fromUnstructured(m map[string]any, into any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("cannot decode: %v", r)
		}
	}()
	return runtime.DefaultUnstructuredConverter.FromUnstructured(m, into)
}

// FromPodSpec returns the ConfigMaps, Secrets, ServiceAccount and PersistentVolumeClaims spec
// refers to, sorted by kind and name, each once: volumes (configMap, secret, projected
// sources, persistentVolumeClaim, and the secretRefs of volume plugins), every container's
// env valueFrom and envFrom (init and ephemeral containers too), imagePullSecrets, and
// serviceAccountName unless it is empty or "default" (every namespace has that one). A
// reference is Optional only when every mention of the object is optional.
func FromPodSpec(spec *corev1.PodSpec) []Reference {
	var c collector
	for i := range spec.Volumes {
		c.volume(&spec.Volumes[i])
	}
	for i := range spec.InitContainers {
		c.container(spec.InitContainers[i].Env, spec.InitContainers[i].EnvFrom)
	}
	for i := range spec.Containers {
		c.container(spec.Containers[i].Env, spec.Containers[i].EnvFrom)
	}
	for i := range spec.EphemeralContainers {
		c.container(spec.EphemeralContainers[i].Env, spec.EphemeralContainers[i].EnvFrom)
	}
	for _, s := range spec.ImagePullSecrets {
		c.add(KindSecret, s.Name, nil)
	}
	sa := spec.ServiceAccountName
	if sa == "" {
		sa = spec.DeprecatedServiceAccount
	}
	if sa != "default" {
		c.add(KindServiceAccount, sa, nil)
	}
	return c.sorted()
}

// collector gathers references, each once.
type collector struct{ refs []Reference }

func (c *collector) add(kind, name string, optional *bool) {
	if name == "" {
		return
	}
	opt := optional != nil && *optional
	for i := range c.refs {
		if c.refs[i].Kind == kind && c.refs[i].Name == name {
			c.refs[i].Optional = c.refs[i].Optional && opt
			return
		}
	}
	c.refs = append(c.refs, Reference{Kind: kind, Name: name, Optional: opt})
}

func (c *collector) secretRef(r *corev1.LocalObjectReference) {
	if r != nil {
		c.add(KindSecret, r.Name, nil)
	}
}

func (c *collector) volume(v *corev1.Volume) {
	switch {
	case v.ConfigMap != nil:
		c.add(KindConfigMap, v.ConfigMap.Name, v.ConfigMap.Optional)
	case v.Secret != nil:
		c.add(KindSecret, v.Secret.SecretName, v.Secret.Optional)
	case v.PersistentVolumeClaim != nil:
		c.add(KindPersistentVolumeClaim, v.PersistentVolumeClaim.ClaimName, nil)
	case v.Projected != nil:
		for _, s := range v.Projected.Sources {
			if s.ConfigMap != nil {
				c.add(KindConfigMap, s.ConfigMap.Name, s.ConfigMap.Optional)
			}
			if s.Secret != nil {
				c.add(KindSecret, s.Secret.Name, s.Secret.Optional)
			}
		}
	case v.CSI != nil:
		c.secretRef(v.CSI.NodePublishSecretRef)
	case v.CephFS != nil:
		c.secretRef(v.CephFS.SecretRef)
	case v.Cinder != nil:
		c.secretRef(v.Cinder.SecretRef)
	case v.FlexVolume != nil:
		c.secretRef(v.FlexVolume.SecretRef)
	case v.RBD != nil:
		c.secretRef(v.RBD.SecretRef)
	case v.ISCSI != nil:
		c.secretRef(v.ISCSI.SecretRef)
	case v.ScaleIO != nil:
		c.secretRef(v.ScaleIO.SecretRef)
	case v.StorageOS != nil:
		c.secretRef(v.StorageOS.SecretRef)
	case v.AzureFile != nil:
		c.add(KindSecret, v.AzureFile.SecretName, nil)
	}
}

func (c *collector) container(env []corev1.EnvVar, envFrom []corev1.EnvFromSource) {
	for _, e := range env {
		if e.ValueFrom == nil {
			continue
		}
		if r := e.ValueFrom.ConfigMapKeyRef; r != nil {
			c.add(KindConfigMap, r.Name, r.Optional)
		}
		if r := e.ValueFrom.SecretKeyRef; r != nil {
			c.add(KindSecret, r.Name, r.Optional)
		}
	}
	for _, e := range envFrom {
		if r := e.ConfigMapRef; r != nil {
			c.add(KindConfigMap, r.Name, r.Optional)
		}
		if r := e.SecretRef; r != nil {
			c.add(KindSecret, r.Name, r.Optional)
		}
	}
}

func (c *collector) sorted() []Reference {
	slices.SortFunc(c.refs, compareRefs)
	return c.refs
}

func compareRefs(a, b Reference) int {
	return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name))
}
