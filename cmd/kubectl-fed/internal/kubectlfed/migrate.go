package kubectlfed

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"

	"github.com/fedkit/fedkit/migrate"
)

func migrateCommand(g *globals) *cobra.Command {
	var file, namespace string
	var allowLoss bool
	cmd := &cobra.Command{
		Use:   "migrate -f kubefed.yaml",
		Short: "Convert KubeFed v0.10 objects into fedkit's",
		Long: `migrate reads KubeFed v0.10 objects (KubeFedCluster and their Secrets, FederatedTypeConfig,
ReplicaSchedulingPreference, Federated<Kind> of types.kubefed.io), as kubectl get -o yaml
prints them or as they are written in files, and writes fedkit's to standard output, ready for
kubectl apply -f -. Objects that are not KubeFed's (a Namespace beside its FederatedNamespace)
pass through unchanged. A converted preference uses the KubeFed algorithm: fedkit's scheduler
keeps KubeFed's schedule, replica for replica. Converted federated objects adopt the member
objects KubeFed labelled (kubefed.io/managed: "true"), so nothing is deleted and created again.
FederatedTypeConfigs become TypeConfigs, printed as comments: fedkit has no such object.

What does not carry over goes to standard error, one line per object and field. A loss (an
object left out, such as a FederatedClusterRole, which fedkit has no type for, or a field whose
meaning fedkit does not keep) is printed as "lost:", and migrate then writes nothing and exits
1, unless --allow-loss.`,
		Example: "  kubectl get kubefedclusters,secrets -n kube-federation-system -o yaml > kubefed.yaml\n  kubectl fed migrate -f kubefed.yaml | kubectl apply -f -\n  kubectl fed migrate -f kubefed/example/sample1 --allow-loss | kubectl apply -f -",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			data, err := readManifests(cmd.InOrStdin(), file)
			if err != nil {
				return err
			}
			objs, err := migrate.Decode(bytes.NewReader(data))
			if err != nil {
				return err
			}
			res := migrate.Convert(objs, migrate.Options{SecretNamespace: namespace})
			printWarnings(cmd.ErrOrStderr(), res.Warnings)
			if n := len(res.Losses()); n > 0 && !allowLoss {
				return fmt.Errorf("%w: %d lost (objects or fields left out, each printed as \"lost:\"); nothing written; --allow-loss writes the rest", ErrProblems, n)
			}
			out, err := res.YAML()
			if err != nil {
				return err
			}
			if _, err := cmd.OutOrStdout().Write(out); err != nil {
				return err
			}
			for _, t := range res.TypeConfigs {
				fmt.Fprintf(cmd.OutOrStdout(), "# TypeConfig: federation.NewTypeConfig(%#v, %q, %v, %q)\n", t.Target, t.TargetResource, t.Namespaced, t.ReplicasPath)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "filename", "f", "", "the KubeFed objects: a file, a directory of them (as kubectl -f reads one), or - for standard input")
	cmd.Flags().StringVar(&namespace, "secret-namespace", migrate.DefaultSecretNamespace, "the host namespace of the converted Cluster Secrets")
	cmd.Flags().BoolVar(&allowLoss, "allow-loss", false, "write what converts even when objects or fields are left out")
	_ = cmd.MarkFlagRequired("filename")
	return cmd
}

// readManifests reads file as readInput does; a directory is its .yaml, .yml and .json files
// in name order, one stream, as kubectl -f DIR reads them (KubeFed's example/sample1).
func readManifests(stdin io.Reader, file string) ([]byte, error) {
	if fi, err := os.Stat(file); err != nil || !fi.IsDir() {
		return readInput(stdin, file)
	}
	entries, err := os.ReadDir(file)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	for _, e := range entries { // in name order
		if e.IsDir() || !slices.Contains([]string{".yaml", ".yml", ".json"}, filepath.Ext(e.Name())) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(file, e.Name()))
		if err != nil {
			return nil, err
		}
		b.WriteString("---\n")
		b.Write(data)
		b.WriteString("\n")
	}
	return b.Bytes(), nil
}

// printWarnings prints one line per warning: "lost:" for a loss, "warning:" for the others.
func printWarnings(w io.Writer, ws []migrate.Warning) {
	for _, x := range ws {
		label := "warning:"
		if x.Loss {
			label = "lost:"
		}
		fmt.Fprintln(w, label, x)
	}
}
