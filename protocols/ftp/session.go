package ftp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	jftp "github.com/jlaffaye/ftp"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/protocols/internal/idleconn"
	"github.com/urlderef/deref/protocols/internal/rcvlowat"
)

// maxListing bounds a directory listing held for parsing.

// session is one logged-in control connection and what is known of its
// state.
type session struct {
	f    *Fetcher
	key  poolID
	addr string
	c    *jftp.ServerConn

	mu      sync.Mutex
	ctx     context.Context
	req     *protocols.Request
	control *traceConn
	data    net.Conn                 // the data connection of the current command
	rawData net.Conn                 // the same, before any TLS, for splicing
	capBuf  *protocols.ListingBuffer // when set, a listing's data is taken here
	useEPSV bool                     // EPSV is being tried on this connection
	tlsMode byte                     // 0, 'e' or 'i'
	tlsConf *tls.Config

	entry      string   // the directory at login, from PWD; "" if unknown
	cwd        []string // segments changed into since entry
	dirty      bool     // a CWD or transfer failed: the directory is unknown
	ascii      bool     // TYPE A is in force
	epsvFailed bool
	done       bool
	// expect is the size of the file being retrieved, -1 if not known
	// before its data connection is made (see dialConn).
	expect   int64
	greeting func() // lifts the connect time-out's bound on the greeting

	ctl control // the control connection's state beside the library's
}

// shutTimeout bounds the wait for a transfer's final reply, by the
// library's deadline on the control connection (a variable for tests).
var shutTimeout = 30 * time.Second

// poolID says which idle sessions a fetch may take: those of the same
// server, user, password and TLS mode. The password is kept as a digest.
type poolID struct {
	addr, user string
	password   [sha256.Size]byte
	tls        byte
}

func poolKey(addr string, l loginInfo) poolID {
	return poolID{addr: addr, user: l.user, password: sha256.Sum256([]byte(l.password)), tls: l.tls}
}

// session returns a pooled session for the server and login, or a new one.
func (f *Fetcher) session(ctx context.Context, req *protocols.Request, l loginInfo) (*session, bool, error) {
	addr := req.URL.HostPort()
	key := poolKey(addr, l)
	f.mu.Lock()
	for len(f.idle[key]) > 0 {
		ss := f.idle[key]
		s := ss[len(ss)-1]
		f.idle[key] = ss[:len(ss)-1]
		f.mu.Unlock()
		if len(s.ctl.owed) == 0 && !idleconn.Usable(s.control.Conn) {
			// Closed by the server while idle, or sent a reply unasked
			// (vsftpd's "421 Timeout."): dropped, and another taken. A
			// session that left replies to read later (an early read's
			// 226) has them waiting: the retry of a kept session that
			// fails covers that one.
			req.Tracef(protocols.TraceInfo, "the kept connection to "+addr+" was closed by the server while idle; not reused")
			s.done = true
			s.control.Close()
			f.mu.Lock()
			continue
		}
		req.MarkActive() // connected already: only idle time counts
		return s, true, nil
	}
	noEPSV := f.noEPSV[addr] || f.DisableEPSV
	f.mu.Unlock()
	s, err := f.dial(ctx, req, addr, key, l, noEPSV)
	return s, false, err
}

func (f *Fetcher) dial(ctx context.Context, req *protocols.Request, addr string, key poolID, l loginInfo, noEPSV bool) (*session, error) {
	s := &session{f: f, key: key, addr: addr, ctx: ctx, req: req, useEPSV: !noEPSV, tlsMode: l.tls}
	if l.tls != 0 {
		s.tlsConf = dialTLSConfig(req, req.URL.Hostname())
	}
	opts := []jftp.DialOption{
		jftp.DialWithDialFunc(s.dialConn),
		jftp.DialWithDisabledEPSV(noEPSV),
		jftp.DialWithTrustPasvIP(f.TrustPASVAddress),
		jftp.DialWithShutTimeout(shutTimeout),
	}
	if l.tls == 'e' {
		opts = append(opts, jftp.DialWithExplicitTLS(s.tlsConf))
	} else if l.tls == 'i' {
		// Control TLS is ours (the dial function); this makes the library
		// send PBSZ and PROT P after login.
		opts = append(opts, jftp.DialWithTLS(s.tlsConf))
	}
	stop := s.bind(ctx, req)
	defer stop()
	req.Tracef(protocols.TraceInfo, "connecting to "+addr)
	c, err := jftp.Dial(addr, opts...)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if ge := req.GreetingError(ctx, err); ge != err && s.greeting != nil {
			if s.control != nil {
				s.control.Close()
			}
			return nil, ge
		}
		if l.tls == 'e' {
			var te interface{ Error() string }
			if errors.As(err, &te) && !isNetErr(err) {
				return nil, fmt.Errorf("%w: the server refused AUTH TLS: %w", protocols.ErrPermission, mapErr("AUTH TLS", err))
			}
		}
		var oe *net.OpError
		if errors.As(err, &oe) && oe.Op == "dial" {
			return nil, protocols.NetError(err) // "dial tcp ADDR: connect: ..." says it all
		}
		return nil, mapErr("connect", err)
	}
	s.c = c
	if s.greeting != nil {
		s.greeting() // the greeting has come: connecting is over
	}
	if s.ctl.syncOnly {
		f.inTurnOnly(addr) // known for the server, not only this connection
	}
	if s.ctl.greet230 {
		req.Tracef(protocols.TraceInfo, "the server greeted with 230: no USER or PASS")
		if err := c.Type(jftp.TransferTypeBinary); err != nil {
			c.Quit()
			return nil, mapErr("TYPE I", err)
		}
	} else if err := c.Login(l.user, l.password); err != nil {
		c.Quit()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%w as %s: %w", protocols.ErrLoginWait, l.user, ctx.Err())
		}
		err = mapErr("login as "+l.user, err)
		var re *ReplyError
		if errors.As(err, &re) && (re.Err.Code == 530 || re.Err.Code/100 == 5) {
			re.kind = protocols.ErrAuth
			if l.noPassword {
				return nil, fmt.Errorf("%w: %s", err, req.PasswordHint(l.user))
			}
		}
		return nil, err
	}
	if dir, err := c.CurrentDir(); err == nil && strings.HasPrefix(dir, "/") {
		s.entry = dir
	} else if isNetErr(err) && err != nil {
		c.Quit()
		return nil, mapErr("PWD", err)
	}
	return s, nil
}

// bulk reports whether the data connection about to be made carries a
// file of at least rcvlowat.MinSize, whose size is known: it is read with
// blocking system calls (protocols.Bulk, for Request.DataDial), which
// cost less a byte. Listings, small files and files of unknown size wait
// in the runtime's network poller, which does not hold a thread, and with
// it a processor, while the server is slow to send.
func (s *session) bulk() bool {
	s.mu.Lock()
	n := s.expect
	s.mu.Unlock()
	if n < 0 && s.ctl.early && !s.ctl.sizeBad {
		n = s.ctl.sizeN // the SIZE sent with EPSV has been answered
	}
	return n >= rcvlowat.MinSize
}

// canReadEarly says whether the next transfer may go with its EPSV and be
// read early (control.early): EPSV has worked on the connection, and
// neither the server (by its greeting, or a RETR it refused when sent
// so: Fetcher.outOfTurn) nor the Fetcher asks for one command at a time.
func (s *session) canReadEarly() bool {
	return !s.epsvFailed && !s.f.NoPipelining && s.ctl.canPipeline() && s.f.pipelines(s.addr)
}

// dialConn is the library's dial function: the first call is the control
// connection, every later one a data connection.
func (s *session) dialConn(network, addr string) (net.Conn, error) {
	s.mu.Lock()
	ctx, req := s.ctx, s.req
	first := s.control == nil
	s.mu.Unlock()
	dial := req.Dialer()
	if !first {
		dial = req.DataDialer()
		if s.bulk() {
			ctx = protocols.WithBulk(ctx)
		}
	}
	conn, err := dial(ctx, network, addr)
	if err != nil {
		if !first && s.useEPSV {
			s.epsvFailed = true
		}
		return nil, err
	}
	if first {
		if s.tlsMode == 'i' {
			tc := tls.Client(conn, s.tlsConf)
			if err := tc.HandshakeContext(ctx); err != nil {
				conn.Close()
				return nil, err
			}
			conn = tc
		}
		tc := &traceConn{Conn: conn, s: s}
		// The library takes the data connections' host from the control
		// connection's remote address; through a SOCKS proxy that is the
		// proxy's, so it is told the server's own address where known.
		if h, p, err := net.SplitHostPort(addr); err == nil {
			if ip := net.ParseIP(h); ip != nil {
				port, _ := strconv.Atoi(p)
				tc.remote = &net.TCPAddr{IP: ip, Port: port}
			}
		}
		s.mu.Lock()
		s.control = tc
		s.greeting = req.AwaitGreeting(ctx, conn)
		s.mu.Unlock()
		return tc, nil
	}
	raw := conn
	if s.tlsMode != 0 {
		conn = tls.Client(conn, s.tlsConf)
		raw = nil // TLS data cannot be spliced
	}
	s.mu.Lock()
	s.data, s.rawData = conn, raw
	buf := s.capBuf
	s.mu.Unlock()
	if buf != nil {
		return &captureConn{Conn: conn, buf: buf}, nil
	}
	return conn, nil
}

// bind ties the session to ctx and req until the returned stop is called:
// the trace goes to req, and a context that ends closes the connections.
func (s *session) bind(ctx context.Context, req *protocols.Request) (stop func()) {
	s.mu.Lock()
	s.ctx, s.req = ctx, req
	s.mu.Unlock()
	st := context.AfterFunc(ctx, s.abort)
	return func() { st() }
}

// abort unblocks whatever the session is doing.
func (s *session) abort() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.control != nil {
		s.control.abort()
	}
	if s.data != nil {
		s.data.Close()
	}
}

// toEntry returns to the directory of login.
func (s *session) toEntry() error {
	if len(s.cwd) == 0 && !s.dirty {
		return nil
	}
	if s.entry == "" {
		return fmt.Errorf("%w: cannot return to the login directory (PWD gave no path)", errStale)
	}
	s.req.Tracef(protocols.TraceInfo, "returning to the login directory")
	if err := s.c.ChangeDir(s.entry); err != nil {
		s.dirty = true
		return mapErr("CWD "+s.entry, err)
	}
	s.cwd, s.dirty = nil, false
	return nil
}

var errStale = errors.New("pooled connection unusable")

// cwdTo changes into dirs from the login directory: one CWD per segment
// (RFC 1738 §3.2.2), or one CWD with them joined when single. It skips
// the CWDs when the session is there already.
func (s *session) cwdTo(dirs []string, single bool) error {
	if !s.dirty && equal(s.cwd, dirs) {
		return nil
	}
	if err := s.toEntry(); err != nil {
		return err
	}
	steps := dirs
	if single {
		steps = []string{strings.Join(dirs, "/")}
	}
	for _, d := range steps {
		if err := s.c.ChangeDir(d); err != nil {
			s.dirty = true
			cmd := "CWD " + d
			if d == "" {
				cmd = `CWD with an empty argument (the URL has an empty segment, "//")`
			}
			return mapErr(cmd, err)
		}
	}
	s.cwd = append([]string(nil), dirs...)
	return nil
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// capture runs a listing command and returns what came over its data
// connection, and whether the library used MLSD.
func (s *session) capture(run func() error) (string, bool, error) {
	buf := &protocols.ListingBuffer{Max: s.req.ListingLimit(), Held: protocols.Hold(s.req.Memory)}
	defer buf.Held.Release()
	s.mu.Lock()
	s.capBuf = buf
	s.mu.Unlock()
	err := run()
	s.mu.Lock()
	s.capBuf = nil
	s.mu.Unlock()
	if err != nil {
		return "", false, err
	}
	return buf.String(), s.c.IsTimePreciseInList(), nil
}

// release returns a healthy session to the pool; one whose control
// connection was aborted is closed instead.
func (s *session) release() {
	if s.done {
		return
	}
	s.mu.Lock()
	aborted := s.control != nil && s.control.aborted.Load()
	s.mu.Unlock()
	if aborted || !s.ctl.reusable() {
		s.discard()
		return
	}
	s.done = true
	s.mu.Lock()
	s.data, s.rawData = nil, nil
	s.mu.Unlock()
	// The library sets a deadline on the control connection before it
	// reads a transfer's final reply (its shut time-out) and leaves it
	// there: kept, the connection would fail its next command once that
	// time had passed, however healthy.
	if err := s.control.SetDeadline(time.Time{}); err != nil {
		s.done = false
		s.discard()
		return
	}
	f := s.f
	max := f.MaxIdle
	if max == 0 {
		max = 4
	}
	f.mu.Lock()
	if f.idle == nil {
		f.idle = make(map[poolID][]*session)
	}
	if max > 0 && len(f.idle[s.key]) < max {
		s.done = false
		f.idle[s.key] = append(f.idle[s.key], s)
		f.mu.Unlock()
		return
	}
	f.mu.Unlock()
	s.c.Quit()
}

// discard closes a session whose state is no longer known.
func (s *session) discard() {
	if s.done {
		return
	}
	s.done = true
	if s.c != nil {
		s.c.Quit()
	}
}

// CloseIdleConnections quits the pooled control connections.
func (f *Fetcher) CloseIdleConnections() {
	f.mu.Lock()
	idle := f.idle
	f.idle = nil
	f.mu.Unlock()
	for _, ss := range idle {
		for _, s := range ss {
			s.c.Quit()
		}
	}
}

// traceConn reports the control conversation, line by line, to the
// request's trace (passwords redacted there).
type traceConn struct {
	net.Conn
	s       *session
	remote  net.Addr // the server's address, when known
	in, out []byte
	aborted atomic.Bool
	bound   replyBound
	fault   error // a reply past its bound: the connection is given up
	// pushback is what watch150 read that the library has yet to read.
	pushback []byte
}

// replyBound bounds the replies read on a control connection: a line
// longer than the request's LineLimit, or a reply (all the lines of a
// multi-line one) larger than its ListingLimit or 256 KiB, is ErrProtocol.
type replyBound struct {
	line, reply int64   // bytes of the current line and reply
	head        [4]byte // the current line's first bytes
	heads       int
	multi       bool    // inside a multi-line reply, begun by "DDD-"
	code        [3]byte // the multi-line reply's code
}

func (b *replyBound) scan(p []byte, req *protocols.Request) error {
	// A reply is never a listing (deref sends no STAT): 256 KiB is far
	// more than any greeting, FEAT or HELP, and the library's reader holds
	// a reply several times over while it reads it.
	maxLine, maxReply := int64(req.LineLimit()), min(req.ListingLimit(), 256<<10)
	for _, c := range p {
		b.line++
		b.reply++
		if b.heads < len(b.head) {
			b.head[b.heads] = c
			b.heads++
		}
		if c == '\n' {
			if replyEnds(b.head[:b.heads], &b.multi, &b.code) {
				b.reply = 0 // the reply's last line
			}
			b.line, b.heads = 0, 0
			continue
		}
		if b.line > maxLine {
			return fmt.Errorf("%w: a reply line longer than %d bytes", protocols.ErrProtocol, maxLine)
		}
		if b.reply > maxReply {
			return fmt.Errorf("%w: a reply longer than %d bytes", protocols.ErrProtocol, maxReply)
		}
	}
	return nil
}

// abort makes every wait on the connection end now, and keeps it so: the
// library sets its own deadline before reading a transfer's final reply,
// which would otherwise undo this one.
func (t *traceConn) abort() {
	t.aborted.Store(true)
	t.Conn.SetDeadline(time.Unix(1, 0))
}

// SetDeadline sets the connection's deadline unless it was aborted.
func (t *traceConn) SetDeadline(d time.Time) error {
	if t.aborted.Load() {
		return nil
	}
	return t.Conn.SetDeadline(d)
}

// SetReadDeadline sets the read deadline unless the connection was aborted.
func (t *traceConn) SetReadDeadline(d time.Time) error {
	if t.aborted.Load() {
		return nil
	}
	return t.Conn.SetReadDeadline(d)
}

// RemoteAddr returns the server's address (not a proxy's) where known.
func (t *traceConn) RemoteAddr() net.Addr {
	if t.remote != nil {
		return t.remote
	}
	return t.Conn.RemoteAddr()
}

func (t *traceConn) Read(p []byte) (int, error) {
	if t.fault != nil {
		return 0, t.fault
	}
	if len(t.s.ctl.inject) > 0 {
		n := copy(p, t.s.ctl.inject)
		t.s.ctl.inject = t.s.ctl.inject[n:]
		return n, nil
	}
	if len(t.pushback) > 0 {
		n := copy(p, t.pushback)
		t.pushback = t.pushback[n:]
		return n, nil
	}
	for {
		n, err := t.readSocket(p)
		if n > 0 || err != nil || len(p) == 0 {
			return n, err
		}
		// All of it was owed: the library's reply is still to come.
	}
}

// watch150 reads the control connection while a transfer's data is read
// before its 150 (control.early150), until the 150 has come: what else
// comes is kept for the library (pushback), and a refusal in its place
// calls refused, which breaks the data connection so that the transfer
// ends on it. The function returned stops the watch and waits for it.
func (t *traceConn) watch150(refused func()) (stop func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		var buf [512]byte
		for t.s.ctl.pending150() {
			n, err := t.readSocket(buf[:])
			t.pushback = append(t.pushback, buf[:n]...)
			if t.s.ctl.refused150 {
				refused()
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return func() {
		select {
		case <-done:
			return
		default:
		}
		t.Conn.SetReadDeadline(time.Unix(1, 0))
		<-done
		if !t.aborted.Load() {
			t.Conn.SetReadDeadline(time.Time{})
		}
	}
}

// readSocket reads what the server sent: bounded, traced, told to the
// control state, the owed replies taken out.
func (t *traceConn) readSocket(p []byte) (int, error) {
	n, err := t.Conn.Read(p)
	t.s.mu.Lock()
	req := t.s.req
	t.s.mu.Unlock()
	if lerr := t.bound.scan(p[:n], req); lerr != nil {
		// A server that sends without end would have the library's reader
		// hold it all: the connection is given up instead, and every later
		// read and write says why (bufio's ReadLine drops an error that
		// comes with the bytes of a line).
		t.fault = lerr
		t.abort()
		return 0, lerr
	}
	if t.s.ctl.show220(p[:n]) {
		t.emit(nil, p[:n], protocols.TraceRecv)
		p[1] = '2' // "230" read as "220": see control
		return n, err
	}
	t.in = t.emit(t.in, p[:n], protocols.TraceRecv)
	if n > 0 {
		req.MarkActive() // the control connection may be a pooled one
	}
	if len(t.s.ctl.owed) > 0 && n > 0 {
		n = len(t.s.ctl.take(p[:n]))
	}
	return n, err
}

// Write sends what the library writes, as the control state decides
// (control.outgoing: a RETR pipelined with EPSV).
func (t *traceConn) Write(p []byte) (int, error) {
	if t.fault != nil {
		return 0, t.fault
	}
	t.s.ctl.partial = len(t.in) > 0
	send := t.s.ctl.outgoing(p)
	if len(send) == 0 {
		return len(p), nil
	}
	t.out = t.emit(t.out, send, protocols.TraceSend)
	if _, err := t.Conn.Write(send); err != nil {
		return 0, err
	}
	return len(p), nil
}

// emit traces the whole lines of acc and p, tells the control state of
// each, and returns what is left of a line.
func (t *traceConn) emit(acc, p []byte, dir protocols.TraceDir) []byte {
	if t.s.ctl.encrypted {
		return acc[:0]
	}
	t.s.mu.Lock()
	req := t.s.req
	t.s.mu.Unlock()
	tracing := req != nil && req.Trace != nil
	acc = append(acc, p...)
	start := 0
	for {
		i := bytes.IndexByte(acc[start:], '\n')
		if i < 0 {
			break
		}
		line := bytes.TrimRight(acc[start:start+i], "\r")
		start += i + 1
		encryptedNow := false
		if dir == protocols.TraceRecv {
			encryptedNow = t.s.ctl.received(line)
		} else {
			t.s.ctl.sent(line)
		}
		if tracing {
			req.Tracef(dir, string(line))
		}
		if encryptedNow {
			if tracing {
				req.Tracef(protocols.TraceInfo, "TLS from here on; the rest of the control conversation is not shown")
			}
			return nil
		}
	}
	rest := acc[start:]
	if len(rest) > 4096 {
		return acc[:0]
	}
	return acc[:copy(acc, rest)]
}

// captureConn keeps a copy of what a listing's data connection carries.
type captureConn struct {
	net.Conn
	buf *protocols.ListingBuffer
}

// Read takes the whole listing into buf (protocols.ListingBuffer: at most
// its bound, in pieces, so that a listing without end costs the bound and
// no more) and gives the library none of it: deref parses the listing
// itself, and the library's own entries would cost several times the
// listing's size.
func (c *captureConn) Read(p []byte) (int, error) {
	if _, err := c.buf.ReadFrom(c.Conn); err != nil {
		if errors.Is(err, protocols.ErrTooLarge) && !errors.Is(err, protocols.ErrTemporary) {
			return 0, fmt.Errorf("%w: listing larger than %d bytes", protocols.ErrTooLarge, c.buf.Max)
		}
		return 0, err
	}
	return 0, io.EOF
}

var _ io.Reader = (*captureConn)(nil)
