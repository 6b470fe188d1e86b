package nntp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/urlderef/deref/protocols"
)

// Session is one connection to a news server, for programs that read many
// articles in a row: Articles pipelines its commands (RFC 3977 §3.5)
// instead of waiting for each reply before the next command.
type Session struct {
	f *Fetcher
	c *conn
}

// Open connects to the server that req.URL names (a news:, snews:, nntp:
// or nntps: URL; only its server matters) with req's credentials.
func (f *Fetcher) Open(ctx context.Context, req *protocols.Request) (*Session, error) {
	c, err := f.dialFor(ctx, req)
	if err != nil {
		return nil, err
	}
	return &Session{f: f, c: c}, nil
}

// Group selects a group and returns the server's estimate of its article
// count and its low and high water marks.
func (s *Session) Group(ctx context.Context, name string) (count, low, high int64, err error) {
	if err := checkGroupArg(name); err != nil {
		return 0, 0, 0, err
	}
	return s.c.selectGroup(ctx, name)
}

func checkGroupArg(g string) error {
	if g == "" || strings.ContainsAny(g, " \t\r\n\x00") {
		return fmt.Errorf("%w: group %q", protocols.ErrBadURL, g)
	}
	return nil
}

// Articles sends ARTICLE for each spec, an article number in the selected
// group or a <message-id>, keeping up to window commands in flight (0
// means 32), and calls fn in order with each article (as the server
// holds it: CRLF line ends, only the dot-stuffing undone) or the error the server gave for it. fn must not keep
// r after it returns; what it leaves unread is skipped. An error from fn
// stops the run and leaves the session unusable.
func (s *Session) Articles(ctx context.Context, specs []string, window int, fn func(spec string, r io.Reader, err error) error) error {
	if window <= 0 {
		window = 32
	}
	for _, spec := range specs {
		if err := checkSpec(spec); err != nil {
			return err
		}
	}
	stop := context.AfterFunc(ctx, func() { s.c.raw.SetDeadline(aLongTimeAgo) })
	defer stop()
	sent := 0
	for i, spec := range specs {
		for sent < len(specs) && sent < i+window {
			if err := s.c.send("ARTICLE " + specs[sent]); err != nil {
				return s.fail(ctx, err)
			}
			sent++
		}
		code, text, err := s.c.readReply()
		if err != nil {
			return s.fail(ctx, err)
		}
		if code != 220 {
			if err := fn(spec, nil, &ReplyError{Cmd: "ARTICLE " + spec, Code: code, Text: text, kind: replyKind(code)}); err != nil {
				s.c.broken = true
				return err
			}
			continue
		}
		dot := &wireDotReader{r: s.c.br}
		if err := fn(spec, dot, nil); err != nil {
			s.c.broken = true
			return err
		}
		if _, err := io.Copy(io.Discard, dot); err != nil {
			return s.fail(ctx, err)
		}
	}
	return nil
}

func (s *Session) fail(ctx context.Context, err error) error {
	s.c.broken = true
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: the connection ended in an article", protocols.ErrShortBody)
	}
	return err
}

// checkSpec accepts an article number or a message-id in angle brackets.
func checkSpec(spec string) error {
	if _, err := strconv.ParseUint(spec, 10, 63); err == nil {
		return nil
	}
	if len(spec) > 2 && spec[0] == '<' && spec[len(spec)-1] == '>' && checkMessageID(spec[1:len(spec)-1]) == nil {
		return nil
	}
	return fmt.Errorf("%w: %q is neither an article number nor a <message-id>", protocols.ErrBadURL, spec)
}

// Close says QUIT and closes the connection.
func (s *Session) Close() error {
	if !s.c.broken {
		s.c.cmd("QUIT")
	}
	s.c.close()
	return nil
}
