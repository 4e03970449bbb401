package federation_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fedkit/fedkit/federation"
)

// State reads where an eviction stands; sync and preview branch on it, not on its fields.
func ExampleEviction_State() {
	deadline := metav1.NewTime(time.Date(2026, 6, 1, 0, 10, 0, 0, time.UTC))
	for _, e := range []federation.Eviction{
		{Cluster: "eu", Keep: 3, Deadline: &deadline},
		{Cluster: "us", Keep: 2},
		{Cluster: "ap", PurgeMode: federation.PurgeNever, Release: true},
	} {
		fmt.Printf("%s: %s, keeps its replicas: %t\n", e.Cluster, e.State(), e.State().Keeps())
	}
	// Output:
	// eu: Waiting, keeps its replicas: true
	// us: Held, keeps its replicas: true
	// ap: Released, keeps its replicas: false
}

func TestEvictionState(t *testing.T) {
	deadline := metav1.NewTime(time.Date(2026, 6, 1, 0, 10, 0, 0, time.UTC))
	type got struct {
		State string
		Keeps bool
	}
	for _, tc := range []struct {
		name string
		e    federation.Eviction
		want got
	}{
		{"a deadline: waiting", federation.Eviction{Deadline: &deadline}, got{"Waiting", true}},
		{"no deadline: held until the cluster is back", federation.Eviction{}, got{"Held", true}},
		{"release: released", federation.Eviction{Release: true}, got{"Released", false}},
		{"release wins over a deadline", federation.Eviction{Release: true, Deadline: &deadline}, got{"Released", false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.e.State()
			if diff := cmp.Diff(tc.want, got{s.String(), s.Keeps()}); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
	if diff := cmp.Diff("Ended", federation.EvictionEnded.String()); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if federation.EvictionEnded.Keeps() {
		t.Error("an ended eviction keeps nothing")
	}
	if diff := cmp.Diff("EvictionState(9)", federation.EvictionState(9).String()); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}
