package federation

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// WatchMemberChanges registers fn for the changes of gvr objects in the member caches of set,
// for a loop that only looks at a changed object (to requeue its owner): through
// [ReadOnlyMemberChanges] when set offers it, so fn must not modify obj nor keep it, else
// through [MemberCache.OnMemberChange]. It returns false, and a remove that does nothing, when
// set has no member caches (the loop then learns of member changes on its resyncs only).
func WatchMemberChanges(set ClusterSet, gvr schema.GroupVersionResource, fn func(cluster string, obj *unstructured.Unstructured)) (remove func(), ok bool) {
	if ro, ok := set.(ReadOnlyMemberChanges); ok {
		return ro.OnMemberChangeReadOnly(gvr, fn), true
	}
	if mc, ok := set.(MemberCache); ok {
		return mc.OnMemberChange(gvr, fn), true
	}
	return func() {}, false
}
