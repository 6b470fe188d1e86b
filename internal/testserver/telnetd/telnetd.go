// Package telnetd is a small telnet server (RFC 854) for the tour and the
// tests: it opens with the commands real servers send and that trip up
// simple clients (IAC NOP, IAC DM, DO TERMINAL-TYPE, DO NAWS, WILL ECHO,
// WILL SUPPRESS-GO-AHEAD, SB TERMINAL-TYPE SEND), runs a login dialogue,
// then a tiny shell: "echo WORDS", "term" (the terminal type the client
// sent), "size" (its window size), "exit". It echoes what is typed, as a
// server that said WILL ECHO must, but not passwords.
package telnetd

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/urlderef/deref/internal/testserver"
)

// Telnet codes.
const (
	IAC  = 255
	DONT = 254
	DO   = 253
	WONT = 252
	WILL = 251
	SB   = 250
	GA   = 249
	DM   = 242
	NOP  = 241
	SE   = 240

	OptEcho  = 1
	OptSGA   = 3
	OptTType = 24
	OptNAWS  = 31
)

// Opening is what the server sends first.
var Opening = []byte{
	IAC, NOP, IAC, DM,
	IAC, DO, OptTType, IAC, DO, OptNAWS, IAC, WILL, OptEcho, IAC, WILL, OptSGA,
	IAC, SB, OptTType, 1, IAC, SE,
	IAC, GA,
}

// Server is a telnet server on a loopback port.
type Server struct {
	User, Pass string

	mu      sync.Mutex
	heard   []string // the client's negotiation, as "WILL 24", "SB 31 0 80 0 24"
	term    string
	size    string
	ln      net.Listener
	changed chan struct{}
}

// Start listens on a free port of 127.0.0.1.
func (s *Server) Start() error {
	s.changed = make(chan struct{}, 64)
	return testserver.ListenInto(&s.ln, s.serve)
}

// Addr is host:port.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops listening.
func (s *Server) Close() error { return s.ln.Close() }

// Heard returns the client's negotiation so far, in order.
func (s *Server) Heard() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.heard...)
}

// WaitHeard waits until the client has sent want (or a second passes).
func (s *Server) WaitHeard(want string) bool {
	deadline := time.After(time.Second)
	for {
		for _, h := range s.Heard() {
			if h == want {
				return true
			}
		}
		select {
		case <-s.changed:
		case <-deadline:
			return false
		}
	}
}

type conn struct {
	s    *Server
	c    net.Conn
	r    *bufio.Reader
	echo bool
}

func (s *Server) serve(c net.Conn) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Minute))
	cn := &conn{s: s, c: c, r: bufio.NewReader(c), echo: true}
	c.Write(Opening)
	c.Write([]byte("deref's tour telnet server\r\n\r\nlogin: "))
	user, ok := cn.line()
	if !ok {
		return
	}
	c.Write([]byte("Password: "))
	cn.echo = false
	pass, ok := cn.line()
	cn.echo = true
	if !ok {
		return
	}
	if user != s.User || pass != s.Pass {
		c.Write([]byte("\r\nLogin incorrect\r\n"))
		return
	}
	c.Write([]byte("\r\nWelcome, " + user + ".\r\n$ "))
	for {
		l, ok := cn.line()
		if !ok {
			return
		}
		cmd, arg, _ := strings.Cut(strings.TrimSpace(l), " ")
		var out string
		switch cmd {
		case "":
		case "echo":
			out = arg
		case "term":
			s.mu.Lock()
			out = s.term
			s.mu.Unlock()
		case "size":
			s.mu.Lock()
			out = s.size
			s.mu.Unlock()
		case "exit":
			c.Write([]byte("logout\r\n"))
			// Half-close and read what the client still sends, so that a
			// late answer does not make the close a reset.
			if tc, ok := c.(*net.TCPConn); ok {
				tc.CloseWrite()
				c.SetReadDeadline(time.Now().Add(time.Second))
				io.Copy(io.Discard, c)
			}
			return
		default:
			out = cmd + ": not found"
		}
		if out != "" {
			out += "\r\n"
		}
		cn.write(out + "$ ")
	}
}

// write sends data with IAC doubled.
func (cn *conn) write(s string) {
	cn.c.Write([]byte(strings.ReplaceAll(s, "\xff", "\xff\xff")))
}

// line reads a line of input (ended by CR NUL, CR LF or LF), taking the
// client's commands out and echoing the rest when echo is on.
func (cn *conn) line() (string, bool) {
	var b []byte
	for {
		c, err := cn.r.ReadByte()
		if err != nil {
			return "", false
		}
		switch {
		case c == IAC:
			if next, err := cn.r.Peek(1); err == nil && next[0] == IAC {
				cn.r.ReadByte() // IAC IAC: a data byte 255
				break
			}
			if !cn.command() {
				return "", false
			}
			continue
		case c == '\r' || c == '\n':
			if c == '\r' {
				if next, err := cn.r.Peek(1); err == nil && (next[0] == 0 || next[0] == '\n') {
					cn.r.ReadByte()
				}
			}
			if cn.echo {
				cn.c.Write([]byte("\r\n"))
			}
			return string(b), true
		case c == 0x7f || c == 8:
			if len(b) > 0 {
				b = b[:len(b)-1]
				if cn.echo {
					cn.c.Write([]byte("\b \b"))
				}
			}
			continue
		}
		b = append(b, c)
		if cn.echo {
			cn.write(string([]byte{c}))
		}
	}
}

// command reads the rest of a command from the client and records it.
func (cn *conn) command() bool {
	s := cn.s
	c, err := cn.r.ReadByte()
	if err != nil {
		return false
	}
	var heard string
	switch c {
	case WILL, WONT, DO, DONT:
		o, err := cn.r.ReadByte()
		if err != nil {
			return false
		}
		heard = fmt.Sprintf("%s %d", map[byte]string{WILL: "WILL", WONT: "WONT", DO: "DO", DONT: "DONT"}[c], o)
	case SB:
		var data []byte
		for {
			b, err := cn.r.ReadByte()
			if err != nil {
				return false
			}
			if b == IAC {
				if b, err = cn.r.ReadByte(); err != nil {
					return false
				}
				if b == SE {
					break
				}
			}
			data = append(data, b)
		}
		heard = "SB"
		for _, d := range data {
			heard += fmt.Sprintf(" %d", d)
		}
		s.mu.Lock()
		switch {
		case len(data) > 1 && data[0] == OptTType && data[1] == 0:
			s.term = string(data[2:])
		case len(data) == 5 && data[0] == OptNAWS:
			s.size = fmt.Sprintf("%dx%d", int(data[1])<<8|int(data[2]), int(data[3])<<8|int(data[4]))
		}
		s.mu.Unlock()
	default:
		heard = fmt.Sprintf("IAC %d", c)
	}
	s.mu.Lock()
	s.heard = append(s.heard, heard)
	s.mu.Unlock()
	select {
	case s.changed <- struct{}{}:
	default:
	}
	return true
}
