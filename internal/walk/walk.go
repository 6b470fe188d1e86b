// Package walk works through a tree of jobs: up to a fixed number of
// workers take jobs from an unbounded queue, jobs add jobs (a folder's
// listing adds its files and subfolders), and the walk ends when no job
// is pending; Hosts caps the connections to each host. It is the engine
// the mirror runs on, and the crawler's.
package walk

import (
	"context"
	"sync"
)

// Walk runs do on the first jobs and on every job pushed since, with up
// to workers at once, until none is pending. A worker starts when a job
// is pushed that no idle worker waits for, so that a large workers
// (--parallel 100000) costs nothing until there is work for them all.
// prefer, when set, marks the jobs taken first (folders, so that the tree
// is discovered while files transfer); the others keep their order.
// After ctx is done, jobs are taken and dropped without do.
func Walk[J any](ctx context.Context, workers int, prefer func(J) bool, do func(ctx context.Context, q *Queue[J], j J), first ...J) {
	q := &Queue[J]{prefer: prefer, pending: 1, workers: max(workers, 1)}
	q.cond = sync.NewCond(&q.mu)
	q.work = func() {
		defer q.wg.Done()
		for {
			j, ok := q.pop()
			if !ok {
				return
			}
			if ctx.Err() == nil {
				do(ctx, q, j)
			}
			q.done()
		}
	}
	for _, j := range first {
		q.Push(j)
	}
	q.done() // the walk's own share of the count
	q.wg.Wait()
}

// Queue is a walk's work list.
type Queue[J any] struct {
	mu      sync.Mutex
	cond    *sync.Cond
	jobs    []J
	pending int
	prefer  func(J) bool

	workers int            // at most this many workers
	running int            // workers started
	idle    int            // workers waiting for a job
	work    func()         // a worker
	wg      sync.WaitGroup // the workers started
}

// Push adds a job, and starts a worker for it when none is idle and
// fewer than the walk's workers run.
func (q *Queue[J]) Push(j J) {
	q.mu.Lock()
	q.jobs = append(q.jobs, j)
	q.pending++
	start := q.idle < len(q.jobs) && q.running < q.workers
	if start {
		q.running++
		q.wg.Add(1) // before Walk's Wait, or while a worker (the pusher) runs
	}
	q.mu.Unlock()
	if start {
		go q.work()
	}
	q.cond.Signal()
}

// Len is how many jobs wait to be taken.
func (q *Queue[J]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.jobs)
}

// pop takes the next job, waiting while others are pending; it reports
// false when the walk is over.
func (q *Queue[J]) pop() (J, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.jobs) == 0 && q.pending > 0 {
		q.idle++
		q.cond.Wait()
		q.idle--
	}
	if len(q.jobs) == 0 {
		var zero J
		return zero, false
	}
	// A preferred job among the last 64, else the oldest.
	i := 0
	if q.prefer != nil {
		for k := len(q.jobs) - 1; k >= 0 && k >= len(q.jobs)-64; k-- {
			if q.prefer(q.jobs[k]) {
				i = k
				break
			}
		}
	}
	j := q.jobs[i]
	if i == 0 {
		q.jobs = q.jobs[1:]
	} else {
		q.jobs = append(q.jobs[:i], q.jobs[i+1:]...)
	}
	return j, true
}

func (q *Queue[J]) done() {
	q.mu.Lock()
	q.pending--
	end := q.pending == 0
	q.mu.Unlock()
	if end {
		q.cond.Broadcast()
	}
}

// Hosts caps the connections to each host: PerHost at once.
type Hosts struct {
	PerHost int
	mu      sync.Mutex
	slots   map[string]chan struct{}
	lines   map[string]*line // SlotInTurn's, by key
}

// line is the order of a host's slots for SlotInTurn: the tickets given,
// the ones that have taken their slot, and the channels of those waiting
// for their turn, by ticket.
type line struct {
	given, served int
	waiting       map[int]chan struct{}
}

// Ticket gives key's next place in line for SlotInTurn. Slots are taken
// in the order tickets are given: a caller gives them in the order its
// jobs are queued.
func (h *Hosts) Ticket(key string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	l := h.line(key)
	l.given++
	return l.given - 1
}

func (h *Hosts) line(key string) *line {
	if h.lines == nil {
		h.lines = map[string]*line{}
	}
	l := h.lines[key]
	if l == nil {
		l = &line{waiting: map[int]chan struct{}{}}
		h.lines[key] = l
	}
	return l
}

// SlotInTurn is Slot taken in ticket order: it waits until every earlier
// ticket of key has taken its slot. Each ticket given must come to
// SlotInTurn once (until the context ends), or the later ones wait.
func (h *Hosts) SlotInTurn(ctx context.Context, key string, ticket int) (release func(), err error) {
	h.mu.Lock()
	l := h.line(key)
	if l.served != ticket {
		ch := make(chan struct{})
		l.waiting[ticket] = ch
		h.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			h.mu.Lock()
			delete(l.waiting, ticket)
			h.mu.Unlock()
			return nil, ctx.Err()
		}
		h.mu.Lock()
	}
	h.mu.Unlock()
	release, err = h.Slot(ctx, key)
	h.mu.Lock()
	l.served++
	if ch, ok := l.waiting[l.served]; ok {
		delete(l.waiting, l.served)
		close(ch) // the next in line goes on to wait for a slot
	}
	h.mu.Unlock()
	return release, err
}

// Slot takes one of key's slots (key names a host, such as
// "ftp://host:21"), waiting for one; release gives it back.
func (h *Hosts) Slot(ctx context.Context, key string) (release func(), err error) {
	h.mu.Lock()
	if h.slots == nil {
		h.slots = map[string]chan struct{}{}
	}
	ch, ok := h.slots[key]
	if !ok {
		ch = make(chan struct{}, max(h.PerHost, 1))
		h.slots[key] = ch
	}
	h.mu.Unlock()
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
