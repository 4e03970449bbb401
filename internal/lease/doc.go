// Package lease runs work in one process of several ([Elect]), or splits it between them ([Shards]).
//
//	opts := lease.Options{Namespace: "fedkit-system", Name: "fedkit-controlplane", Identity: podName}
//	err := lease.Elect(ctx, host, opts, func(ctx context.Context) error {
//		return runLoops(ctx) // only while this process leads
//	})
//
//	opts.Count = 4
//	err = lease.Shards(ctx, host, opts, func(ctx context.Context, s federation.Shard) error {
//		return runLoops(ctx, s) // once per shard held, each loop with Options.Shard = s
//	})
//
// It works on coordination.k8s.io/v1 Leases on the federation's host, through any
// federation.ClusterClient: a real host through federation/kube, or the fake one.
//
// It is client-go's tools/leaderelection underneath. [Lock] is a resourcelock.Interface over
// a ClusterClient, writing the Lease as client-go's own LeaseLock does. The elector campaigns
// and renews. What this package adds is the order of things when leadership ends, so that
// two processes never do the same work at once.
//
// # When leadership ends
//
// client-go starts the leader's work in a goroutine and does not wait for it. Its
// ReleaseOnCancel gives the Lease up as soon as the context ends, while the work may still
// be writing. Elect and Shards instead:
//
//  1. cancel the work RenewDeadline after the start of the last successful renewal, at the
//     latest (a watchdog on the Lock's writes, not client-go's retry loop, which can take
//     RetryPeriod longer to give up);
//  2. wait for the work to return;
//  3. only then release the Lease, when they release it at all: on a graceful stop with
//     Options.ReleaseOnCancel, when the work returned by itself, or when Shards hands a shard
//     to a peer. A lost Lease is left alone.
//
// A peer takes a Lease that was not released LeaseDuration after it last saw it renewed.
// That is after the renewal landed. So the work has at least LeaseDuration - RenewDeadline
// (5s with the defaults) to return once its context is done. fedkit's loops return within
// one reconcile. A work that takes longer is logged as an error, since a peer may then have
// started.
//
// # Sharding
//
// Shards claims shards of a federation.Shard{Index, Count} split, through one Lease per shard
// (Name-0 to Name-<Count-1>). It runs the work of every shard it holds, each with its own
// context. To spread the shards, each process also keeps a presence Lease
// (Name-member-<hash of its identity>), renewed every RetryPeriod. The live processes are
// the holders of shard Leases seen renewed within LeaseDuration, and of presence Leases seen
// renewed within LeaseDuration that say the process is ready (see Hand-over). A process that
// cannot list the Leases lowers no one's share.
//
// Take n live processes sorted by identity. The process of rank r may hold Count/n shards,
// one more when r < Count mod n, so the shares add up to Count exactly. A process below its
// share takes free or expired shard Leases. Its candidates keep watching every shard it does
// not hold, so a dead peer's shards are taken as soon as they expire. Acquisitions pass a
// per-process admission check. So a process holds no more than its share by its own view,
// with one exception below.
//
// # Hand-over
//
// A process above its share hands the excess over: it stops their work, then releases them.
// It does so only to a peer that is live and ready to take it, so a shard keeps running where
// it is until then.
//
//   - Live: this process saw the peer's presence Lease renewed, not only a Lease left behind.
//   - Ready: the presence Lease says how many shards the peer would take by its own view
//     (WantsAnnotation). It is absent while the peer has not listed the Leases, or while
//     another Count runs.
//
// A process hands over at most what the live peers want beyond the shards already free. A
// shard may stay free for LeaseDuration while no live peer wants it (the views disagree).
// Then any process takes it, beyond its share, and hands it over again once a peer wants it.
// This is the exception to the admission check. A candidate whose new term finds the Lease
// still held by its own process (a release that failed) passes the admission check too. So a
// shard handed over is not taken back at once.
//
// Views differ for a moment when a process joins or dies. The Leases, not the shares,
// guarantee that a shard never runs in two processes at once. Every process must use the
// same Count. A process may see a shard held by a live peer with another Count (an
// annotation on the shard Leases). It then claims nothing until that peer is gone. So a
// rolling change of Count never runs two partitions of the keys at once.
//
// # What the Leases say about their holder
//
// Options.Annotations are written on every Lease a process writes: Elect's, the shard Leases
// it holds, its presence Lease. Each write sets them anew, so they follow a Lease from holder
// to holder; package controlplane writes its program's version there
// (federation.ControlPlaneVersionAnnotation).
//
// # Time
//
// client-go's LeaderElector has no clock to inject: it reads the real clock, and so do Elect
// and Shards. Code run under them can keep its own fake clock. But the elections themselves
// are tested on real time with short durations: LeaseDuration 1-2s, RenewDeadline half of
// it, RetryPeriod 100-250ms. Those tests wait for outcomes instead of stepping a clock. The
// decisions of Shards' balance rounds (shares, hand-overs, admission) take a clock, and
// their tests step a fake one, round by round.
package lease
