package keylock

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Holders of one key take turns; other keys go beside them; a waiter
// whose context ends gives up; the set forgets a key nobody holds.
func TestSet(t *testing.T) {
	var s Set
	var inside, most atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			unlock, err := s.Lock(context.Background(), "a")
			if err != nil {
				t.Error(err)
				return
			}
			if n := inside.Add(1); n > most.Load() {
				most.Store(n)
			}
			time.Sleep(time.Millisecond)
			inside.Add(-1)
			unlock()
		}()
	}
	wg.Wait()
	if most.Load() != 1 {
		t.Errorf("%d holders of one key at once", most.Load())
	}
	unlockA, _ := s.Lock(context.Background(), "a")
	unlockB, err := s.Lock(context.Background(), "b") // another key: no wait
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := s.Lock(ctx, "a"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a waiter whose context ended: %v", err)
	}
	unlockA()
	unlockB()
	if len(s.m) != 0 {
		t.Errorf("keys kept: %v", s.m)
	}
}
