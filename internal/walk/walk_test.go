package walk

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A tree of jobs: each job below depth 4 adds three; every one runs once
// and the walk ends when none is pending.
func TestWalkTree(t *testing.T) {
	var ran atomic.Int32
	Walk(context.Background(), 4, nil, func(ctx context.Context, q *Queue[int], depth int) {
		ran.Add(1)
		if depth < 4 {
			for range 3 {
				q.Push(depth + 1)
			}
		}
	}, 0)
	if got := ran.Load(); got != 1+3+9+27+81 {
		t.Errorf("%d jobs ran", got)
	}
}

// Workers start as jobs come: a walk of three jobs allowed a million
// workers starts a handful of goroutines (it started them all, 2.7 GB
// for deref --parallel 1000000), and one of many jobs that wait for each
// other still gets all the workers it is allowed, and no more.
func TestWalkWorkersOnDemand(t *testing.T) {
	base := runtime.NumGoroutine()
	var most atomic.Int32
	Walk(context.Background(), 1_000_000, nil, func(ctx context.Context, q *Queue[int], j int) {
		if j == 0 {
			q.Push(1)
			q.Push(2)
		}
		time.Sleep(100 * time.Millisecond) // time for the walk to start what it would
		if n := int32(runtime.NumGoroutine() - base); n > most.Load() {
			most.Store(n)
		}
	}, 0)
	if most.Load() > 10 {
		t.Errorf("%d goroutines for three jobs", most.Load())
	}
	// 8 jobs, 4 workers: the first 4 wait until 4 run at once.
	var running, peak atomic.Int32
	four := make(chan struct{})
	var once sync.Once
	Walk(context.Background(), 4, nil, func(ctx context.Context, q *Queue[int], j int) {
		n := running.Add(1)
		defer running.Add(-1)
		if n > peak.Load() {
			peak.Store(n)
		}
		if n == 4 {
			once.Do(func() { close(four) })
		}
		select {
		case <-four:
		case <-time.After(5 * time.Second):
		}
	}, 1, 2, 3, 4, 5, 6, 7, 8)
	if peak.Load() != 4 {
		t.Errorf("%d workers at once, want 4", peak.Load())
	}
}

// Preferred jobs are taken before the others, which keep their order.
func TestWalkPrefer(t *testing.T) {
	var order []int
	Walk(context.Background(), 1, func(j int) bool { return j < 0 }, func(ctx context.Context, q *Queue[int], j int) {
		order = append(order, j)
		if j == 0 {
			q.Push(1)
			q.Push(-1)
			q.Push(2)
		}
	}, 0)
	if len(order) != 4 || order[1] != -1 || order[2] != 1 || order[3] != 2 {
		t.Errorf("order %v", order)
	}
}

// After the context is done, jobs are dropped.
func TestWalkCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var ran atomic.Int32
	Walk(ctx, 2, nil, func(ctx context.Context, q *Queue[int], j int) {
		ran.Add(1)
		cancel()
		for range 100 {
			q.Push(j + 1)
		}
	}, 0)
	if got := ran.Load(); got > 2 {
		t.Errorf("%d jobs ran after cancel", got)
	}
}

// Hosts lets PerHost connections to one host at once, and others beside.
func TestHosts(t *testing.T) {
	h := &Hosts{PerHost: 2}
	var mu sync.Mutex
	now, peak := map[string]int{}, map[string]int{}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := []string{"ftp://a", "ftp://b"}[i%2]
			release, err := h.Slot(context.Background(), key)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			now[key]++
			peak[key] = max(peak[key], now[key])
			mu.Unlock()
			time.Sleep(2 * time.Millisecond)
			mu.Lock()
			now[key]--
			mu.Unlock()
			release()
		}()
	}
	wg.Wait()
	if peak["ftp://a"] > 2 || peak["ftp://b"] > 2 || peak["ftp://a"] == 0 {
		t.Errorf("peaks %v", peak)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r1, _ := h.Slot(ctx, "x")
	r2, _ := h.Slot(ctx, "x")
	cancel()
	if _, err := h.Slot(ctx, "x"); err == nil {
		t.Error("a third slot while two are taken")
	}
	r1()
	r2()
}

// TestSlotInTurn: slots are taken in the order of the tickets, whatever
// order the takers come in; a taker waiting for its turn gives up when
// its context ends.
func TestSlotInTurn(t *testing.T) {
	for _, perHost := range []int{1} {
		h := &Hosts{PerHost: perHost}
		const n = 40
		tickets := make([]int, n)
		for i := range tickets {
			tickets[i] = h.Ticket("h")
		}
		var mu sync.Mutex
		var order []int
		var wg sync.WaitGroup
		for i := n - 1; i >= 0; i-- { // the last ticket comes first
			wg.Add(1)
			go func(ticket int) {
				defer wg.Done()
				release, err := h.SlotInTurn(context.Background(), "h", ticket)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				order = append(order, ticket)
				mu.Unlock()
				time.Sleep(time.Millisecond)
				release()
			}(tickets[i])
		}
		wg.Wait()
		for i, got := range order {
			if got != i {
				t.Fatalf("PerHost %d: slots taken in order %v", perHost, order)
			}
		}
	}
	h := &Hosts{PerHost: 1}
	h.Ticket("h") // never comes
	late := h.Ticket("h")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := h.SlotInTurn(ctx, "h", late); err == nil {
		t.Error("a ticket whose turn never came took a slot")
	}
}
