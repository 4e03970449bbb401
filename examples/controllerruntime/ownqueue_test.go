package main

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/fedkit/fedkit/federation/kube"
)

// TestOwnQueueCorrectsMemberDrift runs the manager with sync driven from a controller-runtime
// controller (ownqueue.go) instead of Syncer.Run: the Deployment reaches the member, and when
// someone changes it in the member, the member trigger (fedsync's WatchMembers) requeues the
// FederatedDeployment and sync puts it back within a minute, long before any resync (sync's
// is ten minutes, controller-runtime's ten hours). The status collector is left out: its
// status writes would requeue the object too, hiding whether the member trigger works.
func TestOwnQueueCorrectsMemberDrift(t *testing.T) {
	cfgs := startAPIServers(t, "host", "member")
	host, err := kube.New(cfgs["host"], kube.Options{})
	must(t, err)
	member, err := kube.New(cfgs["member"], kube.Options{})
	must(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	installCRDs(ctx, t, host)
	apply(ctx, t, host, fleetManifests(cfgs["member"]))

	logs := &lockedBuffer{}
	log := logr.FromSlogHandler(slog.NewTextHandler(logs, nil))
	ctrl.SetLogger(log)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("manager logs:\n%s", logs.String())
		}
	})
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- run(runCtx, cfgs["host"], config{
			Namespace: "fedkit-system", MetricsAddr: "0", ProbeAddr: "0", OwnQueue: true, NoCollector: true,
			Registerer: prometheus.NewRegistry(), Logger: log,
		})
	}()
	t.Cleanup(func() {
		stop()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("the manager stopped with %v", err)
			}
		case <-time.After(time.Minute):
			t.Error("the manager did not stop a minute after its context ended")
		}
	})

	image := func(want string) func() error {
		return func() error {
			u, err := member.Get(ctx, deployments, "shop", "web")
			if err != nil {
				return err
			}
			cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
			if len(cs) == 0 {
				return fmt.Errorf("no containers")
			}
			if got := cs[0].(map[string]any)["image"]; got != want {
				return fmt.Errorf("image %v", got)
			}
			return nil
		}
	}
	eventually(ctx, t, "sync creates the Deployment in the member", image("nginx:1.27"))

	u, err := member.Get(ctx, deployments, "shop", "web")
	must(t, err)
	cs, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	cs[0].(map[string]any)["image"] = "nginx:drifted"
	must(t, unstructured.SetNestedSlice(u.Object, cs, "spec", "template", "spec", "containers"))
	_, err = member.Update(ctx, deployments, u)
	must(t, err)
	driftCtx, driftCancel := context.WithTimeout(ctx, time.Minute)
	defer driftCancel()
	eventually(driftCtx, t, "sync corrects the drift in the member", image("nginx:1.27"))
}
