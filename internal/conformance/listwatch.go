package conformance

import (
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

func itemNames(l *unstructured.UnstructuredList) []string {
	var out []string
	for _, u := range l.Items {
		out = append(out, u.GetName())
	}
	sort.Strings(out)
	return out
}

// listWatchBehaviours: selectors, list resourceVersions, and the watch contract.
func listWatchBehaviours() []behaviour {
	return []behaviour{
		{"list/label-selectors", func(t *testing.T, e *env) {
			ns := e.ns
			e.create(t, ConfigMapGVR, configMap(ns, "sel-web-prod", map[string]string{"app": "web", "env": "prod"}, nil))
			e.create(t, ConfigMapGVR, configMap(ns, "sel-web-dev", map[string]string{"app": "web", "env": "dev"}, nil))
			e.create(t, ConfigMapGVR, configMap(ns, "sel-db", map[string]string{"app": "db"}, nil))
			tests := []struct {
				selector string
				want     []string
			}{
				{"app=web", []string{"sel-web-dev", "sel-web-prod"}},
				{"app=web,env=prod", []string{"sel-web-prod"}},
				{"app!=web,app", []string{"sel-db"}},
				{"env in (dev,staging)", []string{"sel-web-dev"}},
				{"app,!env", []string{"sel-db"}},
				{"app=none", nil},
			}
			for _, tt := range tests {
				l, err := e.c.List(e.ctx, ConfigMapGVR, ns, metav1.ListOptions{LabelSelector: tt.selector})
				require.NoError(t, err, tt.selector)
				if diff := cmp.Diff(tt.want, itemNames(l)); diff != "" {
					t.Errorf("List(%q) mismatch (-want +got):\n%s", tt.selector, diff)
				}
			}
			_, err := e.c.List(e.ctx, ConfigMapGVR, ns, metav1.ListOptions{LabelSelector: "app in in"})
			require.True(t, apierrors.IsBadRequest(err), "a malformed selector: want BadRequest, got %v", err)
		}},
		{"list/field-selector-on-name", func(t *testing.T, e *env) {
			e.create(t, ConfigMapGVR, configMap(e.ns, "field-a", nil, nil))
			e.create(t, ConfigMapGVR, configMap(e.ns, "field-b", nil, nil))
			l, err := e.c.List(e.ctx, ConfigMapGVR, e.ns, metav1.ListOptions{FieldSelector: "metadata.name=field-b"})
			require.NoError(t, err)
			require.Equal(t, []string{"field-b"}, itemNames(l))
		}},
		{"list/namespace-scoping", func(t *testing.T, e *env) {
			e.create(t, ConfigMapGVR, configMap(e.ns, "scoped", map[string]string{"scope": e.run}, nil))
			l, err := e.c.List(e.ctx, ConfigMapGVR, "", metav1.ListOptions{LabelSelector: "scope=" + e.run})
			require.NoError(t, err)
			require.Equal(t, []string{"scoped"}, itemNames(l), "namespace \"\" lists all namespaces")
			require.Equal(t, e.ns, l.Items[0].GetNamespace())
			l, err = e.c.List(e.ctx, ConfigMapGVR, e.ns+"-elsewhere", metav1.ListOptions{LabelSelector: "scope=" + e.run})
			require.NoError(t, err, "listing an empty or missing namespace is not an error")
			require.Empty(t, l.Items)
		}},
		{"list/cluster-scoped-with-selector", func(t *testing.T, e *env) {
			a := cluster(e.name("list-a"))
			a.SetLabels(map[string]string{"run": e.run, "tier": "prod"})
			b := cluster(e.name("list-b"))
			b.SetLabels(map[string]string{"run": e.run})
			e.create(t, ClusterGVR, a)
			e.create(t, ClusterGVR, b)
			l, err := e.c.List(e.ctx, ClusterGVR, "", metav1.ListOptions{LabelSelector: "run=" + e.run + ",tier=prod"})
			require.NoError(t, err)
			require.Equal(t, []string{a.GetName()}, itemNames(l))
		}},
		{"list/has-resource-version", func(t *testing.T, e *env) {
			l, err := e.c.List(e.ctx, ConfigMapGVR, e.ns, metav1.ListOptions{})
			require.NoError(t, err)
			require.NotEmpty(t, l.GetResourceVersion())
		}},
		{"watch/events-in-order", func(t *testing.T, e *env) {
			sel := metav1.ListOptions{LabelSelector: "watch=order-" + e.run}
			l, err := e.c.List(e.ctx, ConfigMapGVR, e.ns, sel)
			require.NoError(t, err)
			sel.ResourceVersion = l.GetResourceVersion()
			w := e.watch(t, ConfigMapGVR, e.ns, sel)

			labels := map[string]string{"watch": "order-" + e.run}
			created := e.create(t, ConfigMapGVR, configMap(e.ns, "watched", labels, map[string]string{"k": "1"}))
			set(t, created, "2", "data", "k")
			updated := e.update(t, ConfigMapGVR, created)
			require.NoError(t, e.c.Delete(e.ctx, ConfigMapGVR, e.ns, "watched", metav1.DeleteOptions{}))

			wantTypes := []watch.EventType{watch.Added, watch.Modified, watch.Deleted}
			wantRVs := []string{created.GetResourceVersion(), updated.GetResourceVersion(), ""}
			for i, want := range wantTypes {
				ev := e.next(t, w)
				require.Equal(t, want, ev.Type, "event %d: %s", i, eventName(ev))
				u := ev.Object.(*unstructured.Unstructured)
				require.Equal(t, "watched", u.GetName())
				if wantRVs[i] != "" {
					require.Equal(t, wantRVs[i], u.GetResourceVersion(), "event %d carries the written resourceVersion", i)
				}
				if want == watch.Modified {
					require.Equal(t, "2", str(u, "data", "k"), "MODIFIED carries the new object")
				}
			}
		}},
		{"watch/resume-from-resource-version", func(t *testing.T, e *env) {
			labels := map[string]string{"watch": "resume-" + e.run}
			created := e.create(t, ConfigMapGVR, configMap(e.ns, "resumed", labels, map[string]string{"k": "1"}))
			set(t, created, "2", "data", "k")
			updated := e.update(t, ConfigMapGVR, created)
			set(t, updated, "3", "data", "k")
			third := e.update(t, ConfigMapGVR, updated)

			w := e.watch(t, ConfigMapGVR, e.ns, metav1.ListOptions{
				LabelSelector: "watch=resume-" + e.run, ResourceVersion: created.GetResourceVersion(),
			})
			for _, want := range []*unstructured.Unstructured{updated, third} {
				ev := e.next(t, w)
				require.Equal(t, watch.Modified, ev.Type, eventName(ev))
				require.Equal(t, want.GetResourceVersion(), ev.Object.(*unstructured.Unstructured).GetResourceVersion())
			}
			e.noEvent(t, w, 300*time.Millisecond)
		}},
		{"watch/without-resource-version-starts-with-current-objects", func(t *testing.T, e *env) {
			labels := map[string]string{"watch": "initial-" + e.run}
			e.create(t, ConfigMapGVR, configMap(e.ns, "existing", labels, nil))
			w := e.watch(t, ConfigMapGVR, e.ns, metav1.ListOptions{LabelSelector: "watch=initial-" + e.run})
			ev := e.next(t, w)
			require.Equal(t, "ADDED existing", eventName(ev), "a watch without resourceVersion first replays the current state as ADDED events")
			e.create(t, ConfigMapGVR, configMap(e.ns, "later", labels, nil))
			require.Equal(t, "ADDED later", eventName(e.next(t, w)))
		}},
		{"watch/label-selector-transitions", func(t *testing.T, e *env) {
			sel := "watch=sel-" + e.run
			l, err := e.c.List(e.ctx, ConfigMapGVR, e.ns, metav1.ListOptions{LabelSelector: sel})
			require.NoError(t, err)
			w := e.watch(t, ConfigMapGVR, e.ns, metav1.ListOptions{LabelSelector: sel, ResourceVersion: l.GetResourceVersion()})

			other := e.create(t, ConfigMapGVR, configMap(e.ns, "sel-moves", map[string]string{"watch": "other"}, nil))
			other.SetLabels(map[string]string{"watch": "sel-" + e.run})
			inside := e.update(t, ConfigMapGVR, other)
			require.Equal(t, "ADDED sel-moves", eventName(e.next(t, w)), "starting to match is ADDED")

			inside.SetLabels(map[string]string{"watch": "other"})
			e.update(t, ConfigMapGVR, inside)
			require.Equal(t, "DELETED sel-moves", eventName(e.next(t, w)), "ceasing to match is DELETED")
		}},
		{"watch/cluster-scoped", func(t *testing.T, e *env) {
			sel := "watch=" + e.run
			l, err := e.c.List(e.ctx, ClusterGVR, "", metav1.ListOptions{LabelSelector: sel})
			require.NoError(t, err)
			w := e.watch(t, ClusterGVR, "", metav1.ListOptions{LabelSelector: sel, ResourceVersion: l.GetResourceVersion()})
			c := cluster(e.name("watched"))
			c.SetLabels(map[string]string{"watch": e.run})
			c = e.create(t, ClusterGVR, c)
			require.Equal(t, "ADDED "+c.GetName(), eventName(e.next(t, w)))
			set(t, c, "v1", "status", "kubernetesVersion")
			_, err = e.c.UpdateStatus(e.ctx, ClusterGVR, c)
			require.NoError(t, err)
			require.Equal(t, "MODIFIED "+c.GetName(), eventName(e.next(t, w)), "status updates are events too")
		}},
		{"watch/stop-closes-the-channel", func(t *testing.T, e *env) {
			w, err := e.c.Watch(e.ctx, ConfigMapGVR, e.ns, metav1.ListOptions{LabelSelector: "watch=stop-" + e.run})
			require.NoError(t, err)
			w.Stop()
			timer := time.NewTimer(e.watchTimeout)
			defer timer.Stop()
			for {
				select {
				case _, ok := <-w.ResultChan():
					if !ok {
						return
					}
				case <-timer.C:
					t.Fatal("ResultChan not closed after Stop")
				}
			}
		}},
	}
}
