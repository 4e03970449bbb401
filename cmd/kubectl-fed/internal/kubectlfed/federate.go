package kubectlfed

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/fedkit/fedkit/federation"
)

type federateOptions struct {
	writes
	kind      string
	clusters  []string
	selector  string
	contents  string
	skipKinds []string
}

func federateCommand(g *globals) *cobra.Command {
	o := &federateOptions{}
	cmd := &cobra.Command{
		Use:   "federate KIND/NAME | --namespace-contents NAMESPACE",
		Short: "Make a host object, or a namespace and its contents, Federated<Kind> objects",
		Long: `federate reads a native object on the host (a Deployment, a ConfigMap, an enabled custom
resource) and creates its Federated<Kind> of the same name: the object's content as
spec.template, without what the host's servers and controllers gave it (status, uid,
resourceVersion, timestamps, owners, finalizers, a Service's cluster IPs, a Job's generated
selector). The placement is --clusters, else --cluster-selector, else every cluster
(clusterSelector: {}). The native object stays as it is: nothing reads or changes it after.

--namespace-contents NAMESPACE federates the namespace (a FederatedNamespace in it) and every
object of the federated types in it, as kubefedctl federate --contents did. It leaves out what
the namespace's controllers made: objects with owners, the default ServiceAccount, the
kube-root-ca.crt ConfigMap, service account token Secrets, and objects a federation manages.
An object whose Federated<Kind> exists already is reported and left as it is.`,
		Example: `  kubectl fed federate deployment/web -n shop --clusters eu,us
  kubectl fed federate configmap/settings -n shop --cluster-selector region=eu --dry-run
  kubectl fed federate --namespace-contents shop`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.begin(cmd); err != nil {
				return err
			}
			placement, err := o.placement()
			if err != nil {
				return err
			}
			host, err := g.hostClient()
			if err != nil {
				return err
			}
			types, err := g.types(cmd.Context(), host)
			if err != nil {
				return err
			}
			switch {
			case o.contents != "" && len(args) == 0:
				return o.namespaceContents(cmd.Context(), host, types, placement)
			case o.contents == "" && len(args) == 1:
				typ, key, err := g.typeAndKeyIn(cmd.Context(), host, args[0], o.kind)
				if err != nil {
					return err
				}
				native, err := host.Get(cmd.Context(), typ.TargetGVR(), nativeNamespace(typ, key), key.Name)
				if err != nil {
					return fmt.Errorf("%s %s: %w", typ.Target.Kind, key, err)
				}
				return o.create(cmd.Context(), host, typ, Federated(typ, native, placement))
			}
			return fmt.Errorf("give KIND/NAME or --namespace-contents NAMESPACE, not both")
		},
	}
	o.register(cmd)
	cmd.Flags().StringVar(&o.kind, "kind", "", "the kind when the argument is a bare NAME")
	cmd.Flags().StringSliceVar(&o.clusters, "clusters", nil, "the clusters to place the object in (spec.placement.clusters)")
	cmd.Flags().StringVar(&o.selector, "cluster-selector", "", "a label selector of the clusters (spec.placement.clusterSelector), e.g. region=eu")
	cmd.Flags().StringVar(&o.contents, "namespace-contents", "", "federate this namespace and the objects of every federated type in it")
	cmd.Flags().StringSliceVar(&o.skipKinds, "skip-kinds", nil, "with --namespace-contents, kinds to leave out (e.g. Secret,PersistentVolumeClaim)")
	return cmd
}

// placement is spec.placement from the flags: every cluster when neither is given.
func (o *federateOptions) placement() (map[string]any, error) {
	switch {
	case len(o.clusters) > 0 && o.selector != "":
		return nil, fmt.Errorf("give --clusters or --cluster-selector, not both")
	case len(o.clusters) > 0:
		list := make([]any, len(o.clusters))
		for i, c := range o.clusters {
			list[i] = map[string]any{"name": c}
		}
		return map[string]any{"clusters": list}, nil
	case o.selector != "":
		set, err := labels.ConvertSelectorToLabelsMap(o.selector)
		if err != nil {
			return nil, fmt.Errorf("--cluster-selector %q: want key=value,...: %w", o.selector, err)
		}
		match := map[string]any{}
		for k, v := range set {
			match[k] = v
		}
		return map[string]any{"clusterSelector": map[string]any{"matchLabels": match}}, nil
	}
	return map[string]any{"clusterSelector": map[string]any{}}, nil
}

// Federated is native's Federated<Kind> of typ, of the same name, with placement: the
// template is federation.NativeTemplate(native). A FederatedNamespace lives in the namespace
// it federates.
func Federated(typ federation.TypeConfig, native *unstructured.Unstructured, placement map[string]any) *unstructured.Unstructured {
	fed := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{"template": federation.NativeTemplate(native), "placement": placement},
	}}
	fed.SetGroupVersionKind(typ.Federated)
	fed.SetName(native.GetName())
	switch {
	case typ.Namespaced:
		fed.SetNamespace(native.GetNamespace())
	case typ.FederatedNamespaced():
		fed.SetNamespace(native.GetName())
	}
	return fed
}

// nativeNamespace is the namespace of the native object behind key: none for a cluster-scoped
// target (a Namespace's key carries its own name as namespace).
func nativeNamespace(typ federation.TypeConfig, key federation.Key) string {
	if !typ.Namespaced {
		return ""
	}
	return key.Namespace
}

// create creates fed, naming the object in the error when it exists already.
func (o *federateOptions) create(ctx context.Context, host federation.ClusterClient, typ federation.TypeConfig, fed *unstructured.Unstructured) error {
	err := o.writes.create(ctx, host, typ.FederatedGVR(), fed)
	if apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("%s %s exists already: the object is federated (kubectl fed get %s/%s)", typ.Federated.Kind, objectKey(fed), strings.ToLower(typ.Federated.Kind), fed.GetName())
	}
	return err
}

// namespaceContents federates the namespace o.contents and every object of types in it that
// a user made (see skipped).
func (o *federateOptions) namespaceContents(ctx context.Context, host federation.ClusterClient, types []federation.TypeConfig, placement map[string]any) error {
	ns, err := host.Get(ctx, federation.NamespaceType.TargetGVR(), "", o.contents)
	if err != nil {
		return fmt.Errorf("namespace %s: %w", o.contents, err)
	}
	type item struct {
		typ    federation.TypeConfig
		native *unstructured.Unstructured
	}
	items := []item{{federation.NamespaceType, ns}}
	for _, t := range types {
		if !t.Namespaced || slices.ContainsFunc(o.skipKinds, func(k string) bool { return strings.EqualFold(k, t.Target.Kind) }) {
			continue
		}
		list, err := host.List(ctx, t.TargetGVR(), o.contents, metav1.ListOptions{})
		if apierrors.IsNotFound(err) {
			continue // the host does not serve the kind
		}
		if err != nil {
			return fmt.Errorf("%s in namespace %s: %w", t.TargetResource, o.contents, err)
		}
		slices.SortFunc(list.Items, func(a, b unstructured.Unstructured) int { return strings.Compare(a.GetName(), b.GetName()) })
		for i := range list.Items {
			if why := skipped(&list.Items[i]); why != "" {
				fmt.Fprintf(o.out, "# skipped %s: %s\n", resourceName(t.TargetGVR(), list.Items[i].GetName()), why)
				continue
			}
			items = append(items, item{t, &list.Items[i]})
		}
	}
	for _, it := range items {
		fed := Federated(it.typ, it.native, placement)
		_, err := host.Get(ctx, it.typ.FederatedGVR(), fed.GetNamespace(), fed.GetName())
		if err == nil {
			err = apierrors.NewAlreadyExists(it.typ.FederatedGVR().GroupResource(), fed.GetName())
		} else if apierrors.IsNotFound(err) {
			err = o.writes.create(ctx, host, it.typ.FederatedGVR(), fed)
		}
		if apierrors.IsAlreadyExists(err) {
			fmt.Fprintf(o.out, "# skipped %s: %s exists already\n", resourceName(it.typ.TargetGVR(), it.native.GetName()), it.typ.Federated.Kind)
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// skipped says why a namespace's object is not federated with its contents, or "".
func skipped(obj *unstructured.Unstructured) string {
	switch {
	case len(obj.GetOwnerReferences()) > 0:
		return "owned by " + obj.GetOwnerReferences()[0].Kind + " " + obj.GetOwnerReferences()[0].Name
	case obj.GetLabels()[federation.ManagedByLabel] != "":
		return "managed by federation " + obj.GetLabels()[federation.ManagedByLabel]
	case obj.GetKind() == "ServiceAccount" && obj.GetName() == "default":
		return "every namespace has it"
	case obj.GetKind() == "ConfigMap" && obj.GetName() == "kube-root-ca.crt":
		return "every namespace has it"
	}
	if t, _, _ := unstructured.NestedString(obj.Object, "type"); obj.GetKind() == "Secret" && t == "kubernetes.io/service-account-token" {
		return "a service account's token"
	}
	return ""
}
