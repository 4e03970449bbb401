package kubectlfed

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"

	"github.com/fedkit/fedkit/federation"
)

// writes is what every verb that writes shares: --dry-run, and where its output goes.
//
// --dry-run is kubectl's client-side dry run: the command decides as it would, prints every
// object it would write (the whole object, after the change, as YAML documents) and writes
// nothing. "none" (the default) writes; "server" is refused, as the plugin has no server-side
// dry run of its own to offer.
type writes struct {
	dryRun string
	out    io.Writer
}

func (w *writes) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&w.dryRun, "dry-run", "none", `"client": print the objects that would be written, as YAML, and write nothing; "none": write`)
	cmd.Flags().Lookup("dry-run").NoOptDefVal = "client"
}

// begin checks --dry-run and takes the command's output.
func (w *writes) begin(cmd *cobra.Command) error {
	w.out = cmd.OutOrStdout()
	switch w.dryRun {
	case "none", "", "client":
		return nil
	}
	return fmt.Errorf("--dry-run=%s: want none or client (the plugin has no server-side dry run)", w.dryRun)
}

func (w *writes) dry() bool { return w.dryRun == "client" }

// printed writes obj as one YAML document (after a "---" line), without managedFields.
func printYAML(out io.Writer, obj *unstructured.Unstructured) error {
	c := obj.DeepCopy()
	unstructured.RemoveNestedField(c.Object, "metadata", "managedFields")
	data, err := yaml.Marshal(c.Object)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "---\n%s", data)
	return err
}

// done reports a write (or, with --dry-run, prints obj instead), as kubectl does:
// "federateddeployment.types.federation.k8s.io/web created".
func (w *writes) done(gvr schema.GroupVersionResource, obj *unstructured.Unstructured, verb string) error {
	if w.dry() {
		return printYAML(w.out, obj)
	}
	_, err := fmt.Fprintf(w.out, "%s/%s %s\n", gvr.GroupResource().String(), obj.GetName(), verb)
	return err
}

// create creates obj through host, or with --dry-run prints it.
func (w *writes) create(ctx context.Context, host federation.ClusterClient, gvr schema.GroupVersionResource, obj *unstructured.Unstructured) error {
	if !w.dry() {
		created, err := host.Create(ctx, gvr, obj)
		if err != nil {
			return fmt.Errorf("%s %s: %w", obj.GetKind(), objectKey(obj), err)
		}
		obj = created
	}
	return w.done(gvr, obj, "created")
}

// update reads the named object, lets change edit it (changed false: nothing to write) and
// writes it locked on the resourceVersion read, again on a conflict; with --dry-run it prints
// the changed object. verb is what the report says was done.
func (w *writes) update(ctx context.Context, host federation.ClusterClient, gvr schema.GroupVersionResource, namespace, name string,
	change func(obj *unstructured.Unstructured) (changed bool, err error), verb, unchanged string) error {
	var result *unstructured.Unstructured
	var wrote bool
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		obj, err := host.Get(ctx, gvr, namespace, name)
		if err != nil {
			return err
		}
		changed, err := change(obj)
		if err != nil || !changed {
			result, wrote = obj, false
			return err
		}
		if w.dry() {
			result, wrote = obj, true
			return nil
		}
		updated, err := host.Update(ctx, gvr, obj)
		if err != nil {
			return err
		}
		result, wrote = updated, true
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s %s: %w", gvr.GroupResource(), federation.Key{Namespace: namespace, Name: name}, err)
	}
	if !wrote {
		if w.dry() {
			return printYAML(w.out, result)
		}
		_, err := fmt.Fprintf(w.out, "%s/%s %s\n", gvr.GroupResource().String(), name, unchanged)
		return err
	}
	return w.done(gvr, result, verb)
}

func objectKey(obj *unstructured.Unstructured) string {
	return federation.Key{Namespace: obj.GetNamespace(), Name: obj.GetName()}.String()
}

// kindOf names an object's resource the way kubectl's output does ("deployment.apps/web").
func resourceName(gvr schema.GroupVersionResource, name string) string {
	return strings.TrimSuffix(gvr.GroupResource().String(), ".") + "/" + name
}
