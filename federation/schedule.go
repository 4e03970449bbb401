package federation

// Replicas returns the schedule as a map from cluster name to replicas, the shape a test
// compares with what it expects:
//
//	want := map[string]int64{"eu": 6, "us": 3}
//	if diff := cmp.Diff(want, obj.Status.Schedule.Replicas()); diff != "" { ... }
//
// A nil Schedule (the scheduler has not written one yet) returns nil; a schedule that lists
// no cluster returns an empty map, so a test can tell "not scheduled" from "scheduled
// nowhere". The map is the caller's own. The order of the clusters, which Clusters keeps
// (placement order), is not in the map.
func (s *Schedule) Replicas() map[string]int64 {
	if s == nil {
		return nil
	}
	out := make(map[string]int64, len(s.Clusters))
	for _, c := range s.Clusters {
		out[c.Name] = c.Replicas
	}
	return out
}
