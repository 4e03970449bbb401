// Package testenv runs real Kubernetes API servers for integration tests.
//
//	func TestMain(m *testing.M) {
//		os.Exit(testenv.Main(m, "host", "member1", "member2"))
//	}
//
//	func TestSomething(t *testing.T) {
//		env := testenv.Shared(t)
//		cs := kubernetes.NewForConfigOrDie(env.Config("member1"))
//		...
//	}
//
// It runs one etcd and one kube-apiserver per named cluster, all on 127.0.0.1 with free
// ports. The clusters share the etcd, but each apiserver stores under its own --etcd-prefix.
// So they are fully isolated: an object created in "member1" is not visible in "host".
//
// This is how fedkit's integration tests get a host and several member clusters. It costs a
// few seconds and about 300 MiB per apiserver, without containers, kind or a kubelet. So no
// pods run, and no controllers such as the namespace or garbage collector act; only the API
// does.
//
// # Binaries
//
// hack/install-testbins.sh builds the kube-apiserver and etcd binaries from the Go module
// proxy, into a versioned cache directory outside the clone:
//
//	hack/install-testbins.sh   # ~12-15 min the first time, instant afterwards
//
// testenv looks for them in Options.BinDir, else in $FEDKIT_TESTBIN_DIR, else in the
// script's default directory ([DefaultBinDir]). When they are missing, [Start] returns an
// error that matches [ErrBinariesMissing], and [Shared] skips the test. That is unless the
// environment variable CI is "true": there it fails the test, so a misconfigured CI cannot
// pass by skipping everything.
//
// # One environment per test binary
//
// Starting API servers takes seconds, so a package's tests normally share one environment.
// Call [Main] from TestMain and [Shared] from each test, as above.
//
// The environment starts on the first call to Shared, so `go test -run` of tests that don't
// need it costs nothing. It stops when the tests are done. Shared skips in -short mode. Tests
// that share an environment share its state: give each test its own namespaces or names, and
// clean up what you create.
//
// A test that needs its own, fresh clusters calls [Start] and [Env.Stop]:
//
//	env, err := testenv.Start(ctx, testenv.Options{Clusters: []string{"a", "b"}})
//	if err != nil { ... }
//	defer env.Stop()
//
// # What you get
//
// [Env.Config] returns a *rest.Config for a cluster:
//
//   - https://127.0.0.1:port;
//   - an admin bearer token: user "admin" in group system:masters, so RBAC allows
//     everything;
//   - the CA of the apiserver's self-signed serving certificate, so TLS verification stays
//     on.
//
// QPS and Burst are raised so client-side throttling does not slow tests down.
//
// The apiservers run with the ServiceAccount admission plugin disabled, since no
// controller-manager creates default service accounts. They run with no endpoint reconciler.
// Namespaces can be created. But with no namespace controller, a deleted namespace stays
// Terminating forever: prefer unique namespace names to deleting and re-creating one.
//
// # Processes
//
// Every process's stdout and stderr go to a log file in the environment's temporary
// directory. When a process fails to become ready, the error includes the tail of its log.
// On Linux the processes get Pdeathsig SIGKILL. So they die with the test binary even when
// it is killed (for example by `go test -timeout`), and cannot outlive it; only the temporary
// directory may be left behind then. [Env.Stop] kills the apiservers, then etcd, waits for
// them and removes the directory. It is idempotent.
package testenv
