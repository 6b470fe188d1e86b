package nntp

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"strconv"
	"strings"
	"time"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/protocols/internal/quickack"
)

// ReplyError is a reply that ended a command. It unwraps to the sentinel
// its code maps to.
type ReplyError struct {
	Cmd  string // the command, with any password hidden
	Code int
	Text string
	kind error
}

// Error gives the command and the server's reply.
func (e *ReplyError) Error() string {
	return fmt.Sprintf("%s: %d %s", e.Cmd, e.Code, e.Text)
}

// Unwrap returns the sentinel of the code.
func (e *ReplyError) Unwrap() error { return e.kind }

// replyKind maps a reply code to a sentinel (RFC 3977 §3.2, RFC 4643).
func replyKind(code int) error {
	switch code {
	case 411, 412, 420, 421, 422, 423, 430:
		return protocols.ErrNotFound
	case 480, 481, 482, 483, 502:
		return protocols.ErrAuth
	case 400, 403:
		return protocols.ErrTemporary
	}
	return protocols.ErrProtocol
}

// conn is one connection to a news server, in reader mode.
type conn struct {
	raw    net.Conn
	br     *bufio.Reader     // every read goes through it
	tr     *textproto.Reader // over br: dot-terminated blocks
	tw     *textproto.Writer // command lines
	req    *protocols.Request
	key    string
	limit  int
	caps   map[string]string // capability label -> its arguments
	group  string            // the group selected, if any
	authed bool
	tls    bool
	stop   func() bool
	broken bool
}

// dial connects, reads the greeting, learns the capabilities, switches to
// reader mode where the server needs it and upgrades with STARTTLS when
// asked.
func (f *Fetcher) dial(ctx context.Context, req *protocols.Request, addr, host string, implicitTLS bool) (*conn, error) {
	req.Tracef(protocols.TraceInfo, "connecting to "+addr)
	raw, err := req.Dialer()(ctx, "tcp", addr)
	if err != nil {
		return nil, protocols.NetError(err)
	}
	c := &conn{raw: raw, req: req, limit: req.LineLimit()}
	if implicitTLS {
		if err := c.startTLS(ctx, host); err != nil {
			raw.Close()
			return nil, err
		}
	} else {
		c.wrap(raw)
	}
	c.stop = context.AfterFunc(ctx, func() { c.raw.SetDeadline(aLongTimeAgo) })
	greeted := req.AwaitGreeting(ctx, c.raw)
	if err := f.setup(ctx, c, host, implicitTLS, greeted); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

func (c *conn) wrap(nc net.Conn) {
	c.raw = nc
	c.br = bufio.NewReaderSize(heard{nc, c}, 32<<10)
	c.tr = textproto.NewReader(c.br)
	c.tw = textproto.NewWriter(bufio.NewWriter(nc))
}

func (c *conn) startTLS(ctx context.Context, host string) error {
	cfg := &tls.Config{}
	if c.req.TLS != nil {
		cfg = c.req.TLS.Clone()
	}
	if cfg.ServerName == "" {
		cfg.ServerName = host
	}
	tc := tls.Client(c.raw, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		return protocols.NetError(err)
	}
	c.req.Tracef(protocols.TraceInfo, "TLS "+tls.VersionName(tc.ConnectionState().Version))
	c.wrap(tc)
	c.tls = true
	return nil
}

func (f *Fetcher) setup(ctx context.Context, c *conn, host string, implicitTLS bool, greeted func()) error {
	code, text, err := c.readReply()
	if err != nil {
		return c.req.GreetingError(ctx, err)
	}
	greeted()
	switch code {
	case 200, 201:
	case 400:
		return &ReplyError{Cmd: "greeting", Code: code, Text: text, kind: protocols.ErrTemporary}
	case 502:
		return &ReplyError{Cmd: "greeting", Code: code, Text: text, kind: protocols.ErrPermission}
	default:
		return &ReplyError{Cmd: "greeting", Code: code, Text: text, kind: protocols.ErrProtocol}
	}
	c.capabilities()
	if _, reader := c.caps["READER"]; !reader {
		// MODE-READER is advertised by servers that need it; a server that
		// answers CAPABILITIES with nothing may need it too.
		if _, mr := c.caps["MODE-READER"]; mr || len(c.caps) == 0 {
			code, text, err := c.cmd("MODE READER")
			if err != nil {
				return err
			}
			if code == 200 || code == 201 {
				c.capabilities()
			} else if code != 500 && code != 501 {
				return &ReplyError{Cmd: "MODE READER", Code: code, Text: text, kind: replyKind(code)}
			}
		}
	}
	if f.StartTLS && !implicitTLS {
		if _, ok := c.caps["STARTTLS"]; !ok {
			return fmt.Errorf("%w: STARTTLS was asked for and the server does not offer it", protocols.ErrProtocol)
		}
		code, text, err := c.cmd("STARTTLS")
		if err != nil {
			return err
		}
		if code != 382 {
			return &ReplyError{Cmd: "STARTTLS", Code: code, Text: text, kind: protocols.ErrProtocol}
		}
		if err := c.startTLS(ctx, host); err != nil {
			return err
		}
		c.capabilities()
	}
	return nil
}

// capabilities asks CAPABILITIES; a server without it leaves caps empty.
func (c *conn) capabilities() {
	c.caps = map[string]string{}
	code, _, err := c.cmd("CAPABILITIES")
	if err != nil || code != 101 {
		return
	}
	lines, err := c.readLines(1 << 16)
	if err != nil {
		return
	}
	for _, l := range lines {
		label, args, _ := strings.Cut(l, " ")
		c.caps[strings.ToUpper(label)] = args
	}
}

// hasOver reports whether OVER is offered (else XOVER is tried).
func (c *conn) hasOver() bool {
	_, ok := c.caps["OVER"]
	return ok
}

// cmd sends a command line and reads the status line of the reply. The
// line was checked for CR, LF and NUL by the caller.
func (c *conn) cmd(line string) (int, string, error) {
	if err := c.send(line); err != nil {
		return 0, "", err
	}
	return c.readReply()
}

func (c *conn) send(line string) error {
	if strings.ContainsAny(line, "\r\n\x00") {
		return fmt.Errorf("%w: CR, LF or NUL in a command", protocols.ErrBadURL)
	}
	c.req.Tracef(protocols.TraceSend, line)
	if err := c.tw.PrintfLine("%s", line); err != nil {
		c.broken = true
		return protocols.NetError(err)
	}
	quickack.Arm(c.raw) // INN sends a reply's status line and its text apart: see quickack
	return nil
}

// readLine reads one line of at most c.limit bytes, without its CRLF.
func (c *conn) readLine() (string, error) {
	var line []byte
	for {
		frag, err := c.br.ReadSlice('\n')
		if len(line)+len(frag) > c.limit {
			c.broken = true
			return "", fmt.Errorf("%w: a line longer than %d bytes", protocols.ErrProtocol, c.limit)
		}
		line = append(line, frag...)
		if err == nil {
			break
		}
		if err != bufio.ErrBufferFull {
			c.broken = true
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return "", protocols.NetError(err)
		}
	}
	return strings.TrimRight(string(line), "\r\n"), nil
}

// readReply reads a status line: three digits, a space, text.
func (c *conn) readReply() (int, string, error) {
	line, err := c.readLine()
	if err != nil {
		return 0, "", err
	}
	c.req.Tracef(protocols.TraceRecv, line)
	if len(line) < 3 {
		c.broken = true
		return 0, "", fmt.Errorf("%w: status line %q", protocols.ErrProtocol, line)
	}
	code, err := strconv.Atoi(line[:3])
	if err != nil || code < 100 || code > 599 || len(line) > 3 && line[3] != ' ' {
		c.broken = true
		return 0, "", fmt.Errorf("%w: status line %q", protocols.ErrProtocol, line)
	}
	return code, strings.TrimPrefix(line[3:], " "), nil
}

// readLines reads a dot-terminated block of at most max lines, dot
// stuffing undone.
func (c *conn) readLines(max int) ([]string, error) {
	var lines []string
	var size, reserved int64
	limit := c.req.ListingLimit()
	held := protocols.Hold(c.req.Memory)
	defer held.Release()
	for {
		l, err := c.readLine()
		if err != nil {
			return nil, err
		}
		if l == "." {
			return lines, nil
		}
		if size += int64(len(l)) + 24; size > limit { // the line and its string header
			c.broken = true
			return nil, fmt.Errorf("%w: a listing larger than %d bytes", protocols.ErrTooLarge, limit)
		}
		if size > reserved {
			if err := held.Grow(256 << 10); err != nil {
				c.broken = true
				return nil, err
			}
			reserved += 256 << 10
		}
		if len(lines) == max {
			c.broken = true
			return nil, fmt.Errorf("%w: more than %d lines", protocols.ErrProtocol, max)
		}
		lines = append(lines, strings.TrimPrefix(l, "."))
	}
}

// do sends a command and returns its reply; a 480 is answered with
// AUTHINFO USER/PASS (RFC 4643) and the command sent again.
func (c *conn) do(ctx context.Context, line string) (int, string, error) {
	code, text, err := c.cmd(line)
	if err != nil || code != 480 || c.authed {
		return code, text, err
	}
	if err := c.auth(ctx, text); err != nil {
		return 0, "", err
	}
	return c.cmd(line)
}

func (c *conn) auth(ctx context.Context, why string) error {
	cr := c.req.Credentials
	if !cr.HasUser {
		return &ReplyError{Cmd: "login", Code: 480, Text: why + " (no user for this server: give one in nntp://user@host/ or ~/.netrc)", kind: protocols.ErrAuth}
	}
	code, text, err := c.cmd("AUTHINFO USER " + cr.User)
	if err != nil {
		return err
	}
	if code == 381 {
		pass := cr.Password
		if !cr.HasPassword {
			if cr.Prompt == nil {
				return &ReplyError{Cmd: "AUTHINFO PASS", Code: 381, Text: c.req.PasswordHint(cr.User), kind: protocols.ErrAuth}
			}
			if pass, err = cr.Prompt(ctx, cr.User); err != nil {
				return err
			}
			if strings.ContainsAny(pass, "\r\n\x00") {
				return fmt.Errorf("%w: CR, LF or NUL in the password", protocols.ErrBadURL)
			}
		}
		code, text, err = c.cmd("AUTHINFO PASS " + pass)
		if err != nil {
			return err
		}
	}
	if code != 281 {
		cmd := "AUTHINFO USER"
		if code != 381 {
			cmd = "AUTHINFO PASS"
		}
		return &ReplyError{Cmd: cmd, Code: code, Text: text, kind: protocols.ErrAuth}
	}
	c.authed = true
	// Capabilities may change after authentication (RFC 4643 §2.4.1).
	c.capabilities()
	return nil
}

// selectGroup sends GROUP and returns its estimate of the article count
// and the low and high water marks.
func (c *conn) selectGroup(ctx context.Context, g string) (count, low, high int64, err error) {
	code, text, err := c.do(ctx, "GROUP "+g)
	if err != nil {
		return 0, 0, 0, err
	}
	if code != 211 {
		c.group = ""
		return 0, 0, 0, &ReplyError{Cmd: "GROUP " + g, Code: code, Text: text, kind: replyKind(code)}
	}
	f := strings.Fields(text)
	if len(f) < 3 {
		return 0, 0, 0, fmt.Errorf("%w: GROUP reply %q", protocols.ErrProtocol, text)
	}
	count, err1 := strconv.ParseInt(f[0], 10, 64)
	low, err2 := strconv.ParseInt(f[1], 10, 64)
	high, err3 := strconv.ParseInt(f[2], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return 0, 0, 0, fmt.Errorf("%w: GROUP reply %q", protocols.ErrProtocol, text)
	}
	c.group = g
	return count, low, high, nil
}

func (c *conn) close() {
	if c.stop != nil {
		c.stop()
	}
	c.raw.Close()
}

// aLongTimeAgo is a deadline in the past: setting it wakes blocked I/O.
var aLongTimeAgo = time.Unix(1, 0)

// heard tells the retrieval using the connection, which may have been
// kept from an earlier one, that the server was heard from.
type heard struct {
	r io.Reader
	c *conn
}

func (h heard) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	if n > 0 {
		h.c.req.MarkActive()
	}
	return n, err
}
