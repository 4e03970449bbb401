// Package process is what fedkit's programs share as processes: how they find a cluster's
// configuration, their logger and their version.
//
//	cfg, err := process.Load(process.Source{Kubeconfig: *kubeconfig, Context: *ctxName,
//		ServiceAccountDir: process.DefaultServiceAccountDir, Getenv: os.Getenv})
//	log, err := process.NewLogger("json", 0, os.Stderr)
//	fmt.Println(process.Version(linkedVersion))
//
// fedkit-controller-manager and fedkit-agent use it; Go's internal rule keeps it under cmd/.
// It is not the library: an embedder's program finds its configuration as it likes.
package process
