package kubectlfed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/fedkit/fedkit/agent"
	"github.com/fedkit/fedkit/federation"
)

// joinPull registers o.cluster in pull mode: on the host only (the member is never reached
// and no credential of it is kept), the cluster's namespace and its agent's identity there
// (agent.HostManifests), the Cluster with spec.mode Pull, and a token of the agent's
// ServiceAccount, written as a kubeconfig for the host to --agent-kubeconfig (never printed).
func (g *globals) joinPull(ctx context.Context, out io.Writer, o *joinOptions) error {
	if o.agentConfig == "" {
		return errors.New("--mode Pull needs --agent-kubeconfig FILE: the agent's credential is written there, never printed")
	}
	ns := federation.PullNamespace(o.cluster)
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return fmt.Errorf("cluster name %q: its namespace on the host, %s: %s", o.cluster, ns, errs[0])
	}
	hostCfg, _, err := g.host()
	if err != nil {
		return err
	}
	h, err := newApplier(hostCfg)
	if err != nil {
		return fmt.Errorf("host: %w", err)
	}
	cluster := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": federation.CoreGroupVersion.String(), "kind": "Cluster",
		"metadata": map[string]any{"name": o.cluster},
		"spec":     map[string]any{"mode": string(federation.ClusterModePull)},
	}}
	for _, u := range append(agent.HostManifests(o.cluster), cluster) {
		if err := h.apply(ctx, u); err != nil {
			return fmt.Errorf("host: %w", err)
		}
	}
	fmt.Fprintf(out, "host: namespace %s, ServiceAccount, Role and RoleBinding %s (Assignments read, their status and the agent's Lease written, there only), Cluster %s (mode Pull)\n", ns, agent.IdentityName, o.cluster)

	cs, err := kubernetes.NewForConfig(hostCfg)
	if err != nil {
		return err
	}
	secs := int64(o.lifetime / time.Second)
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, agent.IdentityName,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &secs}}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("host: request a token of ServiceAccount %s/%s (TokenRequest API): %w", ns, agent.IdentityName, err)
	}
	if err := writeAgentConfig(o.agentConfig, hostCfg.Host, hostCA(hostCfg.CAData, hostCfg.CAFile), ns, tr.Status.Token); err != nil {
		return err
	}
	fmt.Fprintf(out, "agent: kubeconfig for the host written to %s; its token of ServiceAccount %s/%s expires at %s: run join again before then to renew it\n",
		o.agentConfig, ns, agent.IdentityName, tr.Status.ExpirationTimestamp.UTC().Format(time.RFC3339))
	fmt.Fprintf(out, "cluster %q joined in pull mode: run its agent in the member (agent.New) with that kubeconfig\n", o.cluster)
	return nil
}

// hostCA returns the host's CA bundle, from the data or the file of the kubeconfig.
func hostCA(data []byte, file string) []byte {
	if len(data) == 0 && file != "" {
		data, _ = os.ReadFile(file)
	}
	return data
}

// writeAgentConfig writes a kubeconfig for the host with the agent's token, in its
// namespace, readable by the owner only.
func writeAgentConfig(path, server string, ca []byte, ns, token string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["host"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos[agent.IdentityName] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["agent"] = &clientcmdapi.Context{Cluster: "host", AuthInfo: agent.IdentityName, Namespace: ns}
	cfg.CurrentContext = "agent"
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("write the agent's kubeconfig: %w", err)
	}
	return os.Chmod(path, 0o600)
}

// pullCluster reports whether the Cluster named name is registered in pull mode.
func pullCluster(ctx context.Context, host federation.Reader, name string) bool {
	u, err := host.Get(ctx, federation.ClusterGVR, "", name)
	if err != nil {
		return false
	}
	mode, _, _ := unstructured.NestedString(u.Object, "spec", "mode")
	return mode == string(federation.ClusterModePull)
}

// revokeAgent deletes what join --mode Pull made on the host for cluster: the agent's
// RoleBinding, Role and ServiceAccount (its tokens stop working with it), then the
// cluster's namespace. The member is never reached.
func revokeAgent(ctx context.Context, out io.Writer, h *applier, cluster string) error {
	objs := agent.HostManifests(cluster)
	deleted := 0
	for i := len(objs) - 1; i >= 0; i-- { // the binding first, the namespace last
		gone, err := h.remove(ctx, objs[i])
		if err != nil {
			return fmt.Errorf("host: %w", err)
		}
		if gone {
			deleted++
		}
	}
	fmt.Fprintf(out, "host: the agent's identity and namespace %s deleted (%d of %d objects)\n", federation.PullNamespace(cluster), deleted, len(objs))
	return nil
}
