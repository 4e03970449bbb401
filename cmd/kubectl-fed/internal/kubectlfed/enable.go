package kubectlfed

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/federation/kube"
	"github.com/fedkit/fedkit/kinds"
)

var crdGVR = apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions")

type enableOptions struct {
	writes
	version, replicasPath, rulesFile, federatedKind string
	noReplicas                                      bool
	serviceAccount                                  string
}

func enableCommand(g *globals) *cobra.Command {
	o := &enableOptions{}
	cmd := &cobra.Command{
		Use:   "enable RESOURCE[.GROUP]",
		Short: "Federate an API type, custom resources included: its Federated<Kind> CRD and type configuration",
		Long: `enable federates a type the host serves, as kubefedctl enable did, without Go code:

  1. It reads the type's schema: a custom resource's from its CustomResourceDefinition (the
     version served and stored, or --version), a built-in kind's from the API server's
     OpenAPI v3, made structural.
  2. It writes the Federated<Kind> CRD (types.federation.k8s.io/v1alpha1) whose
     spec.template has that schema, so the host's API server validates templates as the
     members will validate the objects made from them.
  3. It writes the FederatedTypeConfig (core.federation.k8s.io, named RESOURCE.GROUP): where
     the replicas are (--replicas-path; by default spec.replicas when the schema has an
     integer there, --no-replicas for none) and the kind's rules (--rules FILE: a YAML
     KindRules of CEL expressions, compiled here first). A control plane that reads type
     configurations (fedkit-controller-manager does) starts the type's scheduler, sync and
     status collector, without a restart.
  4. It prints the RBAC the loops need for the type: a ClusterRole and binding on the host
     for the control plane's account, and the ClusterRole each member's account needs (apply
     it in every member and bind it to the account kubectl fed join made there).

Running it again updates the CRD and the configuration. --dry-run prints all of it and
writes nothing.`,
		Example: `  kubectl fed enable widgets.example.com
  kubectl fed enable widgets.example.com --rules widget-rules.yaml --dry-run
  kubectl fed enable deployments.apps`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.begin(cmd); err != nil {
				return err
			}
			host, err := g.hostClient()
			if err != nil {
				return err
			}
			return o.enable(cmd.Context(), g, host, args[0])
		},
	}
	o.register(cmd)
	f := cmd.Flags()
	f.StringVar(&o.version, "version", "", "the version of the type to federate (default: a CRD's storage version, a built-in group's preferred one)")
	f.StringVar(&o.replicasPath, "replicas-path", "", "the dotted path of the replica count the scheduler divides (default: spec.replicas when the schema has it)")
	f.BoolVar(&o.noReplicas, "no-replicas", false, "copy the object whole to every cluster: no replica count to divide")
	f.StringVar(&o.rulesFile, "rules", "", "a YAML file of the kind's rules (federation.KindRules: CEL expressions)")
	f.StringVar(&o.federatedKind, "federated-kind", "", "the federated kind (default: Federated<Kind>)")
	f.StringVar(&o.serviceAccount, "service-account", kube.DefaultNamespace+"/fedkit-controlplane", "NAMESPACE/NAME of the control plane's account, for the host binding printed")
	return cmd
}

// target is what enable learns of the type to federate.
type target struct {
	typ    federation.TypeConfig
	schema *apiextensionsv1.JSONSchemaProps
	source string // where the schema came from, for the report
}

func (o *enableOptions) enable(ctx context.Context, g *globals, host federation.ClusterClient, arg string) error {
	tg, err := g.findTarget(ctx, host, arg, o.version)
	if err != nil {
		return err
	}
	t := &tg.typ
	switch {
	case o.noReplicas:
		t.ReplicasPath = ""
	case o.replicasPath != "":
		t.ReplicasPath = o.replicasPath
	case hasInteger(tg.schema, "spec", "replicas"):
		t.ReplicasPath = "spec.replicas"
	}
	if o.federatedKind != "" {
		t.Federated.Kind = o.federatedKind
		t.FederatedResource = strings.ToLower(o.federatedKind) + "s"
	}
	if o.rulesFile != "" {
		rules, err := readRules(o.rulesFile)
		if err != nil {
			return err
		}
		t.Rules = rules
	}
	if _, err := kinds.Compile(*t); err != nil {
		return fmt.Errorf("--rules %s: %w", o.rulesFile, err)
	}
	crd, err := federation.CRDWithTemplateSchema(*t, tg.schema)
	if err != nil {
		return err
	}
	ftc := federation.NewFederatedTypeConfig(*t)
	if !o.dry() {
		fmt.Fprintf(o.out, "# %s: schema from %s\n", t, tg.source)
	}
	if err := o.apply(ctx, host, crdGVR, crd); err != nil {
		return err
	}
	if err := o.apply(ctx, host, federation.FederatedTypeConfigGVR, ftc); err != nil {
		return err
	}
	return printRBAC(o.out, *t, o.serviceAccount)
}

// apply creates obj, or updates the object of its name to obj's spec (labels and annotations
// added), locked on the resourceVersion read.
func (o *enableOptions) apply(ctx context.Context, host federation.ClusterClient, gvr schema.GroupVersionResource, typed any) error {
	obj, err := toUnstructured(typed)
	if err != nil {
		return err
	}
	_, err = host.Get(ctx, gvr, "", obj.GetName())
	switch {
	case apierrors.IsNotFound(err):
		return o.create(ctx, host, gvr, obj)
	case err != nil:
		return fmt.Errorf("%s %s: %w", gvr.GroupResource(), obj.GetName(), err)
	}
	return o.update(ctx, host, gvr, "", obj.GetName(), func(cur *unstructured.Unstructured) (bool, error) {
		want := cur.DeepCopy()
		// What the server defaulted in the spec stays: only what enable says is compared.
		spec, _ := want.Object["spec"].(map[string]any)
		want.Object["spec"] = overlay(spec, obj.Object["spec"].(map[string]any))
		want.SetLabels(merged(cur.GetLabels(), obj.GetLabels()))
		want.SetAnnotations(merged(cur.GetAnnotations(), obj.GetAnnotations()))
		if equalJSON(cur.Object, want.Object) {
			return false, nil
		}
		cur.Object = want.Object
		return true, nil
	}, "configured", "unchanged")
}

// findTarget finds the served type arg names (RESOURCE[.GROUP]) and its schema.
func (g *globals) findTarget(ctx context.Context, host federation.ClusterClient, arg, version string) (target, error) {
	resource, group, _ := strings.Cut(arg, ".")
	disc, ok := host.(federation.ResourceDiscoverer)
	if !ok {
		return target{}, fmt.Errorf("the host client cannot list the resources it serves")
	}
	served, err := disc.ServedResources(ctx)
	if err != nil {
		return target{}, fmt.Errorf("the host's resources: %w", err)
	}
	i := slices.IndexFunc(served, func(r metav1.APIResource) bool {
		return r.Group == group && (r.Name == resource || strings.EqualFold(r.Kind, resource)) && (version == "" || r.Version == version)
	})
	if i < 0 {
		return target{}, fmt.Errorf("the host serves no resource %q (want RESOURCE.GROUP, e.g. widgets.example.com or deployments.apps)", arg)
	}
	r := served[i]
	gvk := schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
	tg := target{typ: federation.NewTypeConfig(gvk, r.Name, r.Namespaced, "")}
	crd, err := host.Get(ctx, crdGVR, "", r.Name+"."+r.Group)
	switch {
	case err == nil:
		tg.schema, tg.typ.Target.Version, err = crdSchema(crd, version)
		tg.source = "CustomResourceDefinition " + crd.GetName()
	case apierrors.IsNotFound(err) || r.Group == "" || !strings.Contains(r.Group, "."):
		tg.source = "the API server's OpenAPI v3 (" + apiPath(gvk.GroupVersion()) + ")"
		tg.schema, err = g.builtinSchema(ctx, gvk)
	}
	if err != nil {
		return target{}, fmt.Errorf("the schema of %s: %w", arg, err)
	}
	return tg, nil
}

// crdSchema is the openAPIV3Schema of crd's version (default: its storage version).
func crdSchema(u *unstructured.Unstructured, version string) (*apiextensionsv1.JSONSchemaProps, string, error) {
	var crd apiextensionsv1.CustomResourceDefinition
	if err := federation.FromUnstructured(u, &crd); err != nil {
		return nil, "", err
	}
	for _, v := range crd.Spec.Versions {
		if (version == "" && v.Storage) || v.Name == version {
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				return nil, "", fmt.Errorf("CustomResourceDefinition %s version %s has no schema", crd.Name, v.Name)
			}
			return v.Schema.OpenAPIV3Schema, v.Name, nil
		}
	}
	return nil, "", fmt.Errorf("CustomResourceDefinition %s has no version %q", crd.Name, version)
}

// hasInteger reports whether s has an integer at path.
func hasInteger(s *apiextensionsv1.JSONSchemaProps, path ...string) bool {
	for _, p := range path {
		if s == nil {
			return false
		}
		next, ok := s.Properties[p]
		if !ok {
			return false
		}
		s = &next
	}
	return s != nil && s.Type == "integer"
}

func readRules(path string) (*federation.KindRules, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--rules: %w", err)
	}
	rules := &federation.KindRules{}
	if err := yaml.UnmarshalStrict(data, rules); err != nil {
		return nil, fmt.Errorf("--rules %s: %w", path, err)
	}
	return rules, nil
}

// printRBAC prints the roles the loops need for t: on the host, for the control plane's
// account; in each member, for the account join made there.
func printRBAC(out io.Writer, t federation.TypeConfig, account string) error {
	ns, name, _ := strings.Cut(account, "/")
	host := "fedkit-" + t.FederatedResource
	member := "fedkit-member-" + t.TargetResource
	if t.Target.Group != "" {
		member += "." + t.Target.Group
	}
	doc := fmt.Sprintf(`# RBAC for %[1]s. On the host, for the control plane's account (the scheduler,
# sync and the status collector read and update %[2]s and write their status):
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: %[3]s, labels: {app.kubernetes.io/name: fedkit}}
rules:
- apiGroups: [%[4]s]
  resources: [%[2]s]
  verbs: [get, list, watch, update, patch]
- apiGroups: [%[4]s]
  resources: [%[2]s/status]
  verbs: [get, update, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: %[3]s, labels: {app.kubernetes.io/name: fedkit}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: %[3]s}
subjects: [{kind: ServiceAccount, namespace: %[5]s, name: %[6]s}]
---
# In every member, bound to the account kubectl fed join made there (sync writes the
# objects, the status collector reads them):
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: %[7]s, labels: {app.kubernetes.io/name: fedkit}}
rules:
- apiGroups: [%[8]q]
  resources: [%[9]s]
  verbs: [get, list, watch, create, update, patch, delete]
`, t.Federated.Kind, t.FederatedResource, host, t.Federated.Group, ns, name, member, t.Target.Group, t.TargetResource)
	_, err := fmt.Fprint(out, "---\n"+doc)
	return err
}

// overlay returns dst with src's fields set over it, objects merged field by field, other
// values (lists included) replaced.
func overlay(dst, src map[string]any) map[string]any {
	if dst == nil {
		dst = map[string]any{}
	}
	for k, v := range src {
		sm, sok := v.(map[string]any)
		dm, dok := dst[k].(map[string]any)
		if sok && dok {
			dst[k] = overlay(dm, sm)
			continue
		}
		dst[k] = v
	}
	return dst
}

func merged(a, b map[string]string) map[string]string {
	if len(a) == 0 && len(b) == 0 {
		return nil
	}
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func disableCommand(g *globals) *cobra.Command {
	w := &writes{}
	var deleteCRD bool
	cmd := &cobra.Command{
		Use:   "disable RESOURCE[.GROUP]",
		Short: "Stop federating a type: delete its type configuration, never a member object",
		Long: `disable deletes the type's FederatedTypeConfig: a control plane that reads them stops the
type's loops, and nothing is done to the member objects, which keep running as they are, nor
to the Federated<Kind> objects, which stay on the host (enable the type again and they are
propagated again).

--delete-crd also deletes the Federated<Kind> CRD, and only when no Federated<Kind> object
is left: deleting the CRD deletes its objects, and their member objects with them if a
control plane still ran their loops. Delete (or, to keep the member objects, first
kubectl fed orphaning-deletion enable) the objects first.`,
		Example: "  kubectl fed disable widgets.example.com\n  kubectl fed disable widgets.example.com --delete-crd --dry-run",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := w.begin(cmd); err != nil {
				return err
			}
			host, err := g.hostClient()
			if err != nil {
				return err
			}
			return disable(cmd.Context(), w, host, args[0], deleteCRD)
		},
	}
	w.register(cmd)
	cmd.Flags().BoolVar(&deleteCRD, "delete-crd", false, "also delete the Federated<Kind> CRD, when no object of it is left")
	return cmd
}

func disable(ctx context.Context, w *writes, host federation.ClusterClient, name string, deleteCRD bool) error {
	u, err := host.Get(ctx, federation.FederatedTypeConfigGVR, "", name)
	if err != nil {
		return fmt.Errorf("FederatedTypeConfig %s: %w", name, err)
	}
	ftc := &federation.FederatedTypeConfig{}
	if err := federation.FromUnstructured(u, ftc); err != nil {
		return fmt.Errorf("FederatedTypeConfig %s: %w", name, err)
	}
	t, err := ftc.TypeConfig()
	if err != nil && deleteCRD {
		return fmt.Errorf("FederatedTypeConfig %s: %w: the Federated<Kind> CRD is not known; delete it by hand", name, err)
	}
	if deleteCRD {
		left, err := host.List(ctx, t.FederatedGVR(), "", metav1.ListOptions{Limit: 5})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("%s: %w", t.FederatedGVR().GroupResource(), err)
		}
		if err == nil && len(left.Items) > 0 {
			var names []string
			for i := range left.Items {
				names = append(names, objectKey(&left.Items[i]))
			}
			return fmt.Errorf("%d or more %s left (%s): deleting the CRD would delete them; delete them first (kubectl fed orphaning-deletion enable keeps their member objects)",
				len(left.Items), t.Federated.Kind, strings.Join(names, ", "))
		}
	}
	if err := w.delete(ctx, host, federation.FederatedTypeConfigGVR, u); err != nil {
		return err
	}
	if !deleteCRD {
		return nil
	}
	crd, err := host.Get(ctx, crdGVR, "", t.FederatedResource+"."+t.Federated.Group)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return w.delete(ctx, host, crdGVR, crd)
}

// delete deletes obj (as read: uid and resourceVersion preconditions), or with --dry-run
// prints it.
func (w *writes) delete(ctx context.Context, host federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) error {
	if !w.dry() {
		uid, rv := obj.GetUID(), obj.GetResourceVersion()
		err := host.Delete(ctx, gvr, obj.GetNamespace(), obj.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}})
		if err != nil {
			return fmt.Errorf("%s %s: %w", gvr.GroupResource(), obj.GetName(), err)
		}
	}
	return w.done(gvr, obj, "deleted")
}
