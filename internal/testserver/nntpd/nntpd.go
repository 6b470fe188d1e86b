// Package nntpd is a small NNTP reader server (RFC 3977, AUTHINFO of RFC
// 4643, STARTTLS) for the tour and for tests that need exact replies or
// scripted faults; the interoperability suite uses INN. It logs every
// command it receives, so that tests can assert the exact sequence.
package nntpd

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"net"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/urlderef/deref/internal/testserver"
)

// Article is one article of a group.
type Article struct {
	Number    int64
	MessageID string   // with angle brackets
	Headers   []string // "Name: value" lines, in order
	Body      string   // lines separated by LF
}

func (a *Article) header(name string) string {
	for _, h := range a.Headers {
		if k, v, ok := strings.Cut(h, ":"); ok && strings.EqualFold(k, name) {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// Fault is a scripted misbehaviour of ARTICLE.
type Fault int

// Faults.
const (
	NoFault       Fault = iota
	CloseMidBody        // send half the article, then close
	EndlessHeader       // a header line that never ends
	SlowReply           // three seconds before the reply, as a stalled server
)

// Server is an NNTP server on a loopback port.
type Server struct {
	// User and Pass, when set, are required (480) before any reading
	// command.
	User, Pass string
	// ModeReader makes the server advertise MODE-READER and refuse
	// reading commands until MODE READER is sent.
	ModeReader bool
	// NoOver leaves OVER out (XOVER only).
	NoOver bool
	// TLS, when set, offers STARTTLS; with ImplicitTLS the listener speaks
	// TLS from the first byte (nntps).
	TLS         *tls.Config
	ImplicitTLS bool
	// Fault applies to every ARTICLE.
	Fault Fault
	// IdleTimeout, when set, is how long a connection may go without a
	// command: then the server says "400" (RFC 3977 §3.2.1.1: the
	// service is closing the connection) and closes it.
	IdleTimeout time.Duration

	mu     sync.Mutex
	groups map[string][]*Article
	desc   map[string]string
	log    []string
	conns  int
	ln     net.Listener
}

// New returns a server without groups.
func New() *Server {
	return &Server{groups: map[string][]*Article{}, desc: map[string]string{}}
}

// AddGroup creates a group with a description.
func (s *Server) AddGroup(name, description string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.groups[name]; !ok {
		s.groups[name] = nil
	}
	s.desc[name] = description
}

// Post adds an article to a group, numbered after the last one, and
// returns it.
func (s *Server) Post(group, msgid string, headers []string, body string) *Article {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := int64(1)
	if l := s.groups[group]; len(l) > 0 {
		n = l[len(l)-1].Number + 1
	}
	a := &Article{Number: n, MessageID: msgid, Headers: append([]string{"Message-ID: " + msgid, "Newsgroups: " + group}, headers...), Body: body}
	s.groups[group] = append(s.groups[group], a)
	return a
}

// Start listens on a free port of 127.0.0.1.
func (s *Server) Start() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	if s.ImplicitTLS {
		ln = tls.NewListener(ln, s.TLS)
	}
	s.ln = ln
	go testserver.Serve(ln, s.serve)
	return nil
}

// Addr is host:port.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops listening.
func (s *Server) Close() error { return s.ln.Close() }

// Log returns the commands received so far, and forgets them.
func (s *Server) Log() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.log
	s.log = nil
	return l
}

// Conns returns how many connections were accepted.
func (s *Server) Conns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns
}

type session struct {
	s      *Server
	c      net.Conn
	r      *bufio.Reader
	w      *bufio.Writer
	group  string
	cur    int64
	user   string
	authed bool
	reader bool
}

func (s *Server) serve(c net.Conn) {
	defer c.Close()
	s.mu.Lock()
	s.conns++
	s.mu.Unlock()
	ss := &session{s: s, c: c, r: bufio.NewReader(c), w: bufio.NewWriter(c), reader: !s.ModeReader}
	ss.reply("200 nntpd ready (posting prohibited)")
	for {
		idle := time.Minute
		if s.IdleTimeout > 0 {
			idle = s.IdleTimeout
		}
		c.SetDeadline(time.Now().Add(idle))
		ss.w.Flush()
		line, err := ss.r.ReadString('\n')
		if ne, ok := err.(net.Error); ok && ne.Timeout() && line == "" && s.IdleTimeout > 0 {
			c.SetDeadline(time.Now().Add(time.Second))
			ss.reply("400 Idle timeout, closing connection")
			ss.w.Flush()
			return
		}
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		s.mu.Lock()
		s.log = append(s.log, line)
		s.mu.Unlock()
		if !ss.command(line) {
			ss.w.Flush()
			return
		}
	}
}

func (ss *session) reply(format string, args ...any) {
	fmt.Fprintf(ss.w, format+"\r\n", args...)
}

// block writes lines, dot-stuffed, and the terminator.
func (ss *session) block(lines []string) {
	for _, l := range lines {
		if strings.HasPrefix(l, ".") {
			l = "." + l
		}
		ss.w.WriteString(l + "\r\n")
	}
	ss.w.WriteString(".\r\n")
}

func (ss *session) caps() []string {
	c := []string{"VERSION 2", "IMPLEMENTATION nntpd"}
	if ss.reader {
		c = append(c, "READER", "LIST ACTIVE NEWSGROUPS")
		if !ss.s.NoOver {
			c = append(c, "OVER")
		}
	} else {
		c = append(c, "MODE-READER")
	}
	if ss.s.User != "" && !ss.authed {
		c = append(c, "AUTHINFO USER")
	}
	if ss.s.TLS != nil && !ss.s.ImplicitTLS {
		if _, isTLS := ss.c.(*tls.Conn); !isTLS {
			c = append(c, "STARTTLS")
		}
	}
	return c
}

// command answers one command line; false ends the session.
func (ss *session) command(line string) bool {
	verb, arg, _ := strings.Cut(line, " ")
	verb = strings.ToUpper(verb)
	s := ss.s
	switch verb {
	case "QUIT":
		ss.reply("205 bye")
		return false
	case "CAPABILITIES":
		ss.reply("101 Capability list:")
		ss.block(ss.caps())
		return true
	case "MODE":
		ss.reader = true
		ss.reply("201 reader mode, posting prohibited")
		return true
	case "STARTTLS":
		if s.TLS == nil {
			ss.reply("502 no TLS here")
			return true
		}
		ss.reply("382 continue with TLS negotiation")
		ss.w.Flush()
		tc := tls.Server(ss.c, s.TLS)
		if err := tc.Handshake(); err != nil {
			return false
		}
		ss.c, ss.r, ss.w = tc, bufio.NewReader(tc), bufio.NewWriter(tc)
		return true
	case "AUTHINFO":
		sub, val, _ := strings.Cut(arg, " ")
		switch strings.ToUpper(sub) {
		case "USER":
			ss.user = val
			ss.reply("381 password required")
		case "PASS":
			if ss.user == s.User && val == s.Pass {
				ss.authed = true
				ss.reply("281 authentication accepted")
			} else {
				ss.reply("481 authentication failed")
			}
		default:
			ss.reply("501 unknown AUTHINFO")
		}
		return true
	}
	if !ss.reader {
		ss.reply("502 MODE READER first")
		return true
	}
	if s.User != "" && !ss.authed {
		ss.reply("480 authentication required")
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch verb {
	case "GROUP":
		arts, ok := s.groups[arg]
		if !ok {
			ss.reply("411 no such group %s", arg)
			return true
		}
		ss.group = arg
		if len(arts) == 0 {
			ss.cur = 0
			ss.reply("211 0 1 0 %s", arg)
			return true
		}
		ss.cur = arts[0].Number
		ss.reply("211 %d %d %d %s", len(arts), arts[0].Number, arts[len(arts)-1].Number, arg)
	case "ARTICLE":
		a := ss.find(arg)
		if a == nil {
			return true
		}
		if s.Fault == SlowReply {
			time.Sleep(3 * time.Second)
		}
		ss.reply("220 %d %s", a.Number, a.MessageID)
		ss.article(a)
		if s.Fault == CloseMidBody || s.Fault == EndlessHeader {
			return false
		}
	case "OVER", "XOVER":
		if verb == "OVER" && s.NoOver {
			ss.reply("500 unknown command")
			return true
		}
		if ss.group == "" {
			ss.reply("412 no group selected")
			return true
		}
		first, last, ok := parseRange(arg, ss.cur)
		if !ok {
			ss.reply("501 bad range")
			return true
		}
		var lines []string
		for _, a := range s.groups[ss.group] {
			if a.Number >= first && a.Number <= last {
				lines = append(lines, overLine(a))
			}
		}
		if len(lines) == 0 {
			ss.reply("423 no articles in that range")
			return true
		}
		ss.reply("224 overview information follows")
		ss.block(lines)
	case "LIST":
		kw, pat, _ := strings.Cut(arg, " ")
		kw = strings.ToUpper(kw)
		if kw == "" {
			kw = "ACTIVE"
		}
		var names []string
		for g := range s.groups {
			if pat == "" || wildmat(pat, g) {
				names = append(names, g)
			}
		}
		sort.Strings(names)
		var lines []string
		switch kw {
		case "ACTIVE":
			ss.reply("215 list of newsgroups follows")
			for _, g := range names {
				arts := s.groups[g]
				high, low := int64(0), int64(1)
				if len(arts) > 0 {
					low, high = arts[0].Number, arts[len(arts)-1].Number
				}
				lines = append(lines, fmt.Sprintf("%s %010d %010d y", g, high, low))
			}
		case "NEWSGROUPS":
			ss.reply("215 descriptions follow")
			for _, g := range names {
				lines = append(lines, g+"\t"+s.desc[g])
			}
		default:
			ss.reply("501 unknown LIST keyword")
			return true
		}
		ss.block(lines)
	default:
		ss.reply("500 unknown command")
	}
	return true
}

// find resolves an ARTICLE argument, replying when there is no article.
func (ss *session) find(arg string) *Article {
	s := ss.s
	if strings.HasPrefix(arg, "<") {
		for _, arts := range s.groups {
			for _, a := range arts {
				if a.MessageID == arg {
					return a
				}
			}
		}
		ss.reply("430 no such article")
		return nil
	}
	if ss.group == "" {
		ss.reply("412 no group selected")
		return nil
	}
	n := ss.cur
	if arg != "" {
		var err error
		if n, err = strconv.ParseInt(arg, 10, 64); err != nil {
			ss.reply("501 bad article number")
			return nil
		}
	}
	for _, a := range s.groups[ss.group] {
		if a.Number == n {
			ss.cur = n
			return a
		}
	}
	ss.reply("423 no article with that number")
	return nil
}

func (ss *session) article(a *Article) {
	switch ss.s.Fault {
	case CloseMidBody:
		text := strings.Join(a.Headers, "\r\n") + "\r\n\r\n" + a.Body
		ss.w.WriteString(text[:len(text)/2])
		return
	case EndlessHeader:
		ss.w.WriteString("X-Endless: ")
		chunk := strings.Repeat("x", 64<<10)
		for range 64 { // 4 MiB without a line end, or until the client leaves
			if _, err := ss.w.WriteString(chunk); err != nil {
				return
			}
		}
		return
	}
	for _, h := range a.Headers {
		ss.w.WriteString(h + "\r\n")
	}
	ss.w.WriteString("\r\n")
	// The body line by line, dot-stuffed, without copying it.
	body := strings.TrimSuffix(a.Body, "\n")
	for a.Body != "" {
		line, rest, more := strings.Cut(body, "\n")
		if strings.HasPrefix(line, ".") {
			ss.w.WriteByte('.')
		}
		ss.w.WriteString(line)
		ss.w.WriteString("\r\n")
		if !more {
			break
		}
		body = rest
	}
	ss.w.WriteString(".\r\n")
}

func overLine(a *Article) string {
	// :bytes counts the article as ARTICLE sends it, before dot-stuffing
	// (RFC 3977 §8.5.2): every line with its CRLF, the empty line too.
	size := len(a.Body) + strings.Count(a.Body, "\n") + 2
	for _, h := range a.Headers {
		size += len(h) + 2
	}
	clean := func(s string) string { return strings.NewReplacer("\t", " ", "\r", "", "\n", " ").Replace(s) }
	return fmt.Sprintf("%d\t%s\t%s\t%s\t%s\t%s\t%d\t%d", a.Number, clean(a.header("Subject")), clean(a.header("From")),
		clean(a.header("Date")), a.MessageID, clean(a.header("References")), size, strings.Count(a.Body, "\n"))
}

// parseRange reads "n", "n-" or "n-m"; empty means the current article.
func parseRange(arg string, cur int64) (int64, int64, bool) {
	if arg == "" {
		return cur, cur, cur > 0
	}
	a, b, isRange := strings.Cut(arg, "-")
	first, err := strconv.ParseInt(a, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	if !isRange {
		return first, first, true
	}
	if b == "" {
		return first, 1 << 62, true
	}
	last, err := strconv.ParseInt(b, 10, 64)
	return first, last, err == nil
}

// wildmat matches RFC 3977 §4 wildmats: comma-separated patterns with *
// and ?, the last matching one deciding, "!" negating.
func wildmat(pat, s string) bool {
	match := false
	for _, p := range strings.Split(pat, ",") {
		neg := strings.HasPrefix(p, "!")
		p = strings.TrimPrefix(p, "!")
		if ok, _ := path.Match(p, s); ok {
			match = !neg
		}
	}
	return match
}
