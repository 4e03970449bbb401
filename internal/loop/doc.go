// Package loop is the machinery behind every fedkit loop's Run: informers on the host (through
// any federation.ClusterClient, the fake included) turn changes into keys, a rate-limited work
// queue deduplicates them, and workers call the loop's one-pass Reconcile.
//
// The rules every loop documents come from here:
//
//   - a nil error and a zero Result forget the key until something changes;
//   - Result.RequeueAfter brings the key back after that long (on the injected clock);
//   - an error wrapped by federation.Terminal is logged and the key is forgotten until its
//     object (or a related one) changes;
//   - any other error is logged and the key retried with exponential backoff.
//
// Run blocks until its context is done and returns after every goroutine it started has exited.
package loop
