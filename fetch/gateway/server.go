package gateway

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// Limits bound what clients may hold of a gateway's HTTP server, for one
// exposed to a network: Go's net/http sets no time-outs of its own, so a
// client that sends its head a byte at a time, or reads its answer a
// byte at a time, would hold a connection for ever. The zero value of
// each field is the default named.
type Limits struct {
	// MaxConns caps the connections open at once (0: half of the
	// process's file descriptor limit, at most 4,096; see DefaultMaxConns);
	// PerAddr caps those of one client address (0: 256). A connection
	// past either is answered 503 and closed at once.
	MaxConns, PerAddr int
	// HeaderTimeout bounds the reading of a request's head, from its
	// first byte (0: 10 s; nginx's client_header_timeout is 60 s): a
	// client that trickles it is answered 400 (net/http's answer to a
	// head cut short) or its connection closed.
	HeaderTimeout time.Duration
	// IdleTimeout closes a keep-alive connection with no request for that
	// long (0: 75 s, nginx's keepalive_timeout).
	IdleTimeout time.Duration
	// SendTimeout ends a response the client has taken nothing of for
	// that long (0: 60 s, nginx's send_timeout); a slow reader is
	// served as long as it takes a write, or a splice chunk of 512 KiB
	// (about 8 KiB a second at the default), within it.
	SendTimeout time.Duration
	// MaxHeaderBytes bounds a request's head (0: 32 KiB, nginx's four
	// 8 KiB buffers): a longer one is answered 431; MaxURL bounds its
	// target (0: 8 KiB): a longer one is answered 414.
	MaxHeaderBytes, MaxURL int
}

func (l Limits) withDefaults() Limits {
	if l.MaxConns <= 0 {
		l.MaxConns = DefaultMaxConns()
	}
	if l.PerAddr <= 0 {
		l.PerAddr = 256
	}
	if l.HeaderTimeout <= 0 {
		l.HeaderTimeout = 10 * time.Second
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = 75 * time.Second
	}
	if l.SendTimeout <= 0 {
		l.SendTimeout = 60 * time.Second
	}
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = 32 << 10
	}
	if l.MaxURL <= 0 {
		l.MaxURL = 8 << 10
	}
	return l
}

// DefaultMaxConns is Limits.MaxConns's default: half the file
// descriptors the process may open (the other half for the upstream
// connections, archives and logs), at least 64 and at most 4,096.
func DefaultMaxConns() int {
	return min(max(fdLimit()/2, 64), 4096)
}

// Server returns an http.Server for a gateway handler h with the limits
// l, and Listen wraps its listener: both are needed, as deref serve uses
// them (srv.Serve(l.Listen(ln))).
func (l Limits) Server(h http.Handler) *http.Server {
	l = l.withDefaults()
	return &http.Server{
		Handler:           guardRequest(h, l),
		ReadHeaderTimeout: l.HeaderTimeout,
		IdleTimeout:       l.IdleTimeout,
		// net/http adds 4 KiB to it; the head's own bound is MaxHeaderBytes.
		MaxHeaderBytes: max(l.MaxHeaderBytes-4096, 1),
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if lc, ok := c.(*limitConn); ok {
				return context.WithValue(ctx, connKey{}, lc)
			}
			return ctx
		},
	}
}

type connKey struct{}

// guardRequest answers what no gateway request may be before h sees it: a
// target longer than MaxURL (414), a body (a GET or HEAD has none; one
// that says it has, by Content-Length or Transfer-Encoding, is a
// smuggling shape: 400, and the connection closed), a head with a line
// folded onto the next (400, closed).
func guardRequest(h http.Handler, l Limits) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lc, _ := r.Context().Value(connKey{}).(*limitConn)
		switch {
		case lc != nil && lc.folded():
			// net/http joins an obsolete folded line (RFC 9112 §5.2
			// lets a server do that or refuse it): refused, as a
			// smuggling shape, when Listen's connection saw one.
			w.Header().Set("Connection", "close")
			http.Error(w, "a header line folded onto the next (obs-fold)", http.StatusBadRequest)
		case len(r.RequestURI) > l.MaxURL:
			w.Header().Set("Connection", "close")
			http.Error(w, "URI too long", http.StatusRequestURITooLong)
		case r.ContentLength != 0 || len(r.TransferEncoding) > 0 || len(r.Header.Values("Content-Length")) > 1:
			w.Header().Set("Connection", "close")
			http.Error(w, "a gateway request has no body", http.StatusBadRequest)
		default:
			h.ServeHTTP(w, r)
		}
	})
}

// Listen wraps ln so that it holds at most MaxConns connections, PerAddr
// of one address, and ends a response not read for SendTimeout.
func (l Limits) Listen(ln net.Listener) net.Listener {
	l = l.withDefaults()
	return &limitListener{Listener: ln, l: l, perAddr: map[string]int{}}
}

type limitListener struct {
	net.Listener
	l       Limits
	mu      sync.Mutex
	total   int
	perAddr map[string]int
}

// busy is the answer to a connection past a limit.
const busy = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 38\r\nRetry-After: 5\r\nConnection: close\r\n\r\ntoo many connections: try again later\n"

func (ll *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := ll.Listener.Accept()
		if err != nil {
			return nil, err
		}
		addr := hostOf(c.RemoteAddr().String())
		ll.mu.Lock()
		over := ll.total >= ll.l.MaxConns || ll.perAddr[addr] >= ll.l.PerAddr
		if !over {
			ll.total++
			ll.perAddr[addr]++
		}
		ll.mu.Unlock()
		if over {
			c.SetWriteDeadline(time.Now().Add(time.Second))
			io.WriteString(c, busy)
			c.Close()
			continue
		}
		return &limitConn{Conn: c, ll: ll, addr: addr}, nil
	}
}

func hostOf(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}

// limitConn is an accepted connection: it gives its slot back when
// closed, and sets a write deadline SendTimeout ahead before each write
// (and each chunk of a splice), so that a reader that takes nothing for
// that long ends the response while one that reads slowly is served.
type limitConn struct {
	net.Conn
	ll     *limitListener
	addr   string
	closed sync.Once

	// What Read saw of the request heads, in order (see scan): which
	// heads had a folded line, how many heads ended, how many requests
	// the handler took.
	mu         sync.Mutex
	lineStart  bool // the byte before was a head line's LF
	blank      bool // the line so far is a lone CR
	heads      int
	foldedHead map[int]bool
	taken      int
}

// Read scans the request heads as they come for obs-fold: a head line
// that starts with a space or a tab. A request with a body is refused and
// its connection closed, so that after a head's blank line the next
// bytes are the next request's.
func (c *limitConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	for _, b := range p[:n] {
		switch {
		case b == '\n':
			if c.lineStart || c.blank { // "\n\n" or "\r\n\r\n": the head's end
				c.heads++
				c.lineStart, c.blank = false, false
				continue
			}
			c.lineStart = true
		case c.lineStart && (b == ' ' || b == '\t'):
			if c.foldedHead == nil {
				c.foldedHead = map[int]bool{}
			}
			c.foldedHead[c.heads] = true
			c.lineStart = false
		case c.lineStart && b == '\r':
			c.lineStart, c.blank = false, true
		default:
			c.lineStart, c.blank = false, false
		}
	}
	c.mu.Unlock()
	return n, err
}

// folded says whether the head of the next request the handler takes had
// a folded line.
func (c *limitConn) folded() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.foldedHead[c.taken]
	delete(c.foldedHead, c.taken)
	c.taken++
	return f
}

func (c *limitConn) Write(p []byte) (int, error) {
	c.Conn.SetWriteDeadline(time.Now().Add(c.ll.l.SendTimeout))
	return c.Conn.Write(p)
}

// sendChunk is how much of a splice goes under one write deadline: small
// enough that a client reading 8 KiB a second keeps its response.
const sendChunk = 512 << 10

// ReadFrom keeps net/http's splice from an upstream socket to the
// client's, a chunk at a time under its own deadline.
func (c *limitConn) ReadFrom(r io.Reader) (int64, error) {
	rf, ok := c.Conn.(io.ReaderFrom)
	if !ok {
		return io.Copy(struct{ io.Writer }{c}, r)
	}
	var total int64
	for {
		c.Conn.SetWriteDeadline(time.Now().Add(c.ll.l.SendTimeout))
		n, err := rf.ReadFrom(io.LimitReader(r, sendChunk))
		total += n
		if err != nil || n < sendChunk {
			return total, err
		}
	}
}

// CloseWrite lets net/http half-close as it does on a TCP connection.
func (c *limitConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errors.New("not a TCP connection")
}

func (c *limitConn) Close() error {
	c.closed.Do(func() {
		ll := c.ll
		ll.mu.Lock()
		ll.total--
		if ll.perAddr[c.addr]--; ll.perAddr[c.addr] == 0 {
			delete(ll.perAddr, c.addr)
		}
		ll.mu.Unlock()
	})
	return c.Conn.Close()
}
