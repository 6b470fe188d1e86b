package prospero

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/urlderef/deref/protocols"
)

// exchange is one request and its reply over ARDP, on a UDP socket of
// its own (so that the kernel drops every datagram from another address
// or port). Reading it streams the reply's text as its packets become
// contiguous; out-of-order packets are held, at most a window's worth.
type exchange struct {
	conn    net.Conn
	ctx     context.Context
	stop    func() bool
	req     *protocols.Request
	dial    protocols.DialFunc
	cid     uint16
	request []byte // the request's text
	window  int    // the window asked for; 0: the server's default

	timeout, wait time.Duration // initial, current
	maxWait       time.Duration
	retries, left int
	firstBound    time.Duration // ConnectTimeout: the bound on the first packet
	started       time.Time

	rcvd, total uint16
	maxSeen     uint16
	held        map[uint16][]byte
	cur         []byte
	buf         []byte
	heard       bool // a packet of the reply came
	gapAcked    bool // an early ACK was sent for the stall as it stands
	ackOwed     bool
	progress    time.Time
	last        time.Time
	redirects   int
	got, max    int64
	done        bool
	err         error

	// sent counts the request's transmissions and the ACKs sent.
	sent, acks int
}

// newExchange opens a socket to addr and sends request on it.
func (f *Fetcher) newExchange(ctx context.Context, req *protocols.Request, addr string, request []byte, max int64) (*exchange, error) {
	x := &exchange{ctx: ctx, req: req, dial: req.Dialer(), request: request, window: f.window(),
		timeout: f.timeout(), maxWait: f.maxWait(), retries: f.retries(), firstBound: req.ConnectTimeout,
		held: map[uint16][]byte{}, max: max}
	x.wait, x.left = x.timeout, x.retries
	for x.cid == 0 {
		x.cid = uint16(rand.Uint32())
	}
	if err := x.connect(addr); err != nil {
		return nil, err
	}
	x.started = time.Now()
	x.progress = x.started
	if err := x.transmit(); err != nil {
		x.close()
		return nil, err
	}
	return x, nil
}

func (x *exchange) connect(addr string) error {
	conn, err := x.dial(x.ctx, "udp", addr)
	if err != nil {
		return protocols.NetError(err)
	}
	if x.stop != nil {
		x.stop()
	}
	if u, ok := conn.(interface{ SetReadBuffer(int) error }); ok {
		u.SetReadBuffer(512 << 10) // room for a window's burst (64 packets, 80 KB) and more
	}
	x.conn = conn
	x.stop = context.AfterFunc(x.ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	return nil
}

func (x *exchange) close() {
	if x.stop != nil {
		x.stop()
	}
	if x.conn != nil {
		x.conn.Close()
	}
}

// Abort breaks the exchange from any goroutine (protocols.Aborter).
func (x *exchange) Abort() { x.conn.SetDeadline(time.Unix(1, 0)) }

func (x *exchange) info(format string, args ...any) {
	if x.req.Trace != nil {
		x.req.Tracef(protocols.TraceInfo, "ardp: "+fmt.Sprintf(format, args...))
	}
}

// transmit sends the request's packets, with the received-through of the
// reply so far (the server then resumes after it).
func (x *exchange) transmit() error {
	n := (len(x.request) + PacketText - 1) / PacketText
	n = max(n, 1)
	if n > 0xffff {
		return &Error{Line: "a request too long for ARDP", Kind: protocols.ErrBadURL}
	}
	x.sent++
	for i := 0; i < n; i++ {
		h := Header{ConnID: x.cid, Seq: uint16(i + 1), Total: uint16(n), Rcvd: x.rcvd, HasRcvd: true}
		if i == 0 && x.window > 0 {
			h.Flags, h.Window, h.HasWait = FlagWindow, uint16(x.window), true
		}
		text := x.request[i*PacketText : min(len(x.request), (i+1)*PacketText)]
		if _, err := x.conn.Write(append(h.Append(nil), text...)); err != nil {
			return x.netErr(err)
		}
	}
	return nil
}

// ack sends an acknowledgement of everything through rcvd.
func (x *exchange) ack() error {
	x.acks++
	x.ackOwed = false
	h := Header{ConnID: x.cid, Seq: 0, Rcvd: x.rcvd, HasRcvd: true}
	if _, err := x.conn.Write(h.Append(nil)); err != nil {
		return x.netErr(err)
	}
	return nil
}

// cancel tells the server to drop the request (option 1), once, without
// waiting: a reply abandoned early.
func (x *exchange) cancel() {
	h := Header{ConnID: x.cid, Seq: 0, HasRcvd: true, HasWait: true, Option: OptCancel}
	x.conn.Write(h.Append(nil))
}

func (x *exchange) netErr(err error) error {
	if x.ctx.Err() != nil {
		return x.ctx.Err()
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("%w: prospero: nothing answers on %s (port unreachable)", protocols.ErrNetwork, x.conn.RemoteAddr())
	}
	return protocols.NetError(err)
}

// Read streams the reply's text.
func (x *exchange) Read(p []byte) (int, error) {
	for len(x.cur) == 0 {
		if x.err != nil {
			return 0, x.err
		}
		if x.done {
			return 0, io.EOF
		}
		if err := x.step(); err != nil {
			x.err = err
		}
	}
	n := copy(p, x.cur)
	x.cur = x.cur[n:]
	return n, nil
}

// quiet is how long the reply may stall, once begun, before an early
// ACK asks for what is missing (a gap, or the packet that ends a window,
// whose ACK the server waits for): once until the reply moves again,
// well before the time-out sends the request again.
func (x *exchange) quiet() time.Duration {
	return min(max(x.timeout/8, 10*time.Millisecond), 500*time.Millisecond)
}

// step waits for one datagram, or for the time to act without one.
func (x *exchange) step() error {
	deadline := x.progress.Add(x.wait)
	if !x.heard && x.firstBound > 0 {
		deadline = minTime(deadline, x.started.Add(x.firstBound))
	}
	early := time.Time{}
	if x.heard && (x.ackOwed || !x.gapAcked) {
		early = x.last.Add(x.quiet())
		if x.ackOwed {
			early = x.last.Add(min(x.quiet(), 20*time.Millisecond))
		}
		deadline = minTime(deadline, early)
	}
	if x.buf == nil {
		x.buf = make([]byte, 65535)
	}
	x.conn.SetReadDeadline(deadline)
	n, err := x.conn.Read(x.buf)
	if err != nil {
		if x.ctx.Err() != nil {
			return x.ctx.Err()
		}
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			return x.netErr(err)
		}
		if !early.IsZero() && time.Now().Before(x.progress.Add(x.wait)) {
			switch {
			case x.ackOwed:
				x.info("window ACK through %d", x.rcvd)
			case x.maxSeen > x.rcvd:
				x.gapAcked = true
				x.info("packets after %d held: ACK through %d, asking for the rest", x.rcvd, x.rcvd)
			default:
				x.gapAcked = true
				x.info("the reply stalled after packet %d: ACK through %d", x.rcvd, x.rcvd)
			}
			return x.ack()
		}
		return x.timedOut()
	}
	h, text, err := ParseHeader(x.buf[:n])
	if err != nil || h.ConnID != x.cid && h.ConnID != swap16(x.cid) {
		return nil // not this exchange's: ignored
	}
	return x.packet(h, text)
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// timedOut sends the request again, or gives up when the retries are
// spent.
func (x *exchange) timedOut() error {
	if !x.heard && x.firstBound > 0 && time.Since(x.started) >= x.firstBound {
		return fmt.Errorf("%w: prospero: no answer from %s within %v (the connect time-out)", protocols.ErrTimeout, x.conn.RemoteAddr(), x.firstBound)
	}
	if x.left <= 0 {
		if !x.heard {
			return fmt.Errorf("%w: prospero: no answer from %s after %d tries (%v)", protocols.ErrTimeout, x.conn.RemoteAddr(), x.sent, time.Since(x.started).Round(time.Second))
		}
		of := "of an unknown number"
		if x.total != 0 {
			of = "of " + strconv.Itoa(int(x.total))
		}
		return protoErr("the reply stopped after packet %d %s, sent again %d times", x.rcvd, of, x.sent-1)
	}
	x.left--
	x.info("no reply within %v: request sent again, received through %d", x.wait, x.rcvd)
	x.wait *= 2
	x.progress = time.Now()
	x.gapAcked = false
	return x.transmit()
}

// packet takes one datagram of the reply.
func (x *exchange) packet(h Header, text []byte) error {
	now := time.Now()
	x.last = now
	if h.HasWait && h.Wait != 0 {
		w := time.Duration(h.Wait) * time.Second
		if w > x.maxWait {
			return fmt.Errorf("%w: prospero: the server asks to wait %ds before trying again", protocols.ErrTemporary, h.Wait)
		}
		x.info("the server asks to wait %ds", h.Wait)
		x.wait, x.left, x.progress = max(x.timeout, w), x.retries, now
	}
	switch h.Option {
	case OptCancel:
		return fmt.Errorf("%w: prospero: the server refused the request", protocols.ErrNetwork)
	case OptRedirect, OptRedirectNotify:
		if x.redirects++; x.redirects > 5 {
			return protoErr("more than 5 ARDP redirects")
		}
		x.info("redirected to %v", h.Redirect)
		x.close()
		x.stop = nil
		if err := x.connect(h.Redirect.String()); err != nil {
			return err
		}
		x.wait, x.left, x.progress = x.timeout, x.retries, now
		return x.transmit()
	}
	if h.Seq == 0 {
		return nil // a control packet: done with it
	}
	if h.Total != 0 {
		if x.total != 0 && h.Total != x.total {
			return protoErr("the reply's total changed from %d to %d packets", x.total, h.Total)
		}
		if h.Total < x.rcvd || h.Total < x.maxSeen {
			return protoErr("a total of %d packets after packet %d", h.Total, max(x.rcvd, x.maxSeen))
		}
		x.total = h.Total
	}
	if x.total != 0 && h.Seq > x.total {
		return protoErr("packet %d of a reply of %d", h.Seq, x.total)
	}
	x.heard = true
	if h.Flags&FlagAck != 0 {
		x.ackOwed = true
	}
	if h.Flags&FlagControl != 0 {
		text = nil
	}
	limit := uint16(min(0xffff, int(x.rcvd)+2*max(x.window, DefaultWindow)))
	if h.Seq > x.rcvd && h.Seq <= limit {
		if _, dup := x.held[h.Seq]; !dup {
			if x.got += int64(len(text)); x.max > 0 && x.got > x.max {
				return fmt.Errorf("%w: prospero: a reply over %d bytes", protocols.ErrTooLarge, x.max)
			}
			x.held[h.Seq] = append([]byte(nil), text...)
			x.maxSeen = max(x.maxSeen, h.Seq)
		}
	}
	moved := false
	for {
		t, ok := x.held[x.rcvd+1]
		if !ok {
			break
		}
		delete(x.held, x.rcvd+1)
		x.rcvd++
		x.cur = append(x.cur, t...)
		moved = true
		if x.rcvd == 0xffff {
			break
		}
	}
	if moved {
		x.wait, x.left, x.progress, x.gapAcked = x.timeout, x.retries, now, false
	}
	if x.total != 0 && x.rcvd == x.total {
		x.done = true
		if x.ackOwed {
			x.ack()
		}
		return nil
	}
	if x.rcvd == 0xffff {
		return protoErr("a reply of more than 65535 packets")
	}
	if x.ackOwed && x.rcvd >= x.maxSeen {
		return x.ack() // everything through the window's end is here
	}
	return nil
}
