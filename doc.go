// Package fedkit is a library for building Kubernetes federation control planes.
//
//	host := fake.NewHost("host") // serves fedkit's CRDs; federation/kube in production
//	fleet := fake.NewFleet()
//	fleet.Add("cluster-aws-us-east", map[string]string{federation.RegionLabel: "us-east-1"})
//	fleet.Add("cluster-gcp-eu-west", map[string]string{federation.RegionLabel: "europe-west1"})
//	err := fleet.Register(ctx, host) // the Cluster objects
//	cp, err := controlplane.New(host, fleet, controlplane.Options{})
//	err = cp.Run(ctx) // every loop, until ctx is done
//
// It chooses member clusters, divides replicas among them, renders per-cluster objects,
// pushes them, pulls their status back and publishes global DNS names. It follows KubeFed's
// API: Federated<Kind>, Cluster, ReplicaSchedulingPreference. It is delivered as importable
// packages rather than a binary. You embed the pieces you need in your own controller and
// own the process yourself.
//
// This package holds documentation only; the code lives in the packages listed below.
//
// # Getting started
//
// Everything runs against the [federation.ClusterClient] interface. So the fastest way in is
// the in-memory fleet from package fake, as above. It has a host, where federated objects,
// Clusters and ReplicaSchedulingPreferences live, and member clusters with region and zone
// labels.
//
// fleet.Register writes each member as a Cluster object on the host; fleet.Clusters()
// describes them. Then describe the workload once, as a FederatedDeployment: a template, a placement and
// per-cluster overrides, in KubeFed's YAML shape. Create it on the host with
// host.Create(ctx, federation.DeploymentType.FederatedGVR(), obj). A
// ReplicaSchedulingPreference of the same name divides its replicas.
//
// The decisions are pure functions you can call directly:
//
//	decision, _ := placement.Evaluate(fed.Spec.Placement, clusters) // which clusters, and why not the others
//	plan, _ := scheduler.Divide(scheduler.Request{Key: "production/app-frontend", TotalReplicas: 9, ...})
//	member, _ := override.Render(override.InputFor(fed, federation.DeploymentType)) // plus cluster and replicas
//
// and the loops act on them:
//
//	key := federation.Key{Namespace: "production", Name: "app-frontend"}
//	s, _ := scheduler.New(host, federation.DeploymentType, scheduler.Options{})
//	s.Reconcile(ctx, key) // writes status.schedule
//	push, _ := fedsync.New(host, fleet, federation.DeploymentType, fedsync.Options{})
//	push.Reconcile(ctx, key) // creates, updates, deletes the member Deployments
//	pull, _ := status.New(host, fleet, federation.DeploymentType, status.Options{})
//	pull.Reconcile(ctx, key) // writes status.clusters, status.aggregated and Ready
//
// In production each loop's Run(ctx) does the same on its own, watching the host and the
// members. Package controlplane runs them all.
//
// `go run ./examples/quickstart` runs the whole story in memory and prints every step.
//
// # Organization
//
// Package federation is the API and the shared vocabulary. It holds the types with their
// deep copies, scheme registration, defaults, validation and CRDs. It holds
// [federation.TypeConfig], which links a target type (Deployment) to its federated type
// (FederatedDeployment). It holds [federation.Key], [federation.Result] and
// [federation.Terminal]. And it holds the two interfaces every loop is written against,
// [federation.ClusterClient] and [federation.ClusterSet]. It imports nothing else from
// fedkit, so an embedder can depend on it alone.
//
// Package federation/kube implements ClusterClient and ClusterSet on client-go: dynamic
// clients built from Cluster objects and their Secrets, discovery, and informer-backed reads.
//
// Package placement decides, purely, which clusters a federated object may go to. It
// weighs names, label selectors, exclusions, region and zone affinity, taints and
// tolerations, readiness, a maximum count and spread over failure domains. It explains every
// cluster it leaves out.
//
// Package scheduler divides replicas among the selected clusters ([scheduler.Divide]:
// weights, minimums, maximums, capacity, current placement). It runs the loop that writes
// the decision into status.schedule.
//
// Package override renders the member object for one cluster: the template, retained member
// fields, the scheduled replicas and the cluster's RFC 6902 overrides.
//
// Package sync (imported as fedsync) is the push loop. [plan.Decide] (package sync/plan)
// decides, purely, what to create, update or delete in each cluster, and [plan.Report] what
// the status then says. The [sync.Syncer] drives them: it reads, acts with optimistic
// locking. It corrects drift in the fields the federation owns without fighting member
// controllers. It records revisions for [sync.Rollback]. It takes a new revision through the
// stages of spec.rollout, and rolls it back by itself when it fails. It cleans up on
// deletion.
//
// Package status is the pull loop. The [status.Collector] reads each placed member's object.
// It publishes per-cluster observations, sums and the Ready condition, and never publishes
// numbers from a partitioned minority. The [status.ClusterMonitor] probes each cluster and
// keeps its Cluster's readiness, capacity and taints.
//
// Package dnsrecord computes global, regional and zonal DNS names for federated Services and
// Ingresses ([dnsrecord.ServiceEndpoints]). It writes them as external-dns DNSEndpoints.
//
// Package controlplane is optional: every loop for every federated type in one New and one
// Run. A type whose CRD is missing is reported and retried while the rest runs. Events are
// recorded on the host. Several replicas run through leader election or through sharding
// (one Lease per shard, a dead replica's shards taken over).
//
// Package preview dry-runs the whole pipeline without touching a cluster. It shows where
// each object goes and why not elsewhere, the replicas, the rendered manifests, DNS names, a
// rollout's stages, and every validation error with its field path. Given the live member
// objects, it shows what sync would change. It calls the loops' own decision functions.
//
// Package fake is an in-memory API server and fleet with real API semantics and fault
// injection, for unit tests of placement strategies and of whole control planes.
//
// # Embedding the loops
//
// Each loop is built once with New(deps, Options) and starts nothing in its constructor. It
// exposes a one-pass Reconcile(ctx, key) (federation.Result, error), plus an optional
// Run(ctx) error that blocks until ctx is done. Your responsibilities as the embedder:
//
//  1. Build the clients: a ClusterClient for the host and a ClusterSet for the members
//     (federation/kube in production, fake in tests).
//  2. Install the CRDs from config/crd (or [federation.CRDs]) on the host.
//  3. Construct the loops you want for each [federation.TypeConfig] you federate.
//  4. Either call Run(ctx) for each (for example through controller-runtime's
//     manager.RunnableFunc), or feed keys to Reconcile from your own work queue.
//  5. Treat errors wrapped by [federation.Terminal] as "drop the key until it changes"; back off
//     and retry the rest; honour Result.RequeueAfter only when the error is nil.
//  6. Cancel the context to stop; Run returns after all its goroutines have exited.
//
// # Observing the loops
//
// Every loop's Options has the same three fields for it, each nil (or zero) for "none":
//
//   - Registerer, a prometheus.Registerer: passes by loop, type and outcome, requests to
//     member clusters by cluster, verb and result, the work queues of Run and the keys they
//     hand out (in controller-runtime's families, workqueue_* and controller_runtime_*), and
//     what each loop adds (schedule changes, cluster readiness, stale members, propagation
//     lag). METRICS.md lists every metric; fedkit never uses the global registry.
//   - Events, a [federation.EventRecorder] (client-go's record.EventRecorder is one): Events
//     on the federated objects, Clusters and DNS records when something a user cares about
//     changes (a schedule, a Ready condition, a member write, a DNS endpoint), never on a pass
//     that changed nothing.
//   - Logger, a logr.Logger, used when the context carries none. Each pass puts a logger with
//     the loop, the type and the object (the cluster, for the cluster monitor) into its
//     context, so everything it calls logs with them; sync adds the revision. No log line,
//     event or error carries credentials.
//
// # Testing with fake
//
// fake.NewFleet gives a ClusterSet of in-memory clusters. They behave like API servers
// where a controller can tell the difference: resourceVersion and Conflict, generation,
// finalizers, watches, label selectors. A test can inject errors, latency and network
// partitions per cluster and per verb, or drift objects behind the controller's back.
// Simulated workload controllers make Deployments report ready replicas, and LoadBalancer
// Services get addresses. So a whole control plane can be tested in memory.
//
// The difference between fake and real may matter: admission, defaulting, server-side
// apply. Then test against a real kube-apiserver: controller-runtime's envtest, or
// hack/dev-clusters.sh, which starts a host and two members and prints their kubeconfig.
// fedkit's own conformance suite runs every behaviour the fake models against both.
//
// A placement strategy is tested in a dozen lines. Write the objects as you would
// kubectl-apply them: Clusters with a Ready status, the FederatedDeployment, its
// ReplicaSchedulingPreference. Run one pass of the real Scheduler, and compare the schedule
// as a map:
//
//	host := fake.NewHost("host")
//	err := host.Apply(manifests) // YAML, "---" between documents
//	s, err := scheduler.New(host, federation.DeploymentType, scheduler.Options{})
//	_, err = s.Reconcile(ctx, key)
//	u, err := host.Get(ctx, federation.DeploymentType.FederatedGVR(), key.Namespace, key.Name)
//	obj, err := federation.FederatedObjectFromUnstructured(u)
//	diff := cmp.Diff(map[string]int64{"eu": 6, "us": 3}, obj.Status.Schedule.Replicas())
//
// examples/strategytest is such a test, to copy. In a new module, run go mod tidy after
// go get github.com/fedkit/fedkit: the first go test needs the go.sum entries it adds.
//
// [dnsrecord.ServiceEndpoints]: https://pkg.go.dev/github.com/fedkit/fedkit/dnsrecord#ServiceEndpoints
// [federation.CRDs]: https://pkg.go.dev/github.com/fedkit/fedkit/federation#CRDs
// [federation.ClusterClient]: https://pkg.go.dev/github.com/fedkit/fedkit/federation#ClusterClient
// [federation.ClusterSet]: https://pkg.go.dev/github.com/fedkit/fedkit/federation#ClusterSet
// [federation.EventRecorder]: https://pkg.go.dev/github.com/fedkit/fedkit/federation#EventRecorder
// [federation.Key]: https://pkg.go.dev/github.com/fedkit/fedkit/federation#Key
// [federation.Result]: https://pkg.go.dev/github.com/fedkit/fedkit/federation#Result
// [federation.Terminal]: https://pkg.go.dev/github.com/fedkit/fedkit/federation#Terminal
// [federation.TypeConfig]: https://pkg.go.dev/github.com/fedkit/fedkit/federation#TypeConfig
// [plan.Decide]: https://pkg.go.dev/github.com/fedkit/fedkit/sync/plan#Decide
// [plan.Report]: https://pkg.go.dev/github.com/fedkit/fedkit/sync/plan#Report
// [scheduler.Divide]: https://pkg.go.dev/github.com/fedkit/fedkit/scheduler#Divide
// [status.ClusterMonitor]: https://pkg.go.dev/github.com/fedkit/fedkit/status#ClusterMonitor
// [status.Collector]: https://pkg.go.dev/github.com/fedkit/fedkit/status#Collector
// [sync.Rollback]: https://pkg.go.dev/github.com/fedkit/fedkit/sync#Rollback
// [sync.Syncer]: https://pkg.go.dev/github.com/fedkit/fedkit/sync#Syncer
package fedkit
