package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// guardedBody enforces the Client's limits on a response body: the idle
// timeout, the byte limit, the announced size (a body that ends early is
// ErrShortBody, never a short object reported as complete), cancellation
// of the context (which closes the connection at once) and progress.
type guardedBody struct {
	rc       io.ReadCloser
	c        *Client
	u        *url.URL
	ctx      context.Context
	cancel   context.CancelFunc
	size     int64 // -1 unknown
	offset   int64 // where in the object the body begins (Response.Offset)
	n        int64
	start    time.Time
	idle     time.Duration
	timer    *time.Timer
	idleHit  atomic.Bool
	stopCtx  func() bool
	closeErr error
	once     sync.Once
	closeMu  sync.Mutex     // abort and Close, which may come at once
	closed   bool           // rc is closed (by abort or Close)
	progress func(Progress) // Client.Progress and the transfer's own, nil if neither

	// The low-speed watch (Client.LowSpeedLimit): the bytes moved, for
	// its goroutine; whether it ended the transfer; its end.
	moved     atomic.Int64
	slowHit   atomic.Bool
	slowLimit int64
	slowSpan  time.Duration
	slowDone  chan struct{}
}

func (c *Client) guard(ctx context.Context, u *url.URL, resp *Response, size int64, cancel context.CancelFunc, own func(Progress), quiet bool) io.ReadCloser {
	g := &guardedBody{rc: resp.Body, c: c, u: u, ctx: ctx, cancel: cancel, size: size, offset: resp.Offset, start: time.Now(), idle: c.idle()}
	all := c.Progress
	if quiet {
		all = nil // one segment of many: the whole reports
	}
	switch {
	case all != nil && own != nil:
		// The transfer's own first: it may hold the transfer back (a
		// rate limit), and the Client's then sees the bytes at the pace
		// they are let through, not the burst the first read brought.
		g.progress = func(p Progress) { own(p); all(p) }
	case all != nil:
		g.progress = all
	default:
		g.progress = own
	}
	if g.idle > 0 {
		g.timer = time.AfterFunc(g.idle, func() {
			g.idleHit.Store(true)
			g.abort()
			g.cancel()
		})
	}
	if c.LowSpeedLimit > 0 {
		g.slowLimit, g.slowSpan, g.slowDone = c.LowSpeedLimit, c.LowSpeedTime, make(chan struct{})
		if g.slowSpan <= 0 {
			g.slowSpan = 30 * time.Second
		}
		go g.watchSpeed()
	}
	g.stopCtx = context.AfterFunc(ctx, g.abort)
	return g
}

// watchSpeed measures the transfer's speed each second, until Close, and
// ends it once it has been below slowLimit for slowSpan.
func (g *guardedBody) watchSpeed() {
	const every = time.Second
	tick := time.NewTicker(every)
	defer tick.Stop()
	last, lastAt := int64(0), time.Now()
	var slowSince time.Time // the start of the slow seconds, if the last was slow
	for {
		select {
		case <-g.slowDone:
			return
		case now := <-tick.C:
			n := g.moved.Load()
			rate := float64(n-last) / now.Sub(lastAt).Seconds()
			if rate >= float64(g.slowLimit) {
				slowSince = time.Time{}
			} else {
				if slowSince.IsZero() {
					slowSince = lastAt
				}
				if now.Sub(slowSince) >= g.slowSpan {
					g.slowHit.Store(true)
					g.abort()
					g.cancel()
					return
				}
			}
			last, lastAt = n, now
		}
	}
}

// slowErr is the error of a transfer the low-speed watch ended.
func (g *guardedBody) slowErr() error {
	return fmt.Errorf("%w: fewer than %d bytes a second for %v", ErrTimeout, g.slowLimit, g.slowSpan)
}

// Read reads the body; an error other than io.EOF is a *Error of the
// URL (Op "read"), unwrapping to the kind of failure.
func (g *guardedBody) Read(p []byte) (int, error) {
	n, err := g.read(p)
	if err != nil && err != io.EOF {
		err = &Error{Op: "read", URL: g.u.Redacted(), Err: err}
	}
	return n, err
}

func (g *guardedBody) read(p []byte) (int, error) {
	if err := g.ctx.Err(); err != nil {
		return 0, err
	}
	if max := g.c.MaxBytes; max > 0 && int64(len(p)) > max-g.n+1 {
		p = p[:max-g.n+1]
	}
	n, err := g.rc.Read(p)
	g.n += int64(n)
	if g.slowDone != nil {
		g.moved.Add(int64(n))
	}
	if g.timer != nil && n > 0 {
		g.timer.Reset(g.idle)
	}
	if max := g.c.MaxBytes; max > 0 && g.n > max {
		return n - int(g.n-max), fmt.Errorf("%w: more than %d bytes", ErrTooLarge, max)
	}
	if g.progress != nil && n > 0 {
		g.progress(Progress{URL: g.u, Bytes: g.n, Total: g.size, Offset: g.offset, Start: g.start})
	}
	switch {
	case err == nil:
	case g.idleHit.Load():
		err = fmt.Errorf("%w: no data for %v", ErrTimeout, g.idle)
	case g.slowHit.Load():
		err = g.slowErr()
	case g.ctx.Err() != nil:
		err = g.ctx.Err()
	case err == io.EOF && g.size >= 0 && g.n < g.size:
		err = fmt.Errorf("%w: got %d of %d bytes", ErrShortBody, g.n, g.size)
	}
	if err == io.EOF && g.progress != nil {
		g.progress(Progress{URL: g.u, Bytes: g.n, Total: g.size, Offset: g.offset, Start: g.start, Done: true})
	}
	return n, err
}

// WriteTo copies the body with a large buffer. When no limit needs to see
// each chunk and the body is a local file, the copy is left to the
// destination, so a file-to-file copy can use copy_file_range.
func (g *guardedBody) WriteTo(w io.Writer) (int64, error) {
	if err := g.ctx.Err(); err != nil {
		return 0, err
	}
	if f, ok := g.rc.(*os.File); ok && g.c.MaxBytes == 0 && g.progress == nil && g.slowDone == nil {
		g.stopTimer()
		n, err := io.Copy(w, f)
		if err != nil && g.ctx.Err() != nil {
			err = g.ctx.Err() // the file was closed under the copy
		} else {
			err = WriteError(err) // a local file read fails far less often than a write
		}
		g.n += n
		if err == nil && g.size >= 0 && g.n < g.size {
			err = fmt.Errorf("%w: got %d of %d bytes", ErrShortBody, g.n, g.size)
		}
		return n, err
	}
	if cp, ok := g.rc.(protocols.Copier); ok && g.c.MaxBytes == 0 {
		n, err := cp.CopyTo(w, g.step)
		if err == nil && g.size >= 0 && g.n < g.size {
			err = fmt.Errorf("%w: got %d of %d bytes", ErrShortBody, g.n, g.size)
		}
		if err = g.mapErr(err); err != nil && !errors.Is(err, ErrWrite) {
			err = &Error{Op: "read", URL: g.u.Redacted(), Err: err} // as Read's
		}
		return n, err
	}
	return pooledCopy(w, g, g.size)
}

// pooledCopy copies r, of size bytes (-1: unknown), into w through a
// pooled buffer, as io.Copy would without making one; a failed write is
// an ErrWrite.
func pooledCopy(w io.Writer, r io.Reader, size int64) (int64, error) {
	pool := &copyBuffers
	if size >= 0 && size < smallCopy {
		pool = &smallCopyBuffers
	}
	bp := pool.Get().(*[]byte)
	defer pool.Put(bp)
	buf := *bp
	var total int64
	for {
		n, err := r.Read(buf)
		if n > 0 {
			m, werr := w.Write(buf[:n])
			total += int64(m)
			if werr != nil {
				return total, WriteError(werr)
			}
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// abort unblocks a Read under way: through the body's Abort where it has
// one, else by closing it (safe for bodies on a plain connection).
func (g *guardedBody) abort() {
	g.closeMu.Lock()
	defer g.closeMu.Unlock()
	if g.closed {
		return
	}
	if a, ok := g.rc.(protocols.Aborter); ok {
		a.Abort()
		return
	}
	g.rc.Close()
	g.closed = true
}

// step accounts for a chunk that a Copier moved.
func (g *guardedBody) step(n int64) error {
	g.n += n
	if g.slowDone != nil {
		g.moved.Add(n)
	}
	if g.timer != nil {
		g.timer.Reset(g.idle)
	}
	if g.progress != nil {
		g.progress(Progress{URL: g.u, Bytes: g.n, Total: g.size, Offset: g.offset, Start: g.start})
	}
	return g.ctx.Err()
}

// mapErr explains an error that arrived because the body was closed under
// the reader: by the idle timer or by the context.
func (g *guardedBody) mapErr(err error) error {
	switch {
	case err == nil:
		if g.progress != nil {
			g.progress(Progress{URL: g.u, Bytes: g.n, Total: g.size, Offset: g.offset, Start: g.start, Done: true})
		}
		return nil
	case g.idleHit.Load():
		return fmt.Errorf("%w: no data for %v", ErrTimeout, g.idle)
	case g.slowHit.Load():
		return g.slowErr()
	case g.ctx.Err() != nil:
		return g.ctx.Err()
	}
	return err
}

func (g *guardedBody) stopTimer() {
	if g.timer != nil {
		g.timer.Stop()
	}
}

// stopWatch ends the low-speed watch, if any; once.
func (g *guardedBody) stopWatch() {
	if g.slowDone != nil {
		close(g.slowDone)
	}
}

// Close closes the underlying body once and reports its error, such as a
// server's final reply.
func (g *guardedBody) Close() error {
	g.once.Do(func() {
		g.stopTimer()
		g.stopWatch()
		g.stopCtx()
		g.closeMu.Lock() // an abort under way (the timer's, the context's) ends first
		if !g.closed {
			g.closeErr = g.rc.Close()
			g.closed = true
		}
		g.closeMu.Unlock()
		g.cancel()
		if g.closeErr != nil && (g.idleHit.Load() || g.slowHit.Load() || errors.Is(g.closeErr, os.ErrClosed)) {
			g.closeErr = nil
		}
	})
	return g.closeErr
}

// ErrWrite marks a failure to write the object locally (a full disk, a
// closed pipe), as opposed to a failure to fetch it.
var ErrWrite = protocols.ErrWrite

type writeError struct{ err error }

func (e *writeError) Error() string   { return ErrWrite.Error() + ": " + e.err.Error() }
func (e *writeError) Unwrap() []error { return []error{ErrWrite, e.err} }

// WriteError marks err as a failure to write locally; it unwraps to
// ErrWrite and to err.
func WriteError(err error) error {
	if err == nil || errors.Is(err, ErrWrite) {
		return err
	}
	return &writeError{err}
}

// copyBuffers holds WriteTo's copy buffers, so that many small bodies in
// a row do not each allocate and clear one.
var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

// smallCopyBuffers hold the buffers of bodies known to be smaller than
// smallCopy: a pool loses its buffers to the collector, and on many small
// objects making and clearing 256 KiB for each that finds the pool empty
// cost more than their bytes.
var smallCopyBuffers = sync.Pool{New: func() any { b := make([]byte, smallCopy); return &b }}

// smallCopy is the size of the buffers of small bodies.
const smallCopy = 16 << 10
