package kubectlfed

import (
	"bytes"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/fedkit/fedkit/migrate"
)

func migrateCommand(g *globals) *cobra.Command {
	var file, namespace string
	cmd := &cobra.Command{
		Use:   "migrate -f kubefed.yaml",
		Short: "Convert KubeFed v0.10 objects into fedkit's",
		Long: `migrate reads KubeFed v0.10 objects (KubeFedCluster and their Secrets, FederatedTypeConfig,
ReplicaSchedulingPreference, Federated<Kind> of types.kubefed.io), as kubectl get -o yaml
prints them, and writes fedkit's to standard output, ready for kubectl apply -f -. What does not
carry over goes to standard error, one line per object and field. A converted preference uses
the KubeFed algorithm: fedkit's scheduler keeps KubeFed's schedule, replica for replica.
FederatedTypeConfigs become TypeConfigs, printed as comments: fedkit has no such object.`,
		Example: "  kubectl get kubefedclusters,secrets -n kube-federation-system -o yaml > kubefed.yaml\n  kubectl fed migrate -f kubefed.yaml | kubectl apply -f -",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			data, err := readInput(cmd.InOrStdin(), file)
			if err != nil {
				return err
			}
			objs, err := migrate.Decode(bytes.NewReader(data))
			if err != nil {
				return err
			}
			res := migrate.Convert(objs, migrate.Options{SecretNamespace: namespace})
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
			for _, w := range res.Warnings {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning:", w)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "filename", "f", "", "the KubeFed objects (- for standard input)")
	cmd.Flags().StringVar(&namespace, "secret-namespace", migrate.DefaultSecretNamespace, "the host namespace of the converted Cluster Secrets")
	_ = cmd.MarkFlagRequired("filename")
	return cmd
}
