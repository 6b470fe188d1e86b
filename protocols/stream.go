package protocols

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/urlderef/deref/url"
)

// Send opens a connection to req.URL's server and sends one request
// line (traced, CRLF added) and data after it: the request of the
// protocols that ask once a connection (finger, Nex, Spartan).
func Send(ctx context.Context, req *Request, line string, data []byte) (net.Conn, error) {
	addr := req.URL.HostPort()
	req.Tracef(TraceInfo, "connecting to "+addr)
	conn, err := req.Dialer()(ctx, "tcp", addr)
	if err != nil {
		return nil, NetError(err)
	}
	req.Tracef(TraceSend, line)
	if _, err := conn.Write(append([]byte(line+"\r\n"), data...)); err != nil {
		conn.Close()
		return nil, NetError(err)
	}
	return conn, nil
}

// StreamResponse is the Response of a protocol that answers a request
// with the object and then closes (finger, Nex): the connection's bytes
// as the Body, the wait for the first of them bounded by firstByte, the
// context ending it.
func StreamResponse(ctx context.Context, conn net.Conn, firstByte time.Duration, mediaType, name string) *Response {
	conn.SetReadDeadline(time.Now().Add(firstByte))
	b := &ConnBody{Conn: conn, R: conn, Stop: context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) }), firstByte: true}
	return &Response{Kind: KindFile, Size: -1, MediaType: mediaType, Name: name, Body: b}
}

// ConnBody is a Body read from R, a reader of Conn's bytes, that ends the
// connection when closed.
type ConnBody struct {
	Conn net.Conn // closed by Close
	R    io.Reader
	// Stop, when set, undoes the context's hold on the connection
	// (context.AfterFunc's stop).
	Stop func() bool
	// Raw is the connection under Conn that Abort breaks (under TLS, the
	// TCP one); nil means Conn.
	Raw net.Conn
	// EOF, when set, says what the end of R is: nil for the object's end,
	// or the error it is instead (a TLS stream closed without close_notify).
	EOF func() error

	firstByte, heard, done bool
}

// Read gives the object's bytes; a connection's failure is a network
// error, a time-out before the first byte ErrTimeout.
func (b *ConnBody) Read(p []byte) (int, error) {
	n, err := b.R.Read(p)
	if n > 0 && b.firstByte && !b.heard {
		b.heard = true
		b.Conn.SetReadDeadline(time.Time{})
	}
	switch {
	case err == io.EOF && b.EOF != nil:
		if e := b.EOF(); e != nil {
			return n, e
		}
	case err != nil && err != io.EOF && os.IsTimeout(err) && b.firstByte && !b.heard:
		err = &wrapped{ErrTimeout, err}
	case err != nil && err != io.EOF:
		err = NetError(err)
	}
	return n, err
}

// Close ends the connection.
func (b *ConnBody) Close() error {
	if b.done {
		return nil
	}
	b.done = true
	if b.Stop != nil {
		b.Stop()
	}
	return b.Conn.Close()
}

// Abort breaks a Read under way (Aborter).
func (b *ConnBody) Abort() {
	if b.Raw != nil {
		b.Raw.SetDeadline(time.Unix(1, 0))
		return
	}
	b.Conn.SetDeadline(time.Unix(1, 0))
}

// PathName is the local file name a URL of a hierarchical path
// suggests: its last element, decoded; "" for a folder (a path that is
// empty or ends in "/").
func PathName(u *url.URL) string {
	p, err := url.Unescape(u.Path)
	if err != nil || p == "" || p[len(p)-1] == '/' {
		return ""
	}
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			return p[i+1:]
		}
	}
	return p
}

// Set fills in an exchange with no response head (finger's, Nex's): the
// request as sent, the server's address, the records' media type, the
// object's and the WARC-Protocol. A nil Exchange (no archive) is left.
func (e *Exchange) Set(request string, conn net.Conn, typ, payloadType, protocol string) {
	if e == nil {
		return
	}
	ip, _, _ := net.SplitHostPort(conn.RemoteAddr().String())
	*e = Exchange{Request: []byte(request), IP: ip, Type: typ, Status: "-", PayloadType: payloadType, Protocol: []string{protocol}}
}

// HeaderLine reads a response's one header line (Gemini's and
// Spartan's STATUS META), at most br's buffer: the line without its line
// end, and the bytes as they came (for an archive). A longer line, or a
// connection that ends before the line does, is ErrProtocol, proto
// naming the protocol; a connection's failure a network error.
func HeaderLine(br *bufio.Reader, proto string) (line string, raw []byte, err error) {
	head, err := br.ReadSlice('\n')
	switch {
	case err == bufio.ErrBufferFull:
		return "", nil, fmt.Errorf("%w: %s: a header line of more than %d bytes", ErrProtocol, proto, len(head))
	case err == io.EOF && len(head) == 0:
		return "", nil, fmt.Errorf("%w: %s: the server closed the connection without a header", ErrProtocol, proto)
	case err == io.EOF:
		s := string(head)
		if len(s) > 80 {
			s = s[:80] + "..."
		}
		return "", nil, fmt.Errorf("%w: %s: a header line cut short: %s", ErrProtocol, proto, strconv.Quote(s))
	case err != nil:
		return "", nil, NetError(err)
	}
	raw = append([]byte(nil), head...)
	return strings.TrimSuffix(strings.TrimSuffix(string(head), "\n"), "\r"), raw, nil
}
