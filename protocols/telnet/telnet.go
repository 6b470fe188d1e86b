// Package telnet opens interactive sessions for telnet: URLs (RFC 1738
// §3.8, RFC 854) on github.com/ziutek/telnet.
//
// That library dies on IAC NOP, IAC DM and the other plain commands,
// always reports a 65535x65535 window and never sends a terminal type.
// The session therefore reads the connection through a filter that takes
// those commands out of the stream before the library sees them: NOP, DM,
// GA, BRK, IP, AO, AYT, EC and EL are dropped; DO TTYPE is answered WILL
// and SB TTYPE SEND with the terminal type (RFC 1091); DO NAWS is answered
// WILL and the real window size, sent again on every resize (RFC 1073).
// ECHO, SUPPRESS-GO-AHEAD and refusals of other options are left to the
// library; the filter notes whether the server echoes.
package telnet

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	ztelnet "github.com/ziutek/telnet"

	"github.com/urlderef/deref/protocols"
)

// Telnet command and option codes (RFC 854, 857, 858, 1073, 1091).
const (
	iac  = 255
	dont = 254
	do   = 253
	wont = 252
	will = 251
	sb   = 250
	se   = 240

	optEcho  = 1
	optTType = 24
	optNAWS  = 31

	ttypeIs   = 0
	ttypeSend = 1
)

// Fetcher opens telnet sessions. The zero value is ready to use.
type Fetcher struct {
	// Term is the terminal type sent when the server asks; empty means
	// $TERM, else "network".
	Term string
	// Width and Height are the window size sent when the server asks
	// (NAWS); 0 means 80 by 24.
	Width, Height int
}

// Session is an open telnet session: what is read is the server's output
// with the protocol's commands taken out; what is written goes to the
// server with IAC doubled.
type Session struct {
	*ztelnet.Conn
	f *filter
}

// SetWindowSize reports a new window size to the server, if it asked for
// it (NAWS), and remembers it otherwise.
func (s *Session) SetWindowSize(width, height int) error {
	return s.f.setSize(width, height)
}

// RemoteEcho reports whether the server echoes what is typed (it sent
// WILL ECHO): the terminal then goes into raw mode.
func (s *Session) RemoteEcho() bool { return s.f.remoteEcho() }

// EchoChanged is signalled whenever the server starts or stops echoing.
func (s *Session) EchoChanged() <-chan struct{} { return s.f.echoCh }

// Login answers the server's login and password prompts with user and
// password (RFC 1738 makes them advisory; the command does this only when
// asked), copying what the server sends to out. It returns once the
// password is sent, or after the user name when there is no password.
func (s *Session) Login(ctx context.Context, user, password string, hasPassword bool, out io.Writer) error {
	stop := context.AfterFunc(ctx, func() { s.Conn.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	defer s.Conn.SetReadDeadline(time.Time{})
	if err := s.waitFor(out, "login:", "username:"); err != nil {
		return fmt.Errorf("waiting for the login prompt: %w", err)
	}
	// The session writes LF as CR LF.
	if _, err := s.Write([]byte(user + "\n")); err != nil {
		return err
	}
	if !hasPassword {
		return nil
	}
	if err := s.waitFor(out, "password:"); err != nil {
		return fmt.Errorf("waiting for the password prompt: %w", err)
	}
	_, err := s.Write([]byte(password + "\n"))
	return err
}

// waitFor copies the server's output to out until one of the prompts
// (compared without case) ends what was read.
func (s *Session) waitFor(out io.Writer, prompts ...string) error {
	var seen []byte
	for {
		b, err := s.Conn.ReadByte()
		if err != nil {
			return err
		}
		out.Write([]byte{b})
		seen = append(seen, b)
		if len(seen) > 256 {
			seen = seen[len(seen)-256:]
		}
		low := strings.ToLower(strings.TrimRight(string(seen), " "))
		for _, p := range prompts {
			if strings.HasSuffix(low, p) {
				return nil
			}
		}
	}
}

// Write sends p with IAC doubled and LF sent as CR LF. (The library
// counts the bytes it added, which io.Writer forbids: the count here is of
// p.)
func (s *Session) Write(p []byte) (int, error) {
	n, err := s.Conn.Write(p)
	if err == nil {
		return len(p), nil
	}
	return min(n, len(p)), err
}

// CloseWrite tells the server that no more input comes (a TCP half
// close), leaving its output to be read to the end.
func (s *Session) CloseWrite() error {
	if cw, ok := s.f.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// Close ends the session.
func (s *Session) Close() error { return s.Conn.Close() }

// Fetch connects and returns the session; the user and password of the
// URL are not sent (they are advisory).
func (f *Fetcher) Fetch(ctx context.Context, req *protocols.Request) (*protocols.Response, error) {
	t, err := req.URL.Telnet()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", protocols.ErrBadURL, err)
	}
	addr := net.JoinHostPort(t.Host, fmt.Sprint(t.Port))
	req.Tracef(protocols.TraceInfo, "connecting to "+addr)
	raw, err := req.Dialer()(ctx, "tcp", addr)
	if err != nil {
		return nil, protocols.NetError(err)
	}
	s, err := f.Open(raw, req)
	if err != nil {
		raw.Close()
		return nil, err
	}
	return &protocols.Response{Kind: protocols.KindSession, Size: -1, Name: t.Host, Session: s}, nil
}

// Open starts a telnet session on an open connection.
func (f *Fetcher) Open(raw net.Conn, req *protocols.Request) (*Session, error) {
	term := f.Term
	if term == "" {
		term = os.Getenv("TERM")
	}
	if term == "" || strings.ContainsAny(term, "\x00\r\n") || strings.IndexByte(term, iac) >= 0 {
		term = "network"
	}
	w, h := f.Width, f.Height
	if w <= 0 || h <= 0 {
		w, h = 80, 24
	}
	fl := &filter{Conn: raw, term: strings.ToUpper(term), width: w, height: h, echoCh: make(chan struct{}, 1), req: req}
	c, err := ztelnet.NewConn(fl)
	if err != nil {
		return nil, err
	}
	c.SetUnixWriteMode(true)
	return &Session{Conn: c, f: fl}, nil
}

// filter is the net.Conn the library reads: it takes out the commands the
// library cannot handle and answers the options it does not know.
type filter struct {
	net.Conn
	req  *protocols.Request
	term string

	wmu sync.Mutex // serialises writes: the library's and the filter's

	mu            sync.Mutex
	width, height int
	naws          bool // the server asked for the window size
	echo          bool // the server echoes
	echoCh        chan struct{}

	// Parser state, carried across reads.
	state   int
	cmd     byte
	sbBuf   []byte
	pending []byte // bytes for the library not yet returned
	rbuf    []byte // what the connection gave, before filtering
}

const (
	stData = iota
	stIAC
	stOpt
	stSB
	stSBIAC
)

// Write sends to the server. Answers to options (writes that start with
// IAC, from the library or the filter) are best effort: when they cannot
// be sent (the server has gone, or the input side was closed), reading
// what the server already sent must go on, so their failure is not
// reported.
func (f *filter) Write(p []byte) (int, error) {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	f.traceSent(p)
	n, err := f.Conn.Write(p)
	if err != nil && len(p) > 0 && p[0] == iac {
		return len(p), nil
	}
	return n, err
}

func (f *filter) traceSent(p []byte) {
	if f.req == nil || f.req.Trace == nil || len(p) < 2 || p[0] != iac {
		return
	}
	f.req.Tracef(protocols.TraceSend, describe(p))
}

var names = map[byte]string{will: "WILL", wont: "WONT", do: "DO", dont: "DONT", sb: "SB"}
var options = map[byte]string{optEcho: "ECHO", 3: "SUPPRESS-GO-AHEAD", optTType: "TERMINAL-TYPE", optNAWS: "NAWS"}

// describe renders a command for the trace: "WILL NAWS", "SB NAWS 0 80 0 24".
func describe(p []byte) string {
	if len(p) < 3 {
		return fmt.Sprintf("IAC %d", p[1])
	}
	o := options[p[2]]
	if o == "" {
		o = fmt.Sprint(p[2])
	}
	s := names[p[1]] + " " + o
	if p[1] == sb {
		for _, b := range p[3 : len(p)-2] {
			s += fmt.Sprintf(" %d", b)
		}
	}
	return s
}

func (f *filter) send(p ...byte) error {
	_, err := f.Write(p)
	return err
}

func (f *filter) setSize(w, h int) error {
	f.mu.Lock()
	f.width, f.height = w, h
	on := f.naws
	f.mu.Unlock()
	if !on {
		return nil
	}
	return f.sendSize(w, h)
}

func (f *filter) sendSize(w, h int) error {
	w, h = min(max(w, 0), 65535), min(max(h, 0), 65535)
	msg := []byte{iac, sb, optNAWS}
	for _, b := range []byte{byte(w >> 8), byte(w), byte(h >> 8), byte(h)} {
		msg = append(msg, b)
		if b == iac {
			msg = append(msg, iac)
		}
	}
	return f.send(append(msg, iac, se)...)
}

func (f *filter) remoteEcho() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.echo
}

func (f *filter) setEcho(on bool) {
	f.mu.Lock()
	changed := f.echo != on
	f.echo = on
	f.mu.Unlock()
	if changed {
		select {
		case f.echoCh <- struct{}{}:
		default:
		}
	}
}

// Read returns the stream for the library: data, IAC IAC, and the
// commands it handles itself (ECHO, SUPPRESS-GO-AHEAD, refusals, other
// subnegotiations).
func (f *filter) Read(p []byte) (int, error) {
	if f.rbuf == nil {
		f.rbuf = make([]byte, 4096)
	}
	for len(f.pending) == 0 {
		n, err := f.Conn.Read(f.rbuf)
		if n > 0 {
			f.feed(f.rbuf[:n])
		}
		if len(f.pending) > 0 {
			break
		}
		if err != nil {
			return 0, err
		}
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

// feed parses received bytes into f.pending, answering what it handles.
func (f *filter) feed(b []byte) {
	for _, c := range b {
		switch f.state {
		case stData:
			if c == iac {
				f.state = stIAC
				continue
			}
			f.pending = append(f.pending, c)
		case stIAC:
			switch c {
			case iac:
				f.pending = append(f.pending, iac, iac)
				f.state = stData
			case will, wont, do, dont:
				f.cmd, f.state = c, stOpt
			case sb:
				f.sbBuf, f.state = f.sbBuf[:0], stSB
			default:
				// NOP, DM, GA, BRK, IP, AO, AYT, EC, EL, SE out of place:
				// nothing for a client to do.
				f.trace(fmt.Sprintf("IAC %d (ignored)", c))
				f.state = stData
			}
		case stOpt:
			f.state = stData
			f.option(f.cmd, c)
		case stSB:
			if c == iac {
				f.state = stSBIAC
				continue
			}
			if len(f.sbBuf) < 4096 {
				f.sbBuf = append(f.sbBuf, c)
			}
		case stSBIAC:
			switch c {
			case se:
				f.state = stData
				f.subneg(f.sbBuf)
			case iac:
				if len(f.sbBuf) < 4096 { // a subnegotiation is kept to 4 KiB, as above
					f.sbBuf = append(f.sbBuf, iac)
				}
				f.state = stSB
			default:
				f.state = stSB // a malformed subnegotiation: keep looking for SE
			}
		}
	}
}

func (f *filter) trace(s string) {
	if f.req != nil {
		f.req.Tracef(protocols.TraceRecv, s)
	}
}

func (f *filter) option(cmd, opt byte) error {
	f.trace(describe([]byte{iac, cmd, opt}))
	switch {
	case opt == optTType && cmd == do:
		return f.send(iac, will, optTType)
	case opt == optNAWS && cmd == do:
		f.mu.Lock()
		already := f.naws
		f.naws = true
		w, h := f.width, f.height
		f.mu.Unlock()
		if !already {
			if err := f.send(iac, will, optNAWS); err != nil {
				return err
			}
		}
		return f.sendSize(w, h)
	case opt == optNAWS && cmd == dont:
		f.mu.Lock()
		f.naws = false
		f.mu.Unlock()
		return f.send(iac, wont, optNAWS)
	case opt == optTType && cmd == dont:
		return f.send(iac, wont, optTType)
	case opt == optEcho && cmd == do:
		// The server asks the client to echo: a terminal client does not.
		return f.send(iac, wont, optEcho)
	case opt == optEcho && cmd == dont:
		return nil // not echoing already
	case opt == optEcho && (cmd == will || cmd == wont):
		f.setEcho(cmd == will)
	}
	f.pending = append(f.pending, iac, cmd, opt)
	return nil
}

func (f *filter) subneg(b []byte) error {
	if len(b) >= 2 && b[0] == optTType && b[1] == ttypeSend {
		f.trace("SB TERMINAL-TYPE SEND")
		msg := append([]byte{iac, sb, optTType, ttypeIs}, f.term...)
		return f.send(append(msg, iac, se)...)
	}
	// Anything else goes to the library, which skips it.
	f.pending = append(f.pending, iac, sb)
	for _, c := range b {
		f.pending = append(f.pending, c)
		if c == iac {
			f.pending = append(f.pending, iac)
		}
	}
	f.pending = append(f.pending, iac, se)
	return nil
}

// The contracts it claims, checked when it compiles.
var _ protocols.Fetcher = (*Fetcher)(nil)
