package dependencies

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/placement"
)

// pass is one pass over a namespace: what it reads once, and what it learns of the
// dependencies for the workloads' conditions.
type pass struct {
	r  federation.Reader
	ns string
	// reserved says why nothing in ns follows a workload (federation.ReservedNamespace: a
	// system namespace, the control plane's own); "" when things may.
	reserved string

	// clusters are the host's Clusters, read at the first need (overrides to render, a
	// user's dependency to place); listed says they were.
	clusters []federation.Cluster
	listed   bool

	// By dependency, "Kind/name": missing on the host and not optional; refused, and why
	// (credentials); excluded by its own placement from clusters its workloads need it in.
	missing  map[string]bool
	refused  map[string]string
	excluded map[string]map[string]placement.Diagnosis

	// requeue is how soon to look again (0: no need); wrote, whether the pass wrote.
	requeue time.Duration
	wrote   bool
}

func newPass(r federation.Reader, ns string) *pass {
	return &pass{r: r, ns: ns, missing: map[string]bool{}, refused: map[string]string{}, excluded: map[string]map[string]placement.Diagnosis{}}
}

// fleet returns the host's Clusters, listed once per pass.
func (p *pass) fleet(ctx context.Context, d *Dependencies) ([]federation.Cluster, error) {
	if p.listed {
		return p.clusters, nil
	}
	out, err := d.clusters.List(ctx, p.r, logr.FromContextOrDiscard(ctx))
	if err != nil {
		return nil, fmt.Errorf("dependencies: list Clusters: %w", err)
	}
	p.clusters, p.listed = out, true
	return out, nil
}

// refuse records that dep never follows a workload, and why.
func (p *pass) refuse(dep Dependency, why string) {
	p.refused[dep.String()] = why
}

// later asks to look again within d.
func (p *pass) later(d time.Duration) {
	if p.requeue == 0 || d < p.requeue {
		p.requeue = d
	}
}

// problem is one thing wrong with a workload's dependencies: the condition's reason and what
// to say of it.
type problem struct{ reason, message string }

// problems are what is wrong with f's dependencies, the one that decides the condition's
// reason first: a namespace nothing is federated from (alone), a template that cannot be read, then dependencies missing, refused
// (credentials), and excluded by their own placement from clusters f runs in. Each names the
// dependencies, and the clusters where that matters.
func (p *pass) problems(f *found) []problem {
	if p.reserved != "" {
		return []problem{{ReasonNamespaceRefused, p.reserved + ", so no dependency follows a workload there"}}
	}
	if f.invalid != nil {
		return []problem{{ReasonInvalidTemplate, f.invalid.Error()}}
	}
	var out []problem
	if names := f.named(func(r Reference) string {
		if p.missing[r.String()] {
			return r.String()
		}
		return ""
	}); len(names) > 0 {
		out = append(out, problem{ReasonDependencyMissing, fmt.Sprintf("not found in namespace %s: %s; the workload propagates without it, and it follows once it exists",
			p.ns, strings.Join(names, ", "))})
	}
	if names := f.named(func(r Reference) string {
		if why := p.refused[r.String()]; why != "" {
			return r.String() + " (" + why + ")"
		}
		return ""
	}); len(names) > 0 {
		out = append(out, problem{ReasonDependencyRefused, "credentials never follow a workload: " + strings.Join(names, ", ")})
	}
	if names := p.excludedFor(f); len(names) > 0 {
		out = append(out, problem{ReasonDependencyNotPlaceable, "an explicit exclusion wins, so not placed where the workload runs: " + strings.Join(names, "; ")})
	}
	return out
}

// named applies say to each of f's references, in order, and returns what it says ("" is
// nothing).
func (f *found) named(say func(Reference) string) []string {
	var out []string
	for _, r := range f.refs {
		if s := say(r); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// excludedFor names, for each dependency of f that its own placement keeps out of a cluster
// whose pods refer to it, the cluster and why: "ConfigMap/a in us (ExcludeClusters: ...)".
func (p *pass) excludedFor(f *found) []string {
	if len(p.excluded) == 0 || f.wl.Deleting {
		return nil
	}
	var out []string
	for _, c := range f.wl.Clusters {
		for _, r := range f.wl.In(c) {
			if x, ok := p.excluded[r.String()][c]; ok {
				out = append(out, fmt.Sprintf("%s in %s (%s: %s)", r, c, x.Rule, x.Detail))
			}
		}
	}
	slices.Sort(out)
	return out
}
