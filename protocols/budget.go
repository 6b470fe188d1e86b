package protocols

import (
	"fmt"
	"sync"
)

// Budget is memory shared by the retrievals of one engine for what they
// hold whole to parse (listings, menus, overviews, response heads). A
// retrieval asks before its buffer grows; when the budget is spent, the
// retrieval fails with an error wrapping ErrTemporary and ErrTooLarge,
// which the mirror and --retry try again once others have finished, so
// that many servers sending without end at once cannot make the process
// hold more than the budget, while one large listing still fits. A nil
// *Budget has no bound.
type Budget struct {
	mu   sync.Mutex
	left int64
	size int64
}

// NewBudget returns a budget of n bytes.
func NewBudget(n int64) *Budget { return &Budget{left: n, size: n} }

// ErrBudget is the error of a retrieval whose buffer the budget could not
// grow: it wraps ErrTemporary (try again later) and ErrTooLarge.
var ErrBudget = fmt.Errorf("%w: %w: the memory for listings held at once is spent", ErrTemporary, ErrTooLarge)

// Take reserves n bytes; it reports false, reserving nothing, when fewer
// are left.
func (b *Budget) Take(n int64) bool {
	if b == nil || n <= 0 {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if n > b.left {
		return false
	}
	b.left -= n
	return true
}

// Give returns n bytes taken before.
func (b *Budget) Give(n int64) {
	if b == nil || n <= 0 {
		return
	}
	b.mu.Lock()
	b.left = min(b.left+n, b.size)
	b.mu.Unlock()
}

// Held is a running reservation against a budget: Grow reserves as a
// buffer grows, Release gives it all back.
type Held struct {
	b *Budget
	n int64
}

// Hold starts a reservation against b (which may be nil).
func Hold(b *Budget) *Held { return &Held{b: b} }

// Grow reserves n more bytes, or returns ErrBudget.
func (h *Held) Grow(n int64) error {
	if !h.b.Take(n) {
		return ErrBudget
	}
	h.n += n
	return nil
}

// Release gives back everything reserved.
func (h *Held) Release() {
	h.b.Give(h.n)
	h.n = 0
}
