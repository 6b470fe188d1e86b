// Package askd is a Gopher+ server of one form: its menu lists the form
// (an item flagged "?") and a document with two views; the form's +ASK
// block (a note, a question with a default answer, a choice) answers "!"
// and "!+ASK"; a filled form (the selector, TAB, "+", TAB, "1", then the
// answers as a data block, as RFC 1738 §3.4.9 and Gopher+ send them)
// gets a reply that names the answers. No Debian Gopher server speaks
// +ASK; this one follows the Gopher+ description of it.
package askd

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

// Server is the form's server on a loopback port.
type Server struct {
	ln      net.Listener
	mu      sync.Mutex
	answers []string
}

// Start listens on a free port of 127.0.0.1.
func Start() (*Server, error) {
	s := &Server{}
	return s, testserver.ListenInto(&s.ln, s.serve)
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops listening.
func (s *Server) Close() error { return s.ln.Close() }

// Answers are the lines of the last filled form's data block, its
// "+-1" line first.
func (s *Server) Answers() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.answers...)
}

func (s *Server) serve(c net.Conn) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Minute))
	br := bufio.NewReader(io.LimitReader(c, 64<<10))
	line, _ := br.ReadString('\n')
	host, port, _ := net.SplitHostPort(c.LocalAddr().String())
	switch strings.TrimRight(line, "\r\n") {
	case "", "/":
		fmt.Fprintf(c, "0Sign the book\t/form\t%s\t%s\t?\r\n0Doc\t/doc\t%s\t%s\t+\r\n.\r\n", host, port, host, port)
	case "/form\t!+ASK", "/form\t!":
		io.WriteString(c, "+-2\r\n+ASK:\r\n Note: Sign <b>here</b>\r\n Ask: Your name?\tnobody\r\n Choose: Colour?\tred\tgreen\r\n")
	case "/form\t+\t1":
		var answers []string
		for {
			l, err := br.ReadString('\n')
			l = strings.TrimRight(l, "\r\n")
			if err != nil || l == "." {
				break
			}
			answers = append(answers, l)
		}
		s.mu.Lock()
		s.answers = answers
		s.mu.Unlock()
		if len(answers) < 1 {
			io.WriteString(c, "--1\r\n1 nobody <nobody@example.org>\r\nno answers\r\n")
			return
		}
		io.WriteString(c, "+-2\r\nThanks, "+strings.Join(answers[1:], " and ")+"\r\n")
	case "/doc\t!":
		fmt.Fprintf(c, "+-2\r\n+INFO: 0Doc\t/doc\t%s\t%s\t+\r\n+VIEWS:\r\n text/plain: <1k>\r\n application/pdf: <20k>\r\n", host, port)
	case "/doc":
		io.WriteString(c, "the document\r\n.\r\n")
	default:
		io.WriteString(c, "3not here\t\terror.host\t1\r\n.\r\n")
	}
}
