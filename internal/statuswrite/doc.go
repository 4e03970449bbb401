// Package statuswrite is the shared status writer of one control plane process.
//
//	w := statuswrite.New(host, statuswrite.Options{Window: window, Clock: clk, Logger: log})
//	go w.Run(ctx)
//	s, err := scheduler.New(host, typ, scheduler.Options{StatusWriter: w}) // and sync's, the collector's
//
// Its Writer implements federation.StatusWriter. The scheduler, sync and the status
// collector hand it their changes of a federated object's status. It writes what arrived for
// the same object as one status update. Each change waits Options.Window (on Options.Clock)
// for the next, at most five windows after the first. A generation sync has not recorded in
// status.observedGeneration yet waits for sync's change, up to fifteen windows, and counts
// its five again from there: a new object costs one status write, not the scheduler's and
// then sync's.
//
// Each loop's change is a mutation of its own fields only (ARCHITECTURE.md's ownership
// table), so merging keeps every loop's fields. The write is the newest copy of the object
// with every pending mutation applied in order, locked on its resourceVersion. After a
// Conflict the Writer reads the object again and applies the mutations again. Loops read
// through Pending, so a pass sees the changes not yet written: those waiting for their window,
// those on their way to the host, and the last write until the copy read has caught up with
// it and a window has passed (another loop's live read having caught up says nothing of the
// shared cache). What a loop reads never goes back to a status from before a change it was
// handed, unless its cache is more than a window behind the host. A write no loop reads back
// is forgotten five windows after it, so the Writer keeps copies of the last few windows'
// writes, not one of every object it ever wrote.
//
// Drop forgets what is pending and what was written: controlplane calls it when a leader
// loses its Lease, whose successor decides again, and runs the Writer again for its next
// term.
package statuswrite
