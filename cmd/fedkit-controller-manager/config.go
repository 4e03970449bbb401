package main

import "github.com/fedkit/fedkit/cmd/internal/process"

// loadConfig finds the host's configuration from the flags, in controller-runtime's order
// (process.Load): --kubeconfig, KUBECONFIG, the in-cluster configuration under
// --serviceaccount-dir, ~/.kube/config; --host-context picks a kubeconfig context. getenv is
// os.Getenv but in tests.
func loadConfig(f *flags, getenv func(string) string) (process.Config, error) {
	return process.Load(process.Source{
		Kubeconfig: f.kubeconfig, Context: f.hostContext, ContextFlag: "--host-context",
		ServiceAccountDir: f.serviceAccountDir, Getenv: getenv,
	})
}
