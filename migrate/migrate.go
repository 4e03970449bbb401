package migrate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/internal/manifest"
)

// DefaultSecretNamespace is where fedkit's ClusterSet reads Cluster Secrets unless told
// otherwise (federation/kube's DefaultNamespace).
const DefaultSecretNamespace = "fedkit-system"

// tokenKey is the key of a Cluster Secret fedkit reads (federation/kube's TokenKey), and the
// one KubeFed's join wrote.
const tokenKey = "token"

// ErrInvalidInput is wrapped by the errors of [Decode]: a document that is not YAML or JSON,
// or an object without apiVersion or kind.
var ErrInvalidInput = errors.New("invalid KubeFed input")

// Options tune a conversion. The zero value is the default.
type Options struct {
	// SecretNamespace is the namespace the converted Cluster Secrets go to: the one fedkit's
	// ClusterSet reads ("" means DefaultSecretNamespace).
	SecretNamespace string
}

// Warning is something of a KubeFed object that fedkit does not carry over, or carries over
// differently. Object names the KubeFed object ("KubeFedCluster kube-federation-system/a"),
// Field its field ("spec.disabledTLSValidations"; "" for the whole object).
type Warning struct {
	Object  string
	Field   string
	Message string
}

func (w Warning) String() string {
	if w.Field == "" {
		return w.Object + ": " + w.Message
	}
	return w.Object + ": " + w.Field + ": " + w.Message
}

// Result is what a conversion produced, each list in input order.
type Result struct {
	Clusters    []federation.Cluster
	Secrets     []corev1.Secret // the converted Secrets of KubeFedClusters found in the input
	Preferences []federation.ReplicaSchedulingPreference
	Federated   []federation.FederatedObject
	// TypeConfigs are the FederatedTypeConfigs as Go values: fedkit has no type-config
	// object; an embedder constructs one loop set per TypeConfig.
	TypeConfigs []federation.TypeConfig
	Warnings    []Warning
}

// Decode reads a multi-document YAML or JSON stream (a List is flattened) into objects, as
// kubectl reads -f and strictly: a key twice in one mapping (often a missing "---") is an
// error naming the document and its line. Fields fedkit does not carry over are not errors
// here; Convert warns about them.
func Decode(r io.Reader) ([]*unstructured.Unstructured, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidInput, err)
	}
	docs, err := manifest.Split(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidInput, err)
	}
	var out []*unstructured.Unstructured
	for _, d := range docs {
		items := []manifest.Document{d}
		if d.Object.IsList() {
			if items, err = d.Items(); err != nil {
				return nil, fmt.Errorf("%w: %v", ErrInvalidInput, err)
			}
		}
		for _, it := range items {
			if it.Object.GetAPIVersion() == "" || it.Object.GetKind() == "" {
				return nil, fmt.Errorf("%w: document %d has no apiVersion or kind", ErrInvalidInput, it.Index)
			}
			out = append(out, it.Object)
		}
	}
	return out, nil
}

// Convert converts every KubeFed object of objs. Secrets named by a KubeFedCluster's
// spec.secretRef (in the KubeFedCluster's namespace) are converted with it; any other object
// is left out with a warning. An object that does not decode is left out with a warning
// naming it and the field.
func Convert(objs []*unstructured.Unstructured, opts Options) Result {
	if opts.SecretNamespace == "" {
		opts.SecretNamespace = DefaultSecretNamespace
	}
	var res Result
	secrets := map[string]*unstructured.Unstructured{} // namespace/name
	for _, u := range objs {
		if u.GetAPIVersion() == "v1" && u.GetKind() == "Secret" {
			secrets[u.GetNamespace()+"/"+u.GetName()] = u
		}
	}
	rsps := map[string]bool{} // targetKind namespace/name of each RSP
	for _, u := range objs {
		if u.GetAPIVersion() == KubeFedSchedulingGroupVersion && u.GetKind() == "ReplicaSchedulingPreference" {
			tk, _, _ := unstructured.NestedString(u.Object, "spec", "targetKind")
			rsps[tk+" "+u.GetNamespace()+"/"+u.GetName()] = true
		}
	}
	used := map[string]bool{}
	for _, u := range objs {
		what := describe(u)
		var ws []Warning
		var err error
		switch gv, kind := u.GetAPIVersion(), u.GetKind(); {
		case gv == KubeFedCoreGroupVersion && kind == "KubeFedCluster":
			var c *federation.Cluster
			c, ws, err = ClusterFrom(u)
			if err != nil {
				break
			}
			res.Clusters = append(res.Clusters, *c)
			ref := u.GetNamespace() + "/" + c.Spec.SecretRef.Name
			if s, ok := secrets[ref]; ok {
				sec, sws, serr := SecretFrom(s, c.Name, opts.SecretNamespace)
				if serr != nil {
					ws = append(ws, Warning{what, "spec.secretRef", serr.Error()})
					break
				}
				used[ref] = true
				res.Secrets = append(res.Secrets, *sec)
				ws = append(ws, sws...)
			} else {
				ws = append(ws, Warning{what, "spec.secretRef", fmt.Sprintf("Secret %s is not in the input: copy it to namespace %s with label %s=%s, keeping its \"token\" key", ref, opts.SecretNamespace, federation.SecretClusterLabel, c.Name)})
			}
		case gv == KubeFedCoreGroupVersion && kind == "FederatedTypeConfig":
			var t federation.TypeConfig
			t, ws, err = TypeConfigFrom(u)
			if err == nil {
				res.TypeConfigs = append(res.TypeConfigs, t)
			}
		case gv == KubeFedSchedulingGroupVersion && kind == "ReplicaSchedulingPreference":
			var p *federation.ReplicaSchedulingPreference
			p, ws, err = PreferenceFrom(u)
			if err == nil {
				res.Preferences = append(res.Preferences, *p)
			}
		case gv == KubeFedTypesGroupVersion && strings.HasPrefix(kind, "Federated"):
			var f *federation.FederatedObject
			f, ws, err = FederatedFrom(u, rsps[kind+" "+u.GetNamespace()+"/"+u.GetName()])
			if err == nil {
				res.Federated = append(res.Federated, *f)
			}
		case gv == "v1" && kind == "Secret":
			continue // converted with its KubeFedCluster, or reported below
		default:
			ws = []Warning{{what, "", "not a KubeFed v0.10 object this package converts; left out"}}
		}
		if err != nil {
			ws = append(ws, Warning{what, "", "not converted: " + err.Error()})
		}
		res.Warnings = append(res.Warnings, ws...)
	}
	for _, u := range objs {
		ref := u.GetNamespace() + "/" + u.GetName()
		if u.GetAPIVersion() == "v1" && u.GetKind() == "Secret" && !used[ref] {
			res.Warnings = append(res.Warnings, Warning{describe(u), "", "no KubeFedCluster of the input names this Secret; left out"})
		}
	}
	return res
}

// Objects returns the converted objects in an order that applies cleanly (Secrets, Clusters,
// preferences, federated objects). TypeConfigs are Go values and are not among them.
func (r Result) Objects() []runtime.Object {
	var out []runtime.Object
	for i := range r.Secrets {
		out = append(out, &r.Secrets[i])
	}
	for i := range r.Clusters {
		out = append(out, &r.Clusters[i])
	}
	for i := range r.Preferences {
		out = append(out, &r.Preferences[i])
	}
	for i := range r.Federated {
		out = append(out, &r.Federated[i])
	}
	return out
}

// YAML writes Objects as one multi-document YAML stream.
func (r Result) YAML() ([]byte, error) {
	var buf bytes.Buffer
	for i, o := range r.Objects() {
		b, err := yaml.Marshal(o)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(b)
	}
	return buf.Bytes(), nil
}

func describe(u *unstructured.Unstructured) string {
	if u.GetNamespace() == "" {
		return u.GetKind() + " " + u.GetName()
	}
	return u.GetKind() + " " + u.GetNamespace() + "/" + u.GetName()
}

// decode reads u into out and reports the fields out does not know as one warning.
func decode(u *unstructured.Unstructured, out any) ([]Warning, error) {
	data, err := json.Marshal(u.Object)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, out); err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(out); err != nil {
		return []Warning{{describe(u), "", "not carried over: " + err.Error()}}, nil
	}
	return nil, nil
}

// decodeMeta decodes u into out, as decode does, and returns the metadata that carries over
// from *m (out's own ObjectMeta), as meta does, with the warnings of both.
func decodeMeta(u *unstructured.Unstructured, out any, m *metav1.ObjectMeta, namespaced bool) (metav1.ObjectMeta, []Warning, error) {
	ws, err := decode(u, out)
	if err != nil {
		return metav1.ObjectMeta{}, nil, err
	}
	md, mws := meta(*m, namespaced, describe(u))
	return md, append(ws, mws...), nil
}

// meta is the metadata that carries over: name, namespace, labels, and the annotations that
// are not KubeFed's own (their keys contain "kubefed.io"). Finalizers, owner references and
// the server's fields do not.
func meta(m metav1.ObjectMeta, namespaced bool, what string) (metav1.ObjectMeta, []Warning) {
	out := metav1.ObjectMeta{Name: m.Name, Labels: m.Labels}
	if namespaced {
		out.Namespace = m.Namespace
	}
	var ws []Warning
	var dropped []string
	for k, v := range m.Annotations {
		if strings.Contains(k, "kubefed.io") || k == corev1.LastAppliedConfigAnnotation {
			dropped = append(dropped, k)
			continue
		}
		if out.Annotations == nil {
			out.Annotations = map[string]string{}
		}
		out.Annotations[k] = v
	}
	if len(dropped) > 0 {
		sort.Strings(dropped)
		ws = append(ws, Warning{what, "metadata.annotations", "dropped " + strings.Join(dropped, ", ")})
	}
	if len(m.Finalizers) > 0 {
		ws = append(ws, Warning{what, "metadata.finalizers", "dropped " + strings.Join(m.Finalizers, ", ") + " (fedkit adds its own)"})
	}
	if len(m.OwnerReferences) > 0 {
		ws = append(ws, Warning{what, "metadata.ownerReferences", "dropped: the owners' UIDs do not carry over"})
	}
	return out, ws
}

// ClusterFrom converts a KubeFedCluster. fedkit's Cluster is cluster-scoped; its Secret lives
// in the ClusterSet's namespace (see [SecretFrom]).
func ClusterFrom(u *unstructured.Unstructured) (*federation.Cluster, []Warning, error) {
	var in kubeFedCluster
	m, ws, err := decodeMeta(u, &in, &in.ObjectMeta, false)
	if err != nil {
		return nil, nil, err
	}
	what := describe(u)
	c := &federation.Cluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: federation.CoreGroupVersion.String(), Kind: "Cluster"},
		ObjectMeta: m,
		Spec: federation.ClusterSpec{
			APIEndpoint: in.Spec.APIEndpoint,
			CABundle:    in.Spec.CABundle,
			ProxyURL:    in.Spec.ProxyURL,
		},
	}
	if in.Spec.SecretRef.Name != "" {
		c.Spec.SecretRef = &federation.LocalSecretReference{Name: in.Spec.SecretRef.Name}
	}
	for _, v := range in.Spec.DisabledTLSValidations {
		if v == "*" {
			c.Spec.InsecureSkipTLSVerify = true
			continue
		}
		ws = append(ws, Warning{what, "spec.disabledTLSValidations", fmt.Sprintf("%q is not carried over: fedkit verifies the certificate fully unless every check is off (\"*\")", v)})
	}
	if len(in.Status) > 0 && string(in.Status) != "{}" && string(in.Status) != "null" {
		ws = append(ws, Warning{what, "status", "not carried over: the cluster monitor recomputes it"})
	}
	for _, e := range federation.ValidateCluster(c) {
		ws = append(ws, Warning{what, e.Field, "invalid in fedkit: " + e.ErrorBody()})
	}
	return c, ws, nil
}

// SecretFrom converts a KubeFedCluster's Secret into fedkit's for Cluster cluster: moved to
// namespace, labelled with federation.SecretClusterLabel, its "token" key kept (KubeFed's
// "ca.crt" is dropped: the CA is the Cluster's spec.caBundle in both).
func SecretFrom(u *unstructured.Unstructured, cluster, namespace string) (*corev1.Secret, []Warning, error) {
	var in corev1.Secret
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &in); err != nil {
		return nil, nil, err
	}
	what := describe(u)
	tok, ok := in.Data[tokenKey]
	if !ok || len(bytes.TrimSpace(tok)) == 0 {
		return nil, nil, fmt.Errorf("the Secret %s/%s has no %q key", in.Namespace, in.Name, tokenKey)
	}
	m, ws := meta(in.ObjectMeta, true, what)
	m.Namespace = namespace
	if m.Labels == nil {
		m.Labels = map[string]string{}
	}
	m.Labels[federation.SecretClusterLabel] = cluster
	var dropped []string
	for k := range in.Data {
		if k != tokenKey {
			dropped = append(dropped, k)
		}
	}
	if len(dropped) > 0 {
		sort.Strings(dropped)
		ws = append(ws, Warning{what, "data", "dropped keys " + strings.Join(dropped, ", ") + " (fedkit reads \"token\"; the CA is the Cluster's spec.caBundle)"})
	}
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: m,
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{tokenKey: tok},
	}, ws, nil
}

// TypeConfigFrom converts a FederatedTypeConfig into the TypeConfig an embedder constructs its
// loops with. The replica path is spec.replicas for the built-in types KubeFed scheduled
// (Deployment, ReplicaSet) and the other built-in divisible ones; any other type is copied
// whole.
func TypeConfigFrom(u *unstructured.Unstructured) (federation.TypeConfig, []Warning, error) {
	var in kubeFedTypeConfig
	ws, err := decode(u, &in)
	if err != nil {
		return federation.TypeConfig{}, nil, err
	}
	what := describe(u)
	tt := in.Spec.TargetType
	if tt.Kind == "" || tt.Version == "" {
		return federation.TypeConfig{}, nil, errors.New("spec.targetType: kind and version are required")
	}
	plural := tt.PluralName
	if plural == "" { // KubeFed defaults it from the object's name, <plural>.<group>
		plural, _, _ = strings.Cut(in.Name, ".")
	}
	gvk := schema.GroupVersionKind{Group: tt.Group, Version: tt.Version, Kind: tt.Kind}
	replicas := ""
	if b, ok := federation.BuiltinTypeFor(tt.Kind); ok && b.Target == gvk {
		replicas = b.ReplicasPath
	}
	t := federation.NewTypeConfig(gvk, plural, tt.Scope != "Cluster", replicas)
	if ft := in.Spec.FederatedType; ft.Kind != t.Federated.Kind || ft.Group != federation.TypesGroupVersion.Group && ft.Group != "types.kubefed.io" {
		ws = append(ws, Warning{what, "spec.federatedType", fmt.Sprintf("%s.%s becomes %s in %s: fedkit names every federated type Federated<Kind> in one group", ft.Kind, ft.Group, t.Federated.Kind, federation.TypesGroupVersion)})
	}
	if in.Spec.Propagation == "Disabled" {
		ws = append(ws, Warning{what, "spec.propagation", "Disabled has no field in fedkit: run no sync loop for this type"})
	}
	if in.Spec.StatusType != nil || in.Spec.StatusCollection != nil {
		ws = append(ws, Warning{what, "spec.statusCollection", "not carried over: fedkit's status collector writes status.clusters[] of the federated object itself, with no separate status type"})
	}
	if replicas == "" && tt.Group != "" && !slices.Contains([]string{"apps", "batch", "networking.k8s.io"}, tt.Group) {
		ws = append(ws, Warning{what, "spec.targetType", "copied whole to every cluster: set TypeConfig.ReplicasPath if its replicas are to be divided"})
	}
	return t, ws, nil
}

// PreferenceFrom converts a ReplicaSchedulingPreference. The result uses the KubeFed algorithm
// and writes every minReplicas out (KubeFed's default is 0, fedkit's 1), and an empty cluster
// map becomes {"*": {weight: 1}} as KubeFed's scheduler made it: the schedule stays KubeFed's.
func PreferenceFrom(u *unstructured.Unstructured) (*federation.ReplicaSchedulingPreference, []Warning, error) {
	var in kubeFedRSP
	m, ws, err := decodeMeta(u, &in, &in.ObjectMeta, true)
	if err != nil {
		return nil, nil, err
	}
	what := describe(u)
	p := &federation.ReplicaSchedulingPreference{
		TypeMeta:   metav1.TypeMeta{APIVersion: federation.CoreGroupVersion.String(), Kind: "ReplicaSchedulingPreference"},
		ObjectMeta: m,
		Spec:       PreferenceSpec(in.Spec.TargetKind, int64(in.Spec.TotalReplicas), in.Spec.Rebalance, in.Spec.IntersectWithClusterSelector, nil),
	}
	for name, c := range in.Spec.Clusters {
		p.Spec.Clusters[name] = preferences(c.MinReplicas, c.MaxReplicas, c.Weight)
	}
	if len(in.Spec.Clusters) == 0 {
		p.Spec.Clusters[federation.WildcardCluster] = preferences(0, nil, 1)
	}
	if k := in.Spec.TargetKind; k != "FederatedDeployment" && k != "FederatedReplicaSet" {
		ws = append(ws, Warning{what, "spec.targetKind", fmt.Sprintf("KubeFed scheduled only FederatedDeployment and FederatedReplicaSet; fedkit schedules %s when its type has a replica path", k)})
	}
	for _, e := range federation.ValidateReplicaSchedulingPreference(p) {
		ws = append(ws, Warning{what, e.Field, "invalid in fedkit, the scheduler will refuse it: " + e.ErrorBody()})
	}
	return p, ws, nil
}

// PreferenceSpec is the fedkit spec of a KubeFed preference with the given fields and cluster
// map (nil: an empty one), on the KubeFed algorithm.
func PreferenceSpec(targetKind string, total int64, rebalance, intersect bool, clusters map[string]federation.ClusterPreferences) federation.ReplicaSchedulingPreferenceSpec {
	if clusters == nil {
		clusters = map[string]federation.ClusterPreferences{}
	}
	return federation.ReplicaSchedulingPreferenceSpec{
		TargetKind:                   targetKind,
		TotalReplicas:                total,
		Rebalance:                    rebalance,
		IntersectWithClusterSelector: intersect,
		Algorithm:                    federation.AlgorithmKubeFed,
		Clusters:                     clusters,
	}
}

func preferences(minReplicas int64, maxReplicas *int64, weight int64) federation.ClusterPreferences {
	p := federation.ClusterPreferences{MinReplicas: &minReplicas, Weight: weight}
	if maxReplicas != nil {
		v := *maxReplicas
		p.MaxReplicas = &v
	}
	return p
}

// FederatedFrom converts a Federated<Kind> of types.kubefed.io. scheduled says a
// ReplicaSchedulingPreference targets it: the /spec/replicas overrides KubeFed's scheduler
// wrote are then dropped, as fedkit's scheduler writes status.schedule instead.
func FederatedFrom(u *unstructured.Unstructured, scheduled bool) (*federation.FederatedObject, []Warning, error) {
	var in kubeFedFederated
	m, ws, err := decodeMeta(u, &in, &in.ObjectMeta, true)
	if err != nil {
		return nil, nil, err
	}
	what := describe(u)
	f := &federation.FederatedObject{
		TypeMeta:   metav1.TypeMeta{APIVersion: federation.TypesGroupVersion.String(), Kind: in.Kind},
		ObjectMeta: m,
	}
	// The template comes from u itself, where integers are still int64 (json.Unmarshal into
	// a map would make them float64).
	if t, ok, _ := unstructured.NestedMap(u.Object, "spec", "template"); ok {
		f.Spec.Template.Object = t
	}
	if in.Spec.Placement.Clusters != nil {
		f.Spec.Placement.Clusters = make([]federation.ClusterReference, 0, len(in.Spec.Placement.Clusters))
		for _, c := range in.Spec.Placement.Clusters {
			f.Spec.Placement.Clusters = append(f.Spec.Placement.Clusters, federation.ClusterReference{Name: c.Name})
		}
	}
	f.Spec.Placement.ClusterSelector = in.Spec.Placement.ClusterSelector
	if scheduled && in.Spec.Placement.Clusters != nil {
		ws = append(ws, Warning{what, "spec.placement.clusters", "kept as found; KubeFed's scheduler wrote it from its schedule, fedkit's scheduler does not: the preference's clusters decide (with intersectWithClusterSelector, this list does)"})
	}
	for i, o := range in.Spec.Overrides {
		co := federation.ClusterOverride{ClusterName: o.ClusterName}
		for j, op := range o.ClusterOverrides {
			if scheduled && op.Path == "/spec/replicas" {
				ws = append(ws, Warning{what, fmt.Sprintf("spec.overrides[%d].clusterOverrides[%d]", i, j), "dropped: KubeFed's scheduler wrote this replica count; fedkit's writes status.schedule"})
				continue
			}
			x := federation.OverrideOp{Op: op.Op, Path: op.Path}
			if len(op.Value) > 0 {
				x.Value = &federation.RawValue{Raw: slices.Clone(op.Value)}
			}
			co.ClusterOverrides = append(co.ClusterOverrides, x)
		}
		if len(co.ClusterOverrides) > 0 {
			f.Spec.Overrides = append(f.Spec.Overrides, co)
		}
	}
	if len(in.Status) > 0 && string(in.Status) != "{}" && string(in.Status) != "null" {
		ws = append(ws, Warning{what, "status", "not carried over: fedkit's loops recompute it"})
	}
	for _, e := range federation.ValidateFederatedObject(f) {
		ws = append(ws, Warning{what, e.Field, "invalid in fedkit: " + e.ErrorBody()})
	}
	return f, ws, nil
}
