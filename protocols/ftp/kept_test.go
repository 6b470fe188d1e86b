package ftp_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/internal/testserver/ftpscript"
	"github.com/urlderef/deref/protocols/ftp"
)

// TestKeptPastShutTimeout: the library's deadline for a transfer's final
// reply is not left on a connection kept in the pool. A Get after the
// connection has been idle for longer than that bound goes over the same
// connection, as if no time had passed (it failed at once with "CWD /:
// i/o timeout" when the deadline stayed).
func TestKeptPastShutTimeout(t *testing.T) {
	defer ftp.SetShutTimeout(200 * time.Millisecond)()
	addr, d := startServer(t, nil)
	c := newTraced()
	c.get(t, "ftp://"+addr+"/pub/nested/deep.txt")
	time.Sleep(400 * time.Millisecond)
	before := d.conns.Load()
	if body, _ := c.get(t, "ftp://"+addr+"/hello.txt"); body != "hello\nworld\n" {
		t.Errorf("after an idle time: %q", body)
	}
	if n := d.conns.Load() - before; n != 0 {
		t.Errorf("%d new connections: the kept one was not reused", n)
	}
}

// TestKeptClosedByServer: a kept connection the server closed while it
// was idle, with its "421 Timeout." as vsftpd sends it, is dropped and
// replaced: the next Get succeeds on a new connection, and the 421 is
// never taken as the reply to a command.
func TestKeptClosedByServer(t *testing.T) {
	s := &ftpscript.Server{Files: map[string]string{"a/x.txt": "x\n", "y.txt": "y\n"}, IdleTimeout: 200 * time.Millisecond}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c := newTraced()
	for i := range 3 {
		if body, _ := c.get(t, "ftp://"+s.Addr()+"/a/x.txt"); body != "x\n" {
			t.Errorf("round %d: %q", i, body)
		}
		time.Sleep(400 * time.Millisecond) // the server says 421 and hangs up
		if body, _ := c.get(t, "ftp://"+s.Addr()+"/y.txt"); body != "y\n" {
			t.Errorf("round %d, after the server closed the kept connection: %q", i, body)
		}
	}
	logins := 0
	for _, cmd := range s.Commands() {
		if strings.HasPrefix(cmd, "USER") {
			logins++
		}
	}
	// The first Get logs in, and so does each Get after a pause; a Get
	// right after another reuses its connection.
	if logins != 4 {
		t.Errorf("%d logins for 6 Gets, 3 of them after the server closed the connection, want 4", logins)
	}
	if strings.Contains(c.all.String(), "trying again on a new one") {
		t.Errorf("a closed connection was tried before it was dropped:\n%s", c.all.String())
	}
}

// TestSlowLoginRefusal: a server that delays its refusal of a password
// (pure-ftpd) past a short IdleTimeout is a refused login, not a time-out
// that a retry loop sends the password again for.
func TestSlowLoginRefusal(t *testing.T) {
	s := &ftpscript.Server{Files: map[string]string{"x": "x"}}
	s.Handle = func(c *ftpscript.Conn, verb, arg string) bool {
		if verb == "PASS" {
			time.Sleep(500 * time.Millisecond)
			c.Reply("530 Login authentication failed")
			return true
		}
		return false
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c := newTraced()
	c.IdleTimeout = 100 * time.Millisecond
	c.Retry = &fetch.Retry{Attempts: 3, Wait: time.Millisecond}
	_, err := c.Get(context.Background(), "ftp://joe:wrong@"+s.Addr()+"/x")
	if !errors.Is(err, fetch.ErrAuth) || errors.Is(err, fetch.ErrTimeout) || fetch.Temporary(err) {
		t.Errorf("a slow refusal: %v", err)
	}
	passes := 0
	for _, cmd := range s.Commands() {
		if strings.HasPrefix(cmd, "PASS") {
			passes++
		}
	}
	if passes != 1 {
		t.Errorf("the password was sent %d times", passes)
	}
}
