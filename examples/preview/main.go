// Command preview prints what fedkit's loops would do with federated objects, without
// touching any cluster: for each object, the clusters it goes to and why the others were
// left out, the replicas per cluster and how they came about, for an object with
// spec.rollout the stages a new revision goes through and the clusters it changes in each,
// warnings and validation errors with their field paths, DNS names, then the member
// manifests as YAML.
//
//	go run ./examples/preview -f objects.yaml
//	go run ./examples/preview -f objects.yaml --kubeconfig ~/.kube/config --contexts aws,gcp
//	go run ./examples/preview -f objects.yaml -o json
//
// objects.yaml holds Federated<Kind> objects, their ReplicaSchedulingPreferences, the
// Clusters and, optionally, ServiceDNSRecords, IngressDNSRecords and Domains. With
// --kubeconfig the member objects are read from the clusters (read only) and the preview adds
// what sync would change in each: create, update with the owned fields that differ, delete,
// or nothing. --contexts maps Clusters to kubeconfig contexts: "name" (the context of the
// Cluster's name) or "cluster=context"; without it, each Cluster whose name is a context of
// the file is read. The command exits with status 1 when the input has errors.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/fedkit/fedkit/federation/kube"
	"github.com/fedkit/fedkit/preview"
)

func main() {
	err := run(context.Background(), os.Args[1:], os.Stdout, time.Now())
	var found errorsFound
	switch {
	case errors.As(err, &found):
		fmt.Fprintln(os.Stderr, "preview:", err)
		os.Exit(1)
	case errors.Is(err, flag.ErrHelp):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "preview:", err)
		os.Exit(2)
	}
}

// errorsFound is run's error when the report has errors: it was printed all the same.
type errorsFound int

func (n errorsFound) Error() string { return fmt.Sprintf("%d error(s) in the input", int(n)) }

// options are the command line.
type options struct {
	file        string
	kubeconfig  string
	contexts    string
	output      string
	assumeReady bool
	fresh       bool
}

func parse(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("preview", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.file, "f", "", "the YAML file of federated objects, Clusters, ReplicaSchedulingPreferences and DNS records (- for stdin)")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "a kubeconfig file: read the member objects from its contexts and show what sync would change")
	fs.StringVar(&o.contexts, "contexts", "", `the clusters to read, comma-separated: "name" (the context of that name) or "cluster=context"; default: every Cluster named like a context`)
	fs.StringVar(&o.output, "o", "text", "output format: text or json")
	fs.BoolVar(&o.assumeReady, "assume-ready", true, "treat Clusters without a Ready condition (written by hand) as ready")
	fs.BoolVar(&o.fresh, "fresh", false, "schedule as if nothing had been scheduled before (ignore status.schedule)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case o.file == "":
		return o, errors.New("-f is required")
	case o.output != "text" && o.output != "json":
		return o, fmt.Errorf("-o %q: want text or json", o.output)
	case o.contexts != "" && o.kubeconfig == "":
		return o, errors.New("--contexts needs --kubeconfig")
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return o, nil
}

// run is the command, with its output and clock given.
func run(ctx context.Context, args []string, stdout io.Writer, now time.Time) error {
	o, err := parse(args, os.Stderr)
	if err != nil {
		return err
	}
	var data []byte
	if o.file == "-" {
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(o.file)
	}
	if err != nil {
		return err
	}
	in, err := preview.Decode(data)
	if err != nil {
		return fmt.Errorf("%s: %w", o.file, err)
	}
	in.Now, in.AssumeReady, in.Fresh = now, o.assumeReady, o.fresh
	if o.kubeconfig != "" {
		clusters, contexts, err := contextsFor(o.contexts, in)
		if err != nil {
			return err
		}
		set, err := kube.ClusterSetFromKubeconfig(o.kubeconfig, kube.ClusterSetOptions{}, contexts...)
		if err != nil {
			return err
		}
		if in.Live, err = readLive(ctx, set, clusters, in); err != nil {
			return err
		}
	}
	return report(stdout, in, o.output)
}

// report runs the preview and prints it.
func report(w io.Writer, in preview.Input, output string) error {
	rep, err := preview.Run(in)
	if err != nil {
		return err
	}
	if output == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else if err := printText(w, rep); err != nil {
		return err
	}
	if n := len(rep.Errors()); n > 0 {
		return errorsFound(n)
	}
	return nil
}

// contextsFor maps Clusters to contexts: from --contexts, or each Cluster of the input to the
// context of its name (missing contexts are then not an error: ClusterSetFromKubeconfig is
// given every context, and clusters without one are not read).
func contextsFor(flagValue string, in preview.Input) (map[string]string, []string, error) {
	clusters := map[string]string{}
	if flagValue == "" {
		for _, c := range in.Clusters {
			clusters[c.Name] = c.Name
		}
		return clusters, nil, nil
	}
	var contexts []string
	for _, part := range strings.Split(flagValue, ",") {
		part = strings.TrimSpace(part)
		cluster, context, mapped := strings.Cut(part, "=")
		if !mapped {
			context = cluster
		}
		if cluster == "" || context == "" {
			return nil, nil, fmt.Errorf("--contexts: %q: want name or cluster=context", part)
		}
		clusters[cluster] = context
		contexts = append(contexts, context)
	}
	return clusters, contexts, nil
}
