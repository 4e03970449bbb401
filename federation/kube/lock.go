package kube

import (
	"context"
	"sync"
)

// keyedMutex is one mutex per key, created on first use and dropped when nobody holds or
// waits for it, so a set of many clusters keeps none for idle ones. A zero keyedMutex is
// ready.
type keyedMutex struct {
	mu    sync.Mutex
	locks map[string]*keyedLock

	// contended, when set (by tests), is called when lock has to wait for another holder.
	contended func(key string)
}

type keyedLock struct {
	held  chan struct{} // a token in the channel means held
	users int           // holders and waiters
}

// lock takes key's mutex, waiting for another holder to release it unless ctx is done first.
// It returns the func that releases it.
func (k *keyedMutex) lock(ctx context.Context, key string) (unlock func(), err error) {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]*keyedLock{}
	}
	l := k.locks[key]
	if l == nil {
		l = &keyedLock{held: make(chan struct{}, 1)}
		k.locks[key] = l
	}
	l.users++
	contended := k.contended
	k.mu.Unlock()

	release := func() {
		k.mu.Lock()
		defer k.mu.Unlock()
		if l.users--; l.users == 0 {
			delete(k.locks, key)
		}
	}
	select {
	case l.held <- struct{}{}:
	default:
		if contended != nil {
			contended(key)
		}
		select {
		case l.held <- struct{}{}:
		case <-ctx.Done():
			release()
			return nil, ctx.Err()
		}
	}
	return func() {
		<-l.held
		release()
	}, nil
}
