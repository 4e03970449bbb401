package kubectlfed

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
)

func orphanCommand(g *globals) *cobra.Command {
	w := &writes{}
	var kind string
	cmd := &cobra.Command{
		Use:   "orphaning-deletion enable|disable|status KIND/NAME",
		Short: "Say whether deleting a federated object leaves its member objects in place",
		Long: `orphaning-deletion sets (enable) or removes (disable) the annotation ` + federation.OrphanAnnotation + `:
"true" on a federated object, or prints whether it is set (status), as kubefedctl
orphaning-deletion did. With it, deleting the federated object leaves its member objects
running, without the federation's labels and annotations, instead of deleting them. It
applies to the deletion only: a cluster that leaves the placement still has its copy deleted.`,
		Example: `  kubectl fed orphaning-deletion enable federateddeployment/web -n shop
  kubectl fed orphaning-deletion status federateddeployment/web -n shop
  kubectl fed orphaning-deletion disable web --kind deployment --dry-run`,
		Args:      cobra.ExactArgs(2),
		ValidArgs: []string{"enable", "disable", "status"},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := w.begin(cmd); err != nil {
				return err
			}
			host, err := g.hostClient()
			if err != nil {
				return err
			}
			typ, key, err := g.typeAndKeyIn(cmd.Context(), host, args[1], kind)
			if err != nil {
				return err
			}
			name := fmt.Sprintf("%s %s", typ.Federated.Kind, key)
			switch args[0] {
			case "status":
				obj, err := host.Get(cmd.Context(), typ.FederatedGVR(), key.Namespace, key.Name)
				if err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
				state := "disabled: deleting it deletes its member objects"
				if orphaning(obj) {
					state = "enabled: deleting it leaves its member objects in place"
				}
				_, err = fmt.Fprintf(w.out, "Orphaning deletion of %s is %s\n", name, state)
				return err
			case "enable", "disable":
				on := args[0] == "enable"
				return w.update(cmd.Context(), host, typ.FederatedGVR(), key.Namespace, key.Name, func(obj *unstructured.Unstructured) (bool, error) {
					if orphaning(obj) == on && (on || obj.GetAnnotations()[federation.OrphanAnnotation] == "") {
						return false, nil
					}
					ann := obj.GetAnnotations()
					if on {
						if ann == nil {
							ann = map[string]string{}
						}
						ann[federation.OrphanAnnotation] = "true"
					} else {
						delete(ann, federation.OrphanAnnotation)
					}
					obj.SetAnnotations(ann)
					return true, nil
				}, "orphaning deletion "+args[0]+"d", "orphaning deletion "+args[0]+"d already")
			}
			return fmt.Errorf("%q: want enable, disable or status", args[0])
		},
	}
	w.register(cmd)
	cmd.Flags().StringVar(&kind, "kind", "", "the kind when the argument is a bare NAME")
	return cmd
}

// orphaning reports whether obj's deletion leaves its member objects (OrphanAnnotation "true").
func orphaning(obj *unstructured.Unstructured) bool {
	return obj.GetAnnotations()[federation.OrphanAnnotation] == "true"
}
