package http

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	nethttp "net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/protocols/internal/idleconn"
	"github.com/urlderef/deref/protocols/internal/rcvlowat"
	"github.com/urlderef/deref/protocols/internal/splice"
)

// HTTP and HTTPS requests without a proxy go over a connection of our own
// (TLS where the scheme says so), with net/http's wire writer
// (Request.Write) and reader (ReadResponse): the trace then shows both
// heads as they went over the wire, in order. A plain-HTTP body framed by
// Content-Length is read straight from the socket, so that copying it into
// a file can splice the socket into the file instead of passing every byte
// through user space.

const maxIdlePerHost = 4

type connPool struct {
	mu   sync.Mutex
	idle map[string][]net.Conn
}

// get takes an idle connection to addr, passing over (and closing) those
// the server closed while they were idle; nil when none is left.
func (p *connPool) get(addr string) net.Conn {
	for {
		p.mu.Lock()
		cs := p.idle[addr]
		if len(cs) == 0 {
			p.mu.Unlock()
			return nil
		}
		c := cs[len(cs)-1]
		p.idle[addr] = cs[:len(cs)-1]
		p.mu.Unlock()
		if idleconn.Usable(c) {
			return c
		}
		c.Close()
	}
}

func (p *connPool) put(addr string, c net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.idle == nil {
		p.idle = make(map[string][]net.Conn)
	}
	if len(p.idle[addr]) >= maxIdlePerHost {
		c.Close()
		return
	}
	p.idle[addr] = append(p.idle[addr], c)
}

func (p *connPool) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, cs := range p.idle {
		for _, c := range cs {
			c.Close()
		}
	}
	p.idle = nil
}

// rawRoundTrip sends hreq and reads the response head. A kept-alive
// connection that fails before the reply is replaced by a new one once.
func (f *Fetcher) rawRoundTrip(ctx context.Context, req *protocols.Request, hreq *nethttp.Request) (*nethttp.Response, error) {
	addr := req.URL.HostPort()
	key := req.URL.Scheme + "://" + addr
	for attempt := 0; ; attempt++ {
		conn := f.pool.get(key)
		reused := conn != nil
		if reused {
			req.MarkActive() // connected already: the reply is awaited for the idle time only
			req.Tracef(protocols.TraceInfo, "reusing the connection to "+conn.RemoteAddr().String())
			req.Tracef(protocols.TraceInfo, "local address "+conn.LocalAddr().String())
		}
		if conn == nil {
			var err error
			req.Tracef(protocols.TraceInfo, "connecting to "+addr)
			if conn, err = req.Dialer()(ctx, "tcp", addr); err != nil {
				return nil, err
			}
			req.Tracef(protocols.TraceInfo, "connected to "+conn.RemoteAddr().String())
			req.Tracef(protocols.TraceInfo, "local address "+conn.LocalAddr().String())
			if req.URL.Scheme == "https" {
				if conn, err = handshake(ctx, req, conn); err != nil {
					return nil, err
				}
			}
		}
		resp, err := f.exchange(ctx, req, conn, hreq, key)
		if err == nil {
			return resp, nil
		}
		conn.Close()
		if !reused || attempt > 0 || ctx.Err() != nil {
			return nil, err
		}
	}
}

// handshake makes conn a TLS connection to req's host, HTTP/1.1 only,
// with the certificate verified unless req.TLS says otherwise.
func handshake(ctx context.Context, req *protocols.Request, conn net.Conn) (net.Conn, error) {
	cfg := &tls.Config{}
	if req.TLS != nil {
		cfg = req.TLS.Clone()
	}
	if cfg.ServerName == "" {
		cfg.ServerName = req.URL.Hostname()
	}
	cfg.NextProtos = []string{"http/1.1"}
	tc := tls.Client(conn, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		conn.Close()
		return nil, err
	}
	st := tc.ConnectionState()
	req.Tracef(protocols.TraceInfo, "TLS "+tls.VersionName(st.Version)+", "+tls.CipherSuiteName(st.CipherSuite))
	return tc, nil
}

func (f *Fetcher) exchange(ctx context.Context, req *protocols.Request, conn net.Conn, hreq *nethttp.Request, addr string) (*nethttp.Response, error) {
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	var out bytes.Buffer
	if err := hreq.Write(&out); err != nil {
		return nil, err
	}
	if req.Trace != nil {
		traceHead(req, protocols.TraceSend, out.Bytes()) // as it goes over the wire, after connecting
	}
	if ex := req.Exchange; ex != nil {
		ex.Request = hideAuthorization(out.Bytes())
		if h, _, err := net.SplitHostPort(conn.RemoteAddr().String()); err == nil {
			ex.IP = h
		}
	}
	if _, err := conn.Write(out.Bytes()); err != nil {
		return nil, err
	}
	head := &headLimit{r: conn, left: min(maxHead, req.ListingLimit()), held: protocols.Hold(req.Memory)}
	defer head.held.Release()
	if req.Trace != nil || req.Exchange != nil {
		head.tap = taps.Get().(*bytes.Buffer)
	}
	br := readers.Get().(*bufio.Reader)
	br.Reset(head)
	resp, err := nethttp.ReadResponse(br, hreq)
	if head.tap != nil {
		// The head's lines as they came, up to the blank line; what was
		// read beyond it is the body's.
		b := head.tap.Bytes()
		end := len(b)
		if i := bytes.Index(b, []byte("\r\n\r\n")); i >= 0 {
			b, end = b[:i], i+4
		} else if i := bytes.Index(b, []byte("\n\n")); i >= 0 {
			b, end = b[:i], i+2
		}
		if req.Trace != nil {
			traceHead(req, protocols.TraceRecv, b)
		}
		if req.Exchange != nil && err == nil {
			req.Exchange.Response = bytes.Clone(head.tap.Bytes()[:end])
		}
		putTap(head.tap)
		head.tap = nil
	}
	if err != nil {
		putReader(br)
		var ne net.Error
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.Is(err, errHeadTooLarge):
			return nil, fmt.Errorf("%w: %w", protocols.ErrProtocol, err)
		case errors.As(err, &ne), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", protocols.ErrProtocol, err)
	}
	head.off = true
	if !stop() {
		conn.Close()
		return nil, ctx.Err()
	}
	switch {
	case hreq.Method == "HEAD":
		// No body follows, whatever Content-Length says: the connection
		// goes back to the pool when the empty body is closed.
		resp.Body = &rawBody{conn: conn, br: br, pool: &f.pool, addr: addr, keep: !resp.Close}
	case resp.ContentLength >= 0 && len(resp.TransferEncoding) == 0:
		rb := &rawBody{conn: conn, br: br, pool: &f.pool, addr: addr, keep: !resp.Close, batching: true}
		rb.left.Store(resp.ContentLength)
		resp.Body = rb
	default:
		resp.Body = &closingBody{resp.Body, conn}
	}
	return resp, nil
}

// maxHead bounds the status line and header of a response; a smaller
// Request.MaxListing bounds it further.
const maxHead = 1 << 20

var errHeadTooLarge = errors.New("response header past its bound (1 MiB, or MaxListing when smaller)")

// headLimit bounds what the response head may read; once the head is
// parsed, it passes reads through.
type headLimit struct {
	r    io.Reader
	left int64
	off  bool
	tap  *bytes.Buffer // when tracing: what was read for the head
	held *protocols.Held
}

func (h *headLimit) Read(p []byte) (int, error) {
	if h.off {
		return h.r.Read(p)
	}
	if h.left <= 0 {
		return 0, errHeadTooLarge
	}
	if int64(len(p)) > h.left {
		p = p[:h.left]
	}
	n, err := h.r.Read(p)
	h.left -= int64(n)
	if gerr := h.held.Grow(int64(n) * 3); gerr != nil && err == nil {
		err = gerr // a head is held about three times over as it is parsed
	}
	if h.tap != nil {
		h.tap.Write(p[:n])
	}
	return n, err
}

// closingBody closes the connection with the body: chunked or unframed
// bodies are not worth keeping the connection for.
type closingBody struct {
	io.ReadCloser
	conn net.Conn
}

// Close drops the connection first: net/http's reader of a body that has
// not reached its end reads it to the end on Close, which a body that
// never ends (or a hostile server's) would make last forever.
func (b *closingBody) Close() error {
	err := b.conn.Close()
	b.ReadCloser.Close()
	return err
}

// rawBody is a Content-Length body read from the buffered head, then from
// the socket itself.
type rawBody struct {
	conn   net.Conn
	br     *bufio.Reader
	left   atomic.Int64
	pool   *connPool
	addr   string
	keep   bool
	closed atomic.Bool
	// batch raises the socket's low-water mark while a large body is read
	// with Read; it is started at the first read from the socket and
	// stopped at the body's end, before the connection can be reused.
	batch    *rcvlowat.Batch
	batching bool
}

func (b *rawBody) Read(p []byte) (int, error) {
	left := b.left.Load()
	if left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	var n int
	var err error
	if b.br.Buffered() > 0 {
		n, err = b.br.Read(p)
	} else {
		if b.batching {
			b.batching = false
			b.batch = rcvlowat.Start(b.conn, left)
		}
		n, err = b.conn.Read(p)
	}
	left = b.left.Add(-int64(n))
	if b.batch != nil {
		if left <= 0 || err != nil {
			b.batch.Stop()
			b.batch = nil
		} else if n > 0 {
			b.batch.Progress(left)
		}
	}
	return n, b.mapErr(err, left)
}

func (b *rawBody) mapErr(err error, left int64) error {
	switch {
	case err == nil:
		return nil
	case err == io.EOF && left > 0:
		return fmt.Errorf("%w: connection closed with %d bytes to come", protocols.ErrShortBody, left)
	case err == io.EOF:
		return io.EOF
	case b.closed.Load():
		return net.ErrClosed
	}
	return protocols.NetError(err)
}

// CopyTo writes the body to w. When w is a file and the connection a
// socket, the data is spliced from one to the other, one system call at a
// time, with step called after each.
func (b *rawBody) CopyTo(w io.Writer, step func(int64) error) (int64, error) {
	if b.left.Load() <= 0 {
		return 0, nil // read whole: br may be another response's now
	}
	var total int64
	if k := b.br.Buffered(); k > 0 {
		k = int(min(int64(k), b.left.Load()))
		n, err := io.CopyN(w, b.br, int64(k))
		b.left.Add(-n)
		total += n
		if err != nil {
			return total, writeErr(err)
		}
		if err := step(n); err != nil {
			return total, err
		}
	}
	f, isFile := w.(splice.Dst) // a file, or a socket (a gateway passing an object on)
	sc, isSock := b.conn.(syscall.Conn)
	if isFile && isSock && b.left.Load() > 0 {
		n, err := splice.Copy(f, sc, b.left.Load(), step)
		left := b.left.Add(-n)
		total += n
		switch {
		case err == nil:
			return total, nil
		case err == io.ErrUnexpectedEOF:
			return total, b.mapErr(io.EOF, left)
		case errors.Is(err, splice.ErrUnsupported):
			// go on below with Read and Write
		case errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EPIPE) || isPathError(err):
			return total, writeErr(err)
		default:
			return total, b.mapErr(err, left)
		}
	}
	return splice.ReadWrite(w, b, step, total, b.left.Load())
}

func isPathError(err error) bool {
	var pe *os.PathError
	return errors.As(err, &pe)
}

// Close returns a fully read connection to the pool, else closes it.
func (b *rawBody) Close() error {
	if b.closed.Swap(true) {
		return nil
	}
	whole := b.left.Load() == 0 && b.br.Buffered() == 0
	if whole {
		// Read whole, nothing reads br again (every Read, and CopyTo,
		// ends at once): it serves the next response.
		putReader(b.br)
	}
	if b.keep && whole {
		b.pool.put(b.addr, b.conn)
		return nil
	}
	return b.conn.Close()
}

// readers hold the readers of response heads, which are large enough to
// take a small page with its head in one read: a crawl of small pages
// would otherwise make one per page, most of what it allocates.
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 32<<10) }}

func putReader(br *bufio.Reader) {
	br.Reset(nil)
	readers.Put(br)
}

// taps hold the copies of what a response head's reads took (the head,
// and often a small page after it), made when the head is traced or
// archived: a crawl of small pages made one a page before, grown by
// doubling to the page's size.
var taps = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// putTap gives a tap back to taps, unless a large head made it large.
func putTap(b *bytes.Buffer) {
	if b.Cap() <= 64<<10 {
		b.Reset()
		taps.Put(b)
	}
}

// writeErr marks an error of the destination, so that a full disk is not
// taken for a failed transfer.
func writeErr(err error) error { return fmt.Errorf("%w: %w", protocols.ErrWrite, err) }

// The contracts it claims, checked when it compiles.
var _ protocols.Copier = (*rawBody)(nil)

// hideAuthorization is a request head with the values of its
// Authorization and Proxy-Authorization fields hidden, for an archive.
func hideAuthorization(head []byte) []byte {
	if !hasAuthField(head) {
		return head // as most are: nothing to hide, nothing to copy
	}
	var out bytes.Buffer
	for _, l := range strings.SplitAfter(string(head), "\n") {
		line, end := strings.CutSuffix(l, "\r\n")
		if !end {
			line, end = strings.CutSuffix(l, "\n")
		}
		out.WriteString(hideAuthField(line))
		if end {
			out.WriteString(l[len(line):])
		}
	}
	return out.Bytes()
}

// hasAuthField says whether a head has an Authorization or
// Proxy-Authorization field.
func hasAuthField(head []byte) bool {
	for len(head) > 0 {
		var line []byte
		line, head, _ = bytes.Cut(head, []byte("\n"))
		if k, _, ok := bytes.Cut(line, []byte(":")); ok && (bytes.EqualFold(k, []byte("Authorization")) || bytes.EqualFold(k, []byte("Proxy-Authorization"))) {
			return true
		}
	}
	return false
}
