// Package keylock is one lock per key, for work that must not run twice at once for the
// same thing (one checkout per order key, one production per cached sample or preview).
// A key's lock lives while someone holds or waits for it, so the map never grows with
// keys that are done. It imports nothing of the project's.
package keylock

import "sync"

// Locks holds the locks of the keys in use. The zero value is ready to use; it must not
// be copied after first use.
type Locks struct {
	mu    sync.Mutex
	locks map[string]*lock
}

type lock struct {
	sync.Mutex
	users int // holding or waiting
}

// Lock takes key's lock, waiting while another holds it; the returned func releases it.
func (k *Locks) Lock(key string) (unlock func()) {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]*lock{}
	}
	l := k.locks[key]
	if l == nil {
		l = &lock{}
		k.locks[key] = l
	}
	l.users++
	k.mu.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		k.mu.Lock()
		if l.users--; l.users == 0 {
			delete(k.locks, key)
		}
		k.mu.Unlock()
	}
}

// Len is the number of keys held or waited for.
func (k *Locks) Len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.locks)
}
