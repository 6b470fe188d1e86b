package fetch

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/urlderef/deref/protocols"
)

// idleWatch ends a retrieval's Fetch (the part before its body, where a
// protocol may read a whole listing or menu) when nothing arrives for the
// idle time on the connections it dials: the first byte may take the
// connect time-out besides.
type idleWatch struct {
	idle   time.Duration
	last   atomic.Int64 // UnixNano of the last byte read, or of the first deadline less idle
	cancel context.CancelFunc
	active atomic.Bool // a byte has arrived: the watch counts idle time only
	done   atomic.Bool // stopped or fired: reads (a body's, after the exchange) are not timed
	mu     sync.Mutex
	timer  *time.Timer
	fired  bool
}

// watchIdle wraps req's dial function so that reads on its connections
// count as activity, sets req.Active for the connections a protocol kept
// from earlier retrievals, and starts the watch.
func watchIdle(req *protocols.Request, connect, idle time.Duration, cancel context.CancelFunc) *idleWatch {
	w := &idleWatch{idle: idle, cancel: cancel}
	w.last.Store(time.Now().Add(connect).UnixNano())
	req.Active = w.touch
	req.Dial, req.DataDial = w.wrap(req.Dial), w.wrap(req.DataDial)
	w.timer = time.AfterFunc(connect+idle, w.check)
	return w
}

// wrap makes the connections dial opens count as activity when read.
func (w *idleWatch) wrap(dial protocols.DialFunc) protocols.DialFunc {
	if dial == nil {
		return nil
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &activeConn{Conn: conn, w: w}, nil
	}
}

// touch records that the server was heard from. The first time, the
// watch stops allowing for the connect time-out: only idle time counts.
func (w *idleWatch) touch() {
	if w.done.Load() {
		return // a body read after the exchange: its own watch times it
	}
	w.last.Store(time.Now().UnixNano())
	if !w.active.Swap(true) {
		w.mu.Lock()
		if !w.done.Load() {
			w.timer.Reset(w.idle)
		}
		w.mu.Unlock()
	}
}

func (w *idleWatch) check() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done.Load() {
		return
	}
	if left := time.Until(time.Unix(0, w.last.Load()).Add(w.idle)); left > 0 {
		w.timer.Reset(left)
		return
	}
	w.fired = true
	w.done.Store(true)
	w.cancel()
}

// stop ends the watch; it reports whether the watch had not fired.
func (w *idleWatch) stop() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.done.Store(true)
	w.timer.Stop()
	return !w.fired
}

// activeConn marks the watch active whenever bytes arrive. It keeps the
// connection's own abilities that protocols use: SyscallConn (splice) and
// CloseWrite.
type activeConn struct {
	net.Conn
	w *idleWatch
}

func (c *activeConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.w.touch()
	}
	return n, err
}

// SyscallConn gives the connection's descriptor, where it has one.
func (c *activeConn) SyscallConn() (syscall.RawConn, error) {
	if sc, ok := c.Conn.(syscall.Conn); ok {
		return sc.SyscallConn()
	}
	return nil, syscall.EINVAL
}

// CloseWrite half-closes the connection where it can be, and does
// nothing where it cannot (a proxy's connection without it).
func (c *activeConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// OnWait passes on the connection's notice of the first read that has to
// wait, where it gives one (blockconn.Polled), and reports false where
// it does not.
func (c *activeConn) OnWait(wait func()) bool {
	if n, ok := c.Conn.(interface{ OnWait(func()) bool }); ok {
		return n.OnWait(wait)
	}
	return false
}
