package sync

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fedkit/fedkit/federation"
	"github.com/fedkit/fedkit/sync/plan"
)

// TestForgetDropsTheRecord: everything the Syncer remembers of one federated object is one
// record, and forget drops it whole, the index of its namespace waits included; another
// object's record stays.
func TestForgetDropsTheRecord(t *testing.T) {
	_, s, _ := settingsIn(t)
	key, other := federation.Key{Namespace: "prod", Name: "settings"}, federation.Key{Namespace: "prod", Name: "other"}
	require.NotNil(t, s.objects[key], "the pass remembered the object")
	require.NotEmpty(t, s.verifiedAt(key, "aws").ResourceVersion, "and what it wrote in aws")

	s.setConflicted(key, "azure", true)
	s.startWrite(key, "gcp")
	_, _ = s.hostWrite(key, func() (*unstructured.Unstructured, error) { return nil, nil })
	s.setKnownRevision(key, "uid", 1, 1)
	s.markHistoryStale(key)
	s.lagStarts(key, &federation.FederatedObject{ObjectMeta: metav1.ObjectMeta{Generation: 2}}, time.Now())
	require.Equal(t, []string{"aws"}, s.waitForNamespaces(key, []string{"aws"}))
	s.setVerified(other, "aws", plan.Verified{ResourceVersion: "7"})
	require.Empty(t, s.waitForNamespaces(other, []string{"aws"}), "a namespace another object waits for already")
	require.ElementsMatch(t, []federation.Key{key, other}, s.namespaceWaiters("aws", "prod"))

	s.forget(key)
	require.Nil(t, s.objects[key])
	require.Equal(t, []federation.Key{other}, s.namespaceWaiters("aws", "prod"))
	v, conflicted := s.recall(key, "azure")
	require.Zero(t, v)
	require.False(t, conflicted)
	require.Equal(t, "7", s.verifiedAt(other, "aws").ResourceVersion)

	s.forget(other)
	require.Empty(t, s.objects)
	require.Empty(t, s.nsWaiting)
}

// TestAGoneObjectLeavesNoRecord: the pass that finds the object deleted and its member
// objects gone removes the finalizer and forgets the object.
func TestAGoneObjectLeavesNoRecord(t *testing.T) {
	f, s, where := settingsIn(t)
	key := federation.Key{Namespace: "prod", Name: "settings"}
	require.NoError(t, f.Host.Delete(context.Background(), federation.ConfigMapType.FederatedGVR(), key.Namespace, key.Name, metav1.DeleteOptions{}))
	for range 3 {
		_, err := s.Reconcile(context.Background(), key)
		require.NoError(t, err)
	}
	require.Empty(t, where())
	require.Empty(t, s.objects)
}
