package protocols

import (
	"fmt"
	"io"
	"strings"
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

// ListingBuffer gathers what a retrieval holds whole (a listing, a menu),
// at most Max bytes, in pieces of up to 1 MiB reserved against Held as
// they are made: one that never ends then costs Max and no more, with no
// buffer copied as it grows.
type ListingBuffer struct {
	Max    int64
	Held   *Held
	pieces [][]byte
	n      int64
}

// ReadFrom reads r to its end. Past Max bytes it fails with an error
// wrapping ErrTooLarge; a budget that is spent fails it with ErrBudget.
func (b *ListingBuffer) ReadFrom(r io.Reader) (int64, error) {
	var total int64
	for {
		if b.n > b.Max {
			return total, fmt.Errorf("%w: larger than %d bytes", ErrTooLarge, b.Max)
		}
		last := len(b.pieces) - 1
		if last < 0 || len(b.pieces[last]) == cap(b.pieces[last]) {
			size := int64(32 << 10)
			if last >= 0 {
				size = min(2*int64(cap(b.pieces[last])), 1<<20)
			}
			size = min(size, b.Max+1-b.n)
			if err := b.Held.Grow(size); err != nil {
				return total, err
			}
			b.pieces = append(b.pieces, make([]byte, 0, size))
			last++
		}
		p := b.pieces[last]
		n, err := r.Read(p[len(p):cap(p)])
		b.pieces[last] = p[:len(p)+n]
		b.n += int64(n)
		total += int64(n)
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// Len is the number of bytes gathered.
func (b *ListingBuffer) Len() int64 { return b.n }

// Bytes joins the pieces into one slice.
func (b *ListingBuffer) Bytes() []byte {
	out := make([]byte, 0, b.n)
	for _, p := range b.pieces {
		out = append(out, p...)
	}
	return out
}

// String joins the pieces into one string.
func (b *ListingBuffer) String() string {
	var s strings.Builder
	s.Grow(int(b.n))
	for _, p := range b.pieces {
		s.Write(p)
	}
	return s.String()
}
