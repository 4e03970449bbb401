package fake_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestList(t *testing.T) {
	c := newCluster(t, "c")
	for _, o := range []struct{ ns, name, tier string }{
		{"prod", "web", "front"}, {"prod", "api", "back"}, {"dev", "web", "front"}, {"dev", "db", ""},
	} {
		cm := configMap(o.ns, o.name, nil)
		if o.tier != "" {
			cm.SetLabels(map[string]string{"tier": o.tier})
		}
		mustCreate(t, c, configMapGVR, cm)
	}

	tests := []struct {
		name      string
		namespace string
		opts      metav1.ListOptions
		want      []string
	}{
		{"all namespaces, sorted", "", metav1.ListOptions{}, []string{"dev/db", "dev/web", "prod/api", "prod/web"}},
		{"one namespace", "prod", metav1.ListOptions{}, []string{"prod/api", "prod/web"}},
		{"label equality", "", metav1.ListOptions{LabelSelector: "tier=front"}, []string{"dev/web", "prod/web"}},
		{"label set", "", metav1.ListOptions{LabelSelector: "tier in (front,back)"}, []string{"dev/web", "prod/api", "prod/web"}},
		{"label absent", "", metav1.ListOptions{LabelSelector: "!tier"}, []string{"dev/db"}},
		{"field name", "", metav1.ListOptions{FieldSelector: "metadata.name=web"}, []string{"dev/web", "prod/web"}},
		{"field namespace", "", metav1.ListOptions{FieldSelector: "metadata.namespace!=prod"}, []string{"dev/db", "dev/web"}},
		{"both", "", metav1.ListOptions{LabelSelector: "tier", FieldSelector: "metadata.namespace=dev"}, []string{"dev/web"}},
		{"nothing", "staging", metav1.ListOptions{}, []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			list, err := c.List(testCtx(t), configMapGVR, tc.namespace, tc.opts)
			require.NoError(t, err)
			got := []string{}
			for _, it := range list.Items {
				got = append(got, it.GetNamespace()+"/"+it.GetName())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("List(%q, %+v) (-want +got):\n%s", tc.namespace, tc.opts, diff)
			}
			require.Equal(t, rv(4), list.GetResourceVersion())
			require.Equal(t, "ConfigMapList", list.GetKind())
		})
	}
}

func TestListBadSelectors(t *testing.T) {
	c := newCluster(t, "c")
	for name, opts := range map[string]metav1.ListOptions{
		"bad label selector":         {LabelSelector: "a in (("},
		"bad field selector":         {FieldSelector: "metadata.name"},
		"unsupported field selector": {FieldSelector: "status.phase=Running"},
		"another unsupported field":  {FieldSelector: "spec.nodeName=n1"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := c.List(testCtx(t), configMapGVR, "", opts)
			require.True(t, apierrors.IsBadRequest(err), "List = %v", err)
			_, err = c.Watch(testCtx(t), configMapGVR, "", opts)
			require.True(t, apierrors.IsBadRequest(err), "Watch = %v", err)
		})
	}
}
