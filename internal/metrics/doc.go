// Package metrics holds what every fedkit loop does the same way with Prometheus.
//
//	r, err := metrics.NewReconciles(reg, metrics.LoopScheduler, kind) // shared with other schedulers
//	changes, err := metrics.Register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
//		Name: "fedkit_scheduler_schedule_changes_total", Help: "...",
//	}, []string{metrics.LabelType}))
//	r.Observe(outcome, err, start, clk.Now())
//
// It does three things:
//
//   - It registers a loop's collectors into the embedder's registerer. A second loop of the
//     same kind (one per federated type, say) shares the collectors the first one
//     registered.
//   - It defines the families every loop reports into (reconciles, member requests, work
//     queues), with one vocabulary of label names and values.
//   - It provides client-go's work queue metrics provider on that registerer (Workqueue),
//     and the reconcile metrics of a loop's queue (Controllers), both in controller-runtime's
//     families.
//
// Families shared by several loops are defined here and only here. A registry refuses two
// collectors of one name whose help or labels differ. So a loop that spelled its own copy
// would fail to start next to another. The families fedkit shares with controller-runtime
// copy its names, help, labels and buckets exactly, for the same reason: in
// controller-runtime's registry, which holds them from the start, Register then returns
// controller-runtime's collectors instead of an error.
package metrics
