package nntp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/urlderef/deref/internal/testserver/nntpd"
	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/protocols/nntp"
	"github.com/urlderef/deref/url"
)

func groupServer(tb testing.TB, n, size int) *nntpd.Server {
	s := nntpd.New()
	s.AddGroup("bench.test", "articles for the benchmark")
	line := strings.Repeat("x", 63) + "\n"
	body := strings.Repeat(line, max(1, size/len(line)))
	for i := 1; i <= n; i++ {
		s.Post("bench.test", fmt.Sprintf("<b%d@test>", i), []string{"From: bench <b@test>", fmt.Sprintf("Subject: article %d", i)}, body)
	}
	if err := s.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// Articles are read in order over one connection with the commands
// pipelined; a missing article is reported and the run goes on.
func TestSessionArticles(t *testing.T) {
	s := groupServer(t, 50, 200)
	ctx := context.Background()
	sess, err := (&nntp.Fetcher{}).Open(ctx, &protocols.Request{URL: url.MustParse("nntp://" + s.Addr() + "/bench.test")})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if _, low, high, err := sess.Group(ctx, "bench.test"); err != nil || low != 1 || high != 50 {
		t.Fatalf("%d %d %v", low, high, err)
	}
	var specs []string
	for i := 1; i <= 50; i++ {
		specs = append(specs, fmt.Sprint(i))
	}
	specs = append(specs, "99", "<b7@test>")
	var got []string
	err = sess.Articles(ctx, specs, 8, func(spec string, r io.Reader, err error) error {
		if err != nil {
			got = append(got, spec+": "+err.Error())
			return nil
		}
		b, _ := io.ReadAll(r)
		subject := strings.SplitN(string(b), "Subject: ", 2)[1]
		got = append(got, spec+": "+strings.SplitN(subject, "\r\n", 2)[0])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 52 || got[0] != "1: article 1" || got[49] != "50: article 50" || !strings.HasPrefix(got[50], "99: ARTICLE 99: 423") || got[51] != "<b7@test>: article 7" {
		t.Errorf("%q", got)
	}
	if s.Conns() != 1 {
		t.Errorf("%d connections", s.Conns())
	}
	if err := sess.Articles(ctx, []string{"1", "x\r\nQUIT"}, 0, nil); !errors.Is(err, protocols.ErrBadURL) {
		t.Errorf("bad spec: %v", err)
	}
}

// TestKeptClosedByServer: a kept connection that the server closed while
// it was idle, saying "400" first, is dropped and replaced: the next
// URL is fetched over a new connection, and the 400 is never taken as a
// command's reply.
func TestKeptClosedByServer(t *testing.T) {
	s := newServer(t)
	s.IdleTimeout = 200 * time.Millisecond
	start(t, s)
	f := &nntp.Fetcher{Server: s.Addr()}
	defer f.CloseIdle()
	for i := range 2 {
		r, err := get(t, f, "news:a1@test", nil)
		if err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
		if b := read(t, r); !strings.Contains(b, "Hello.") {
			t.Errorf("round %d: %q", i, b)
		}
		time.Sleep(400 * time.Millisecond) // the server says 400 and hangs up
	}
	if n := s.Conns(); n != 2 {
		t.Errorf("%d connections for two URLs with the first closed by the server, want 2", n)
	}
}

// TestKeptLoginNotLent: a connection kept after a login with a password
// serves no request without that password: the same user with none (a
// gateway's visitor naming the user) gets a connection of its own, and
// its refusal.
func TestKeptLoginNotLent(t *testing.T) {
	s := newServer(t)
	s.User, s.Pass = "alice", "secret"
	start(t, s)
	f := &nntp.Fetcher{}
	defer f.CloseIdle()
	r, err := get(t, f, "nntp://alice:secret@"+s.Addr()+"/local.test/1", nil)
	if err != nil {
		t.Fatal(err)
	}
	read(t, r)
	if _, err := get(t, f, "nntp://alice@"+s.Addr()+"/local.test/1", nil); !errors.Is(err, protocols.ErrAuth) {
		t.Errorf("the same user without the password, after a login with it: %v", err)
	}
}
