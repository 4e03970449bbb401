// Package recommend is the autoscaler's decision: the fleet total of a preference with
// spec.autoscale, from the members' samples, as pure functions.
//
//	d, why := recommend.Explain(recommend.DecideInput{Input: recommend.Input{
//		Autoscale: *rsp.Spec.Autoscale, Current: int32(federation.FleetTotal(rsp)),
//		Samples: samples, Now: now, StaleAfter: recommend.StaleAfter(recommend.DefaultSyncPeriod),
//	}, History: history})
//	fmt.Println(d.Message) // 12 -> 22: cpu 91% of 60% over 14 ready pods in 3 of 3 clusters
//	fmt.Println(why)       // metric by metric, cluster by cluster
//
// Package autoscale's Autoscaler is the driver: it gathers a [Sample] of each member
// through a MetricsSource, calls [Decide] with the History it keeps, and writes the
// Decision. Package preview calls [Explain] on the samples it is given. Nothing here does
// I/O, reads a clock (Input.Now is the time), logs or keeps state, and nothing links the
// loop engine, a client or Prometheus: the same input gives the same decision.
//
// # The fleet's recommendation
//
// [Recommend] counts the pods of every fresh member as one HPA counts one cluster's: kube's
// replica calculator, its tolerance, its unready and missing pods. Its facts are ported as
// stories (autoscale/testdata/replicas.txt, one block per case of kube's
// replica_calculator_test.go). Freshness and quorum are status's rules (status.IsFresh and
// status.HasQuorum, which this package applies from their pure home). A stale member's
// share holds at what it last ran, so the fleet never scales on data nobody has.
// [Stabilize] applies the behavior (windows, rate policies, kube's facts in
// autoscale/testdata/behavior.txt). [Decide] puts both together with an HPA's conditions
// and a one-line explanation; [Explain] adds the whole explanation.
//
// A [Sample] is plain data: build it by hand in a test, from a member's metrics API (package
// autoscale's Members) or from a pull agent's report.
package recommend
