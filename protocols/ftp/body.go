package ftp

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	jftp "github.com/jlaffaye/ftp"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/protocols/internal/rcvlowat"
	"github.com/urlderef/deref/protocols/internal/splice"
)

// dataBody streams a RETR. Close reads the server's final reply, reports
// an error in it, and returns the control connection to the pool when all
// went well.
type dataBody struct {
	s     *session
	r     *jftp.Response
	raw   net.Conn // the data connection before TLS, for splicing; nil when TLS
	conn  net.Conn // the data connection, for Abort
	ascii bool
	conv  *crlfReader
	left  int64 // bytes still expected; -1 when unknown
	wire  int64 // the size on the wire where known (TYPE A too), else -1
	eof   bool
	err   error
	done  bool
	// batch raises the socket's low-water mark for a large binary transfer
	// read with Read (spliced transfers gain nothing from it).
	batch    *rcvlowat.Batch
	batching bool // batch is started at the first Read
	// early: the data is read without waiting for the 150, which is owed
	// (control.early150), and the 226 is not waited for when every byte
	// of the known size came.
	early bool
	// watch starts the reading of the control connection for the 150
	// (traceConn.watch150), when the data is read before it; unwatch
	// stops it. The watch is started at the first read, and only if the
	// read would wait: a refusal in place of the 150 means no data will
	// come, and any byte (or the end) already there means none came.
	watch   func() (unwatch func())
	unwatch func()

	mu      sync.Mutex
	settled bool // the session went back to the pool or was closed: Abort leaves it alone
}

func (b *dataBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.eof {
		return 0, io.EOF
	}
	b.watchIfWaiting()
	if b.batching {
		b.batching = false
		b.batch = rcvlowat.Start(b.raw, b.left)
	}
	var n int
	var err error
	if b.conv != nil {
		n, err = b.conv.Read(p)
	} else {
		n, err = b.r.Read(p)
	}
	if b.left >= 0 {
		b.left -= int64(n)
		if n > 0 {
			b.batch.Progress(b.left)
		}
	}
	if err == io.EOF {
		b.eof = true
		// The data connection is closed; the final reply says whether the
		// whole file went. Read it now, so that a 426 is an error of the
		// transfer and never a short object reported as complete.
		if cerr := b.finish(); cerr != nil {
			b.err = cerr
			return n, cerr
		}
	} else if err != nil {
		if rerr := b.refused(); rerr != nil {
			err = rerr
		} else {
			err = mapErr("RETR", err)
		}
		b.err = err
	}
	return n, err
}

// watchIfWaiting arms the watch for the 150 before the first read of the
// data, unless the data connection has something to read already: it
// starts if no byte has come within watchDelay.
func (b *dataBody) watchIfWaiting() {
	if b.watch == nil {
		return
	}
	start := b.watch
	b.watch = nil
	// The function is called by the read that waits (this goroutine's),
	// or by CopyTo's splice when it takes the socket into the poller.
	if w, ok := b.raw.(waitNotifier); ok && w.OnWait(func() { b.unwatch = after(watchDelay, start) }) {
		return // armed by the first read that waits, if one does
	}
	if b.raw != nil && readable(b.raw) {
		return // the server sent: the 150 came before, and is read with the next reply
	}
	b.unwatch = after(watchDelay, start)
}

// waitNotifier is a data connection that tells when a read first has to
// wait (blockconn.Polled): it costs no poll to ask.
type waitNotifier interface {
	OnWait(wait func()) bool
}

// watchDelay is how long a transfer read before its 150 waits for its
// data before the control connection is watched for a refusal in place
// of the 150. The data of a server nearby comes well within it, as that
// of small files mostly does, and then costs no watch (a goroutine and a
// read of the control connection, 4% of the CPU of 2,000 small files);
// a refusal is still found, this much later.
const watchDelay = 20 * time.Millisecond

// after calls start once d has passed, unless the function returned is
// called first; that function also stops what start started, and waits
// for a start under way to return.
func after(d time.Duration, start func() (stop func())) (stop func()) {
	var mu sync.Mutex
	stopped := false
	var started func()
	t := time.AfterFunc(d, func() {
		mu.Lock()
		defer mu.Unlock()
		if !stopped {
			started = start()
		}
	})
	return func() {
		t.Stop()
		mu.Lock()
		stopped = true
		s := started
		mu.Unlock()
		if s != nil {
			s()
		}
	}
}

// stopWatch ends the watch for the 150, if one runs.
func (b *dataBody) stopWatch() {
	b.watch = nil
	if b.unwatch != nil {
		b.unwatch()
		b.unwatch = nil
	}
}

// refused is the refusal that came in place of the owed 150, which broke
// the data connection, if one did: the transfer's error.
func (b *dataBody) refused() error {
	b.stopWatch()
	if !b.s.ctl.refused150 {
		return nil
	}
	b.eof = true
	return b.finish()
}

// CopyTo splices a binary transfer into a file; anything else goes
// through Read.
func (b *dataBody) CopyTo(w io.Writer, step func(int64) error) (int64, error) {
	b.watchIfWaiting()
	f, isFile := w.(splice.Dst) // a file, or a socket (a gateway passing an object on)
	sc, isSock := b.raw.(syscall.Conn)
	var total int64
	if isFile && isSock && !b.ascii && b.err == nil {
		want := b.left
		if want < 0 {
			want = math.MaxInt64
		}
		n, err := splice.Copy(f, sc, want, step)
		total += n
		if b.left >= 0 {
			b.left -= n
		}
		switch {
		case err == nil || err == io.ErrUnexpectedEOF && b.left < 0:
			b.eof = true
			if cerr := b.finish(); cerr != nil {
				return total, cerr
			}
			return total, nil
		case err == io.ErrUnexpectedEOF:
			b.eof = true
			if cerr := b.finish(); cerr != nil {
				return total, cerr
			}
			return total, fmt.Errorf("%w: data connection closed with %d bytes to come", protocols.ErrShortBody, b.left)
		case errors.Is(err, splice.ErrUnsupported):
		default:
			if rerr := b.refused(); rerr != nil {
				return total, rerr
			}
			var pe *os.PathError
			if errors.As(err, &pe) {
				return total, fmt.Errorf("%w: %w", protocols.ErrWrite, err)
			}
			return total, mapErr("RETR", err)
		}
	}
	left := b.left
	if left < 0 && b.wire >= 0 {
		left = b.wire // a bound: converted text is no longer than sent
	}
	return splice.ReadWrite(w, b, step, total, left)
}

// finish closes the data connection and reads the final reply once.
func (b *dataBody) finish() error {
	if b.done {
		return nil
	}
	b.done = true
	b.batch.Stop()
	b.stopWatch()
	if b.early && b.left == 0 && b.wire > 0 && !b.s.ctl.refused150 {
		// Every byte came: the final reply is owed, read with the next
		// command's, which goes out now.
		b.conn.Close()
		b.s.ctl.owed = append(b.s.ctl.owed, owed226)
		// What the watch for the 150 read after it is this reply, whole or
		// begun: taken out now.
		b.s.control.pushback = b.s.ctl.take(b.s.control.pushback)
		b.mu.Lock()
		b.settled = true
		b.mu.Unlock()
		b.s.release()
		return nil
	}
	err := b.r.Close()
	b.mu.Lock()
	b.settled = true
	b.mu.Unlock()
	if err != nil {
		var re *ReplyError
		err = mapErr("RETR", err)
		if b.s.ctl.refused150 {
			b.s.mu.Lock()
			req := b.s.req
			b.s.mu.Unlock()
			if b.s.f.outOfTurn(b.s.addr, req, err) {
				// Read early, the transfer cannot be sent again from here:
				// another attempt (a retry) goes in turn.
				err = fmt.Errorf("%w: %w", protocols.ErrTemporary, err)
			}
		}
		if b.s.ctl.refused150 && errors.As(err, &re) && re.Err.Code >= 500 {
			b.s.release() // refused in place of the 150: the conversation is in turn, as for a RETR refused at once
		} else {
			b.s.discard()
		}
		return err
	}
	if b.left > 0 {
		b.s.discard()
		return fmt.Errorf("%w: the server ended the transfer with %d bytes to come", protocols.ErrShortBody, b.left)
	}
	b.s.release() // closes instead when an Abort came during the final reply
	return nil
}

// Abort breaks the data connection, and any wait for the final reply on
// the control connection, so that a blocked Read or Close returns; it is
// safe while another goroutine reads. Close must still follow.
func (b *dataBody) Abort() {
	if b.conn != nil {
		b.conn.Close()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.settled {
		b.s.abort()
	}
}

// Close ends the transfer. Closed before the end, the server's 426 (or
// whatever it says about the abandoned transfer) is expected and masked,
// and the control connection is not reused.
func (b *dataBody) Close() error {
	if b.done {
		return nil
	}
	if !b.eof {
		b.done = true
		b.batch.Stop()
		b.mu.Lock()
		b.settled = true
		b.mu.Unlock()
		// The connection is given up, so its final reply is not awaited
		// (the library's Response.Close would wait for it up to its shut
		// time-out, 30 s, on a stalled server): both connections close.
		b.s.abort()
		b.stopWatch()
		b.s.discard()
		return nil
	}
	return b.finish()
}

// crlfReader turns CRLF into LF, as a TYPE A transfer to this machine
// asks; a lone CR stays.
type crlfReader struct {
	r       io.Reader
	bp      *[]byte // from crlfBuffers, until the end is reached
	buf     []byte
	data    []byte // converted, not yet returned
	pending bool   // a CR ended the last chunk: it may be half of a CRLF
	err     error
}

// crlfBuffers keeps the conversion buffers of finished transfers for the
// next ones: a mirror of many small text files would otherwise allocate
// and clear one per file.
var crlfBuffers = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

func (c *crlfReader) Read(p []byte) (int, error) {
	for len(c.data) == 0 {
		if c.err != nil {
			if c.bp != nil {
				crlfBuffers.Put(c.bp)
				c.bp, c.buf = nil, nil
			}
			return 0, c.err
		}
		c.fill()
	}
	n := copy(p, c.data)
	c.data = c.data[n:]
	return n, nil
}

func (c *crlfReader) fill() {
	if c.buf == nil {
		c.bp = crlfBuffers.Get().(*[]byte)
		c.buf = *c.bp
	}
	start := 0
	if c.pending {
		c.buf[0] = '\r'
		start = 1
	}
	n, err := c.r.Read(c.buf[start:])
	n += start
	c.pending = false
	if err == nil && n > 0 && c.buf[n-1] == '\r' {
		c.pending = true
		n--
	}
	out := 0
	for i := 0; i < n; i++ {
		if c.buf[i] == '\r' && i+1 < n && c.buf[i+1] == '\n' {
			continue
		}
		c.buf[out] = c.buf[i]
		out++
	}
	c.data, c.err = c.buf[:out], err
}

// The contracts it claims, checked when it compiles.
var (
	_ protocols.Copier  = (*dataBody)(nil)
	_ protocols.Aborter = (*dataBody)(nil)
)
