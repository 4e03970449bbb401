package dependencies_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fedkit/fedkit/dependencies"
	"github.com/fedkit/fedkit/federation"
)

// TestUnion: a dependency goes to the union of its workloads' clusters whose pods refer to
// it; a second workload widens it, one that leaves narrows it, one placed nowhere keeps it
// nowhere, and a cluster's overrides send what its own pods refer to.
func TestUnion(t *testing.T) {
	web := dependencies.Workload{Kind: "FederatedDeployment", Name: "web", Clusters: []string{"b", "a"}, References: refs("ConfigMap", "shared", "Secret", "web?")}
	api := dependencies.Workload{Kind: "FederatedDeployment", Name: "api", Clusters: []string{"c", "a"}, References: refs("ConfigMap", "shared?")}
	idle := dependencies.Workload{Kind: "FederatedJob", Name: "idle", References: refs("Secret", "web")}
	goingAPI := api
	goingAPI.Deleting = true
	// db's template reads creds-us; eu's override reads creds-eu instead.
	overridden := dependencies.Workload{Kind: "FederatedDeployment", Name: "db", Clusters: []string{"eu", "us"}, References: refs("Secret", "creds-us"),
		ByCluster: map[string][]dependencies.Reference{"eu": refs("Secret", "creds-eu")}}
	// Both clusters override the template's creds.
	everywhere := dependencies.Workload{Kind: "FederatedDeployment", Name: "db", Clusters: []string{"eu", "us"}, References: refs("Secret", "creds"),
		ByCluster: map[string][]dependencies.Reference{"eu": refs("Secret", "creds-eu"), "us": refs("Secret", "creds-us")}}
	for _, tc := range []struct {
		name      string
		workloads []dependencies.Workload
		want      []dependencies.Dependency
	}{
		{"nothing", nil, nil},
		{"one workload", []dependencies.Workload{web}, []dependencies.Dependency{
			{Reference: dependencies.Reference{Kind: "ConfigMap", Name: "shared"}, Clusters: []string{"a", "b"}, RequiredBy: []string{"FederatedDeployment/web"}},
			{Reference: dependencies.Reference{Kind: "Secret", Name: "web", Optional: true}, Clusters: []string{"a", "b"}, RequiredBy: []string{"FederatedDeployment/web"}},
		}},
		{"a second workload widens, optional only if every one says so", []dependencies.Workload{api, web}, []dependencies.Dependency{
			{Reference: dependencies.Reference{Kind: "ConfigMap", Name: "shared"}, Clusters: []string{"a", "b", "c"}, RequiredBy: []string{"FederatedDeployment/api", "FederatedDeployment/web"}},
			{Reference: dependencies.Reference{Kind: "Secret", Name: "web", Optional: true}, Clusters: []string{"a", "b"}, RequiredBy: []string{"FederatedDeployment/web"}},
		}},
		{"narrowed when the wider workload leaves", []dependencies.Workload{api}, []dependencies.Dependency{
			{Reference: dependencies.Reference{Kind: "ConfigMap", Name: "shared", Optional: true}, Clusters: []string{"a", "c"}, RequiredBy: []string{"FederatedDeployment/api"}},
		}},
		{"a workload being deleted gives only Leaving clusters, those no other workload gives", []dependencies.Workload{goingAPI, web}, []dependencies.Dependency{
			{Reference: dependencies.Reference{Kind: "ConfigMap", Name: "shared"}, Clusters: []string{"a", "b"}, Leaving: []string{"c"}, RequiredBy: []string{"FederatedDeployment/api", "FederatedDeployment/web"}},
			{Reference: dependencies.Reference{Kind: "Secret", Name: "web", Optional: true}, Clusters: []string{"a", "b"}, RequiredBy: []string{"FederatedDeployment/web"}},
		}},
		{"only a workload being deleted", []dependencies.Workload{goingAPI}, []dependencies.Dependency{
			{Reference: dependencies.Reference{Kind: "ConfigMap", Name: "shared", Optional: true}, Leaving: []string{"a", "c"}, RequiredBy: []string{"FederatedDeployment/api"}},
		}},
		{"a workload placed nowhere adds no cluster", []dependencies.Workload{idle, web}, []dependencies.Dependency{
			{Reference: dependencies.Reference{Kind: "ConfigMap", Name: "shared"}, Clusters: []string{"a", "b"}, RequiredBy: []string{"FederatedDeployment/web"}},
			{Reference: dependencies.Reference{Kind: "Secret", Name: "web"}, Clusters: []string{"a", "b"}, RequiredBy: []string{"FederatedDeployment/web", "FederatedJob/idle"}},
		}},
		{"a cluster's overrides point its pods elsewhere: each dependency where it is referenced", []dependencies.Workload{overridden}, []dependencies.Dependency{
			{Reference: dependencies.Reference{Kind: "Secret", Name: "creds-eu"}, Clusters: []string{"eu"}, RequiredBy: []string{"FederatedDeployment/db"}},
			{Reference: dependencies.Reference{Kind: "Secret", Name: "creds-us"}, Clusters: []string{"us"}, RequiredBy: []string{"FederatedDeployment/db"}},
		}},
		{"what no cluster's pods refer to is no dependency", []dependencies.Workload{everywhere}, []dependencies.Dependency{
			{Reference: dependencies.Reference{Kind: "Secret", Name: "creds-eu"}, Clusters: []string{"eu"}, RequiredBy: []string{"FederatedDeployment/db"}},
			{Reference: dependencies.Reference{Kind: "Secret", Name: "creds-us"}, Clusters: []string{"us"}, RequiredBy: []string{"FederatedDeployment/db"}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, dependencies.Union(tc.workloads)); diff != "" {
				t.Errorf("union (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWhere: a dependency is in its Clusters, and in those of its Leaving clusters (given
// by workloads being deleted) it is in already: they keep it there, never put it anywhere.
func TestWhere(t *testing.T) {
	dep := dependencies.Dependency{Clusters: []string{"b"}, Leaving: []string{"a", "c"}}
	for _, tc := range []struct {
		name    string
		dep     dependencies.Dependency
		current []string
		want    []string
	}{
		{"federated nowhere: only Clusters", dep, nil, []string{"b"}},
		{"narrowed already: not widened again", dep, []string{"b"}, []string{"b"}},
		{"still in a leaving cluster: kept", dep, []string{"c", "b"}, []string{"b", "c"}},
		{"still in a cluster nobody needs: dropped", dep, []string{"b", "d"}, []string{"b"}},
		{"only leaving workloads, federated nowhere", dependencies.Dependency{Leaving: []string{"a"}}, nil, nil},
		{"only leaving workloads, still there", dependencies.Dependency{Leaving: []string{"a"}}, []string{"a"}, []string{"a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.dep.Where(tc.current)); diff != "" {
				t.Errorf("Where(%v) (-want +got):\n%s", tc.current, diff)
			}
		})
	}
}

// TestClusters: where a workload's dependencies must be is its schedule (a failover moves
// it), the clusters a graceful eviction keeps replicas in, and every cluster that still
// holds its member object.
func TestClusters(t *testing.T) {
	obj := &federation.FederatedObject{}
	obj.Status.Schedule = &federation.Schedule{Clusters: []federation.ScheduledCluster{{Name: "new"}, {Name: "kept"}}, Evictions: []federation.Eviction{{Cluster: "evicting"}}}
	obj.Status.Clusters = []federation.MemberStatus{{Name: "kept"}, {Name: "leaving"}}
	if diff := cmp.Diff([]string{"evicting", "kept", "leaving", "new"}, dependencies.Clusters(obj)); diff != "" {
		t.Error(diff)
	}
	if got := dependencies.Clusters(&federation.FederatedObject{}); got != nil {
		t.Errorf("an unplaced workload: %v", got)
	}
}
