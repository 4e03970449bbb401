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
	// Types are the federated types the host serves besides the built-in ones
	// (federation.BuiltinTypes): those whose CRDs (federation.CRDFor) are installed. A
	// Federated<Kind> of a kind neither lists is left out, a loss.
	Types []federation.TypeConfig
}

// Warning is something of a KubeFed object that fedkit does not carry over, or carries over
// differently. Object names the KubeFed object ("KubeFedCluster kube-federation-system/a"),
// Field its field ("spec.disabledTLSValidations"; "" for the whole object).
type Warning struct {
	Object  string
	Field   string
	Message string
	// Loss says the output lacks something the input asked for: an object left out, or a
	// field whose meaning fedkit does not keep. The other warnings say how something carries
	// over (KubeFed's bookkeeping that fedkit recomputes, a name that changes). `kubectl fed
	// migrate` fails on a loss unless --allow-loss.
	Loss bool
}

func (w Warning) String() string {
	if w.Field == "" {
		return w.Object + ": " + w.Message
	}
	return w.Object + ": " + w.Field + ": " + w.Message
}

// note is a warning that loses nothing; loss one that does.
func note(object, field, message string) Warning { return Warning{object, field, message, false} }
func loss(object, field, message string) Warning { return Warning{object, field, message, true} }

// Result is what a conversion produced, each list in input order.
type Result struct {
	Clusters    []federation.Cluster
	Secrets     []corev1.Secret // the converted Secrets of KubeFedClusters found in the input
	Preferences []federation.ReplicaSchedulingPreference
	Federated   []federation.FederatedObject
	// TypeConfigs are the FederatedTypeConfigs as Go values: fedkit has no type-config
	// object; an embedder constructs one loop set per TypeConfig.
	TypeConfigs []federation.TypeConfig
	// Other are the objects of the input that are not KubeFed's (a Namespace shipped beside
	// its FederatedNamespace, a plain Deployment), unchanged: the API server serves them as
	// it did.
	Other    []*unstructured.Unstructured
	Warnings []Warning
}

// Losses returns the warnings that are losses (Warning.Loss), in order.
func (r Result) Losses() []Warning {
	var out []Warning
	for _, w := range r.Warnings {
		if w.Loss {
			out = append(out, w)
		}
	}
	return out
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

// Convert converts every KubeFed object of objs (those of the kubefed.io API groups).
//
//   - A KubeFed object of a kind fedkit has no counterpart for is left out: a loss naming it.
//     So is a Federated<Kind> whose type the host does not serve (FederatedClusterRole:
//     fedkit's built-in types and Options.Types only).
//   - A Secret named by a KubeFedCluster's spec.secretRef (in the KubeFedCluster's
//     namespace) is converted with it. Any other Secret of that namespace is KubeFed's own
//     (a token, a webhook's certificate): left out, with a warning that loses nothing.
//   - Every other object is not KubeFed's (a Namespace shipped beside its
//     FederatedNamespace, a plain Deployment): it is passed through unchanged, in
//     Result.Other.
//
// An object that does not decode is left out with a loss naming it and the field.
func Convert(objs []*unstructured.Unstructured, opts Options) Result {
	if opts.SecretNamespace == "" {
		opts.SecretNamespace = DefaultSecretNamespace
	}
	c := newConverter(objs, opts)
	for _, u := range objs {
		c.convert(u)
	}
	c.unusedSecrets(objs)
	return c.res
}

// converter is one conversion: its input's indexes and the result so far.
type converter struct {
	opts Options
	res  Result
	// secretObjs are the input's Secrets by namespace/name; used those converted.
	secretObjs map[string]*unstructured.Unstructured
	used       map[string]bool
	// system are the namespaces of the input's KubeFedClusters: KubeFed's own.
	system map[string]bool
	// scheduled holds "<targetKind> namespace/name" of every preference of the input.
	scheduled map[string]bool
	// types are the federated types the host serves, by federated kind.
	types map[string]bool
}

func newConverter(objs []*unstructured.Unstructured, opts Options) *converter {
	c := &converter{opts: opts, used: map[string]bool{}, secretObjs: map[string]*unstructured.Unstructured{},
		system: map[string]bool{}, scheduled: map[string]bool{}, types: map[string]bool{}}
	for _, t := range append(federation.BuiltinTypes(), opts.Types...) {
		c.types[t.Federated.Kind] = true
	}
	for _, u := range objs {
		switch gv, kind := u.GetAPIVersion(), u.GetKind(); {
		case gv == "v1" && kind == "Secret":
			c.secretObjs[u.GetNamespace()+"/"+u.GetName()] = u
		case gv == KubeFedCoreGroupVersion && kind == "KubeFedCluster":
			c.system[u.GetNamespace()] = true
		case gv == KubeFedSchedulingGroupVersion && kind == "ReplicaSchedulingPreference":
			tk, _, _ := unstructured.NestedString(u.Object, "spec", "targetKind")
			c.scheduled[tk+" "+u.GetNamespace()+"/"+u.GetName()] = true
		}
	}
	return c
}

// convert converts one object of the input, or passes it through.
func (c *converter) convert(u *unstructured.Unstructured) {
	what := describe(u)
	var ws []Warning
	var err error
	switch gv, kind := u.GetAPIVersion(), u.GetKind(); {
	case gv == KubeFedCoreGroupVersion && kind == "KubeFedCluster":
		ws, err = c.cluster(u)
	case gv == KubeFedCoreGroupVersion && kind == "FederatedTypeConfig":
		var t federation.TypeConfig
		if t, ws, err = TypeConfigFrom(u); err == nil {
			c.res.TypeConfigs = append(c.res.TypeConfigs, t)
		}
	case gv == KubeFedSchedulingGroupVersion && kind == "ReplicaSchedulingPreference":
		var p *federation.ReplicaSchedulingPreference
		if p, ws, err = PreferenceFrom(u); err == nil {
			c.res.Preferences = append(c.res.Preferences, *p)
		}
	case gv == KubeFedTypesGroupVersion && strings.HasPrefix(kind, "Federated"):
		ws, err = c.federated(u)
	case gv == "v1" && kind == "Secret" && c.system[u.GetNamespace()]:
		return // converted with its KubeFedCluster, or reported by unusedSecrets
	case kubeFedGroup(gv):
		ws = []Warning{loss(what, "", "fedkit has no counterpart of KubeFed's "+kind+" this version converts; left out")}
	default:
		c.res.Other = append(c.res.Other, u)
		return
	}
	if err != nil {
		ws = append(ws, loss(what, "", "not converted: "+err.Error()))
	}
	c.res.Warnings = append(c.res.Warnings, ws...)
}

// kubeFedGroup reports whether apiVersion is of one of KubeFed's API groups.
func kubeFedGroup(apiVersion string) bool {
	group, _, _ := strings.Cut(apiVersion, "/")
	return group == "kubefed.io" || strings.HasSuffix(group, ".kubefed.io")
}

// cluster converts a KubeFedCluster and the Secret its spec.secretRef names.
func (c *converter) cluster(u *unstructured.Unstructured) ([]Warning, error) {
	what := describe(u)
	cl, ws, err := ClusterFrom(u)
	if err != nil {
		return nil, err
	}
	c.res.Clusters = append(c.res.Clusters, *cl)
	ref := u.GetNamespace() + "/" + cl.Spec.SecretRef.Name
	s, ok := c.secretObjs[ref]
	if !ok {
		return append(ws, note(what, "spec.secretRef", fmt.Sprintf("Secret %s is not in the input: copy it to namespace %s with label %s=%s, keeping its \"token\" key", ref, c.opts.SecretNamespace, federation.SecretClusterLabel, cl.Name))), nil
	}
	c.used[ref] = true
	sec, sws, err := SecretFrom(s, cl.Name, c.opts.SecretNamespace)
	if err != nil {
		return append(ws, loss(what, "spec.secretRef", err.Error()+"; the Secret is left out")), nil
	}
	c.res.Secrets = append(c.res.Secrets, *sec)
	return append(ws, sws...), nil
}

// federated converts a Federated<Kind> whose type the host serves.
func (c *converter) federated(u *unstructured.Unstructured) ([]Warning, error) {
	kind := u.GetKind()
	if !c.types[kind] {
		target := strings.TrimPrefix(kind, "Federated")
		return []Warning{loss(describe(u), "", fmt.Sprintf("fedkit has no %s type, so no host serves it; left out (to federate %s, build its TypeConfig with federation.NewTypeConfig, install its CRD with federation.CRDFor and list it in Options.Types)", kind, target))}, nil
	}
	f, ws, err := FederatedFrom(u, c.scheduled[kind+" "+u.GetNamespace()+"/"+u.GetName()])
	if err != nil {
		return nil, err
	}
	c.res.Federated = append(c.res.Federated, *f)
	return ws, nil
}

// unusedSecrets reports the Secrets of KubeFed's namespaces that no KubeFedCluster names.
func (c *converter) unusedSecrets(objs []*unstructured.Unstructured) {
	for _, u := range objs {
		ref := u.GetNamespace() + "/" + u.GetName()
		if u.GetAPIVersion() == "v1" && u.GetKind() == "Secret" && c.system[u.GetNamespace()] && !c.used[ref] {
			c.res.Warnings = append(c.res.Warnings, note(describe(u), "", "KubeFed's own (no KubeFedCluster of the input names it): fedkit does not need it; left out, and it stays where it is"))
		}
	}
}

// Objects returns the objects to apply in an order that applies cleanly: the Namespaces of
// Other, Secrets, Clusters, the rest of Other, preferences, federated objects. TypeConfigs are
// Go values and are not among them.
func (r Result) Objects() []runtime.Object {
	var out []runtime.Object
	for _, u := range r.Other {
		if isNamespace(u) {
			out = append(out, u)
		}
	}
	for i := range r.Secrets {
		out = append(out, &r.Secrets[i])
	}
	for i := range r.Clusters {
		out = append(out, &r.Clusters[i])
	}
	for _, u := range r.Other {
		if !isNamespace(u) {
			out = append(out, u)
		}
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

func isNamespace(u *unstructured.Unstructured) bool {
	return u.GetAPIVersion() == "v1" && u.GetKind() == "Namespace"
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
		return []Warning{loss(describe(u), "", "not carried over: "+err.Error())}, nil
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

// kubeFedOrphanAnnotation is KubeFed's orphan annotation, which becomes
// federation.OrphanAnnotation: both mean the same ("true": a deletion leaves the member
// objects in place).
const kubeFedOrphanAnnotation = "kubefed.io/orphan"

// kubeFedFinalizer is the finalizer KubeFed's sync controller puts on federated objects;
// fedkit's sync puts its own.
const kubeFedFinalizer = "kubefed.io/sync-controller"

// meta is the metadata that carries over: name, namespace, labels, and the annotations that
// are not KubeFed's own (their keys contain "kubefed.io"), kubefed.io/orphan becoming
// federation.OrphanAnnotation. Finalizers, owner references and the server's fields do not.
func meta(m metav1.ObjectMeta, namespaced bool, what string) (metav1.ObjectMeta, []Warning) {
	out := metav1.ObjectMeta{Name: m.Name, Labels: m.Labels}
	if namespaced {
		out.Namespace = m.Namespace
	}
	var bookkeeping, lost []string
	for k, v := range m.Annotations {
		switch {
		case k == kubeFedOrphanAnnotation:
			k = federation.OrphanAnnotation
		case k == corev1.LastAppliedConfigAnnotation:
			bookkeeping = append(bookkeeping, k)
			continue
		case strings.Contains(k, "kubefed.io"):
			lost = append(lost, k)
			continue
		}
		if out.Annotations == nil {
			out.Annotations = map[string]string{}
		}
		out.Annotations[k] = v
	}
	var ws []Warning
	if len(bookkeeping) > 0 {
		ws = append(ws, note(what, "metadata.annotations", "dropped "+bookkeeping[0]+" (kubectl's bookkeeping)"))
	}
	if len(lost) > 0 {
		sort.Strings(lost)
		ws = append(ws, loss(what, "metadata.annotations", "dropped "+strings.Join(lost, ", ")+": fedkit has no such setting"))
	}
	ws = append(ws, finalizers(m.Finalizers, what)...)
	if len(m.OwnerReferences) > 0 {
		ws = append(ws, loss(what, "metadata.ownerReferences", "dropped: the owners' UIDs do not carry over"))
	}
	return out, ws
}

// finalizers reports a KubeFed object's finalizers, none of which carries over: KubeFed's
// sync controller's is replaced by fedkit's own; any other is a loss.
func finalizers(fs []string, what string) []Warning {
	var ws []Warning
	var others []string
	for _, f := range fs {
		if f == kubeFedFinalizer {
			ws = append(ws, note(what, "metadata.finalizers", "dropped "+f+" (fedkit adds its own)"))
			continue
		}
		others = append(others, f)
	}
	if len(others) > 0 {
		ws = append(ws, loss(what, "metadata.finalizers", "dropped "+strings.Join(others, ", ")+": what they held the object for is not carried over"))
	}
	return ws
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
		ws = append(ws, loss(what, "spec.disabledTLSValidations", fmt.Sprintf("%q is not carried over: fedkit verifies the certificate fully unless every check is off (\"*\")", v)))
	}
	if len(in.Status) > 0 && string(in.Status) != "{}" && string(in.Status) != "null" {
		ws = append(ws, note(what, "status", "not carried over: the cluster monitor recomputes it"))
	}
	for _, e := range federation.ValidateCluster(c) {
		ws = append(ws, loss(what, e.Field, "invalid in fedkit: "+e.ErrorBody()))
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
		ws = append(ws, note(what, "data", "dropped keys "+strings.Join(dropped, ", ")+" (fedkit reads \"token\"; the CA is the Cluster's spec.caBundle)"))
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
		ws = append(ws, note(what, "spec.federatedType", fmt.Sprintf("%s.%s becomes %s in %s: fedkit names every federated type Federated<Kind> in one group", ft.Kind, ft.Group, t.Federated.Kind, federation.TypesGroupVersion)))
	}
	if in.Spec.Propagation == "Disabled" {
		ws = append(ws, loss(what, "spec.propagation", "Disabled has no field in fedkit: run no sync loop for this type"))
	}
	if in.Spec.StatusType != nil || in.Spec.StatusCollection != nil {
		ws = append(ws, note(what, "spec.statusCollection", "not carried over: fedkit's status collector writes status.clusters[] of the federated object itself, with no separate status type"))
	}
	if replicas == "" && tt.Group != "" && !slices.Contains([]string{"apps", "batch", "networking.k8s.io"}, tt.Group) {
		ws = append(ws, note(what, "spec.targetType", "copied whole to every cluster: set TypeConfig.ReplicasPath if its replicas are to be divided"))
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
		ws = append(ws, note(what, "spec.targetKind", fmt.Sprintf("KubeFed scheduled only FederatedDeployment and FederatedReplicaSet; fedkit schedules %s when its type has a replica path", k)))
	}
	for _, e := range federation.ValidateReplicaSchedulingPreference(p) {
		ws = append(ws, loss(what, e.Field, "invalid in fedkit, the scheduler will refuse it: "+e.ErrorBody()))
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
