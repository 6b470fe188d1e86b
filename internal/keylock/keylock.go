// Package keylock makes the holders of one key take turns: the downloads
// of one file, the crawl's writes of one local path.
package keylock

import (
	"context"
	"sync"
)

// Set holds a lock per key, made when first asked for and dropped when
// nobody holds or waits for it. The zero Set is ready for use.
type Set struct {
	mu sync.Mutex
	m  map[string]*lock
}

type lock struct {
	held  chan struct{} // full while somebody holds the key
	users int           // holding or waiting
}

// Lock waits until nobody holds key, or ctx is done, and returns the
// function that lets the next holder go.
func (s *Set) Lock(ctx context.Context, key string) (unlock func(), err error) {
	s.mu.Lock()
	if s.m == nil {
		s.m = map[string]*lock{}
	}
	l := s.m[key]
	if l == nil {
		l = &lock{held: make(chan struct{}, 1)}
		s.m[key] = l
	}
	l.users++
	s.mu.Unlock()
	leave := func() {
		s.mu.Lock()
		if l.users--; l.users == 0 {
			delete(s.m, key)
		}
		s.mu.Unlock()
	}
	unlock = func() { <-l.held; leave() }
	select {
	case l.held <- struct{}{}: // free: no wait, nor a look at ctx
		return unlock, nil
	default:
	}
	select {
	case l.held <- struct{}{}:
		return unlock, nil
	case <-ctx.Done():
		leave()
		return nil, ctx.Err()
	}
}
