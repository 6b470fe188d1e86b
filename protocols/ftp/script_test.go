package ftp_test

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/internal/testserver/ftpscript"
	"github.com/urlderef/deref/url"
)

func scriptServer(t *testing.T, files map[string]string, h ftpscript.Handler) *ftpscript.Server {
	t.Helper()
	s := &ftpscript.Server{Files: files, Handle: h}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestLoginSequence checks the exact anonymous dialogue, and that a USER
// answered with 230 skips PASS.
func TestLoginSequence(t *testing.T) {
	s := scriptServer(t, map[string]string{"etc/motd": "hi\n"}, nil)
	c := newTraced()
	body, _ := c.get(t, "ftp://"+s.Addr()+"/%2Fetc/motd")
	if body != "hi\n" {
		t.Errorf("body %q", body)
	}
	want := []string{"USER anonymous", "PASS tester@example.org", "FEAT", "TYPE I", "PWD", "CWD /etc", "SIZE motd", "MDTM motd", "EPSV", "RETR motd"}
	if got := s.Commands(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("sent\n  %q\nwant\n  %q", got, want)
	}

	s = scriptServer(t, map[string]string{"x.bin": "x"}, func(c *ftpscript.Conn, verb, arg string) bool {
		if verb == "USER" {
			c.Reply("230 No password needed.")
			return true
		}
		return false
	})
	c.get(t, "ftp://joe@"+s.Addr()+"/x.bin")
	for _, cmd := range s.Commands() {
		if strings.HasPrefix(cmd, "PASS") {
			t.Errorf("PASS sent after USER was answered with 230: %q", s.Commands())
		}
	}
}

// TestCredentials checks where passwords come from: the prompt for a user
// the URL names without one, else the netrc file; and the anonymous
// password from $EMAIL.
func TestCredentials(t *testing.T) {
	s := scriptServer(t, map[string]string{"x": "x"}, nil)
	pass := func() string {
		for _, c := range s.Commands() {
			if p, ok := strings.CutPrefix(c, "PASS "); ok {
				return p
			}
		}
		return ""
	}
	c := newTraced()
	asked := ""
	c.Prompt = func(ctx context.Context, u *url.URL, user string) (string, error) {
		asked = user
		return "from-prompt", nil
	}
	c.get(t, "ftp://joe@"+s.Addr()+"/x")
	if asked != "joe" || pass() != "from-prompt" {
		t.Errorf("prompt: asked %q, sent PASS %q", asked, pass())
	}

	s = scriptServer(t, map[string]string{"x": "x"}, nil)
	c = newTraced()
	rc := filepath.Join(t.TempDir(), "netrc")
	os.WriteFile(rc, []byte("machine 127.0.0.1 login joe password from-netrc\n"), 0o600)
	c.NetrcFile = rc
	c.get(t, "ftp://joe@"+s.Addr()+"/x")
	if pass() != "from-netrc" {
		t.Errorf("netrc: sent PASS %q", pass())
	}

	s = scriptServer(t, map[string]string{"x": "x"}, nil)
	t.Setenv("EMAIL", "someone@example.net")
	c = newTraced()
	c.FTP.AnonymousPassword = ""
	c.get(t, "ftp://"+s.Addr()+"/x")
	if got := s.Commands(); len(got) < 2 || got[0] != "USER anonymous" || got[1] != "PASS someone@example.net" {
		t.Errorf("anonymous login: %q", got)
	}
}

// TestGreeting230 checks that a server greeting with 230 gets neither
// USER nor PASS.
func TestGreeting230(t *testing.T) {
	s := &ftpscript.Server{Files: map[string]string{"x.bin": "x"}, Greeting: "230 Logged in already."}
	s.Handle = func(c *ftpscript.Conn, verb, arg string) bool {
		if verb == "USER" || verb == "PASS" {
			c.Reply("503 Already logged in.")
			return true
		}
		return false
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := newTraced()
	body, _ := c.get(t, "ftp://"+s.Addr()+"/x.bin")
	if body != "x" {
		t.Errorf("body %q", body)
	}
	for _, cmd := range s.Commands() {
		if strings.HasPrefix(cmd, "USER") || strings.HasPrefix(cmd, "PASS") {
			t.Errorf("login sent after a 230 greeting: %q", s.Commands())
		}
	}
}

// TestEmptySegment documents what ftp://h//etc/motd does: RFC 1738 §3.2.2
// says "CWD " with a null argument, then "CWD etc". A server that refuses
// the empty CWD fails the URL; nothing else is fetched in its place.
func TestEmptySegment(t *testing.T) {
	s := scriptServer(t, map[string]string{"etc/motd": "relative\n"}, nil)
	c := newTraced()
	_, err := c.Get(context.Background(), "ftp://"+s.Addr()+"//etc/motd")
	if !errors.Is(err, fetch.ErrNotFound) {
		t.Errorf("refused empty CWD: %v", err)
	}
	got := s.Commands()
	if !contains(got, "CWD ") || contains(got, "RETR motd") {
		t.Errorf("commands %q", got)
	}
	// A server that accepts it goes on with the next segment.
	s = scriptServer(t, map[string]string{"etc/motd": "relative\n"}, func(c *ftpscript.Conn, verb, arg string) bool {
		if verb == "CWD" && arg == "" {
			c.Reply("250 Stayed where you are.")
			return true
		}
		return false
	})
	body, _ := c.get(t, "ftp://"+s.Addr()+"//etc/motd")
	if body != "relative\n" {
		t.Errorf("body %q", body)
	}
}

// transfer answers a data command: it accepts the data connection, sends
// reply150 and leaves the rest to act.
func transfer(c *ftpscript.Conn, reply150 string, act func(c *ftpscript.Conn, d net.Conn)) {
	d, err := c.AcceptData()
	if err != nil {
		c.Reply("425 no data connection")
		return
	}
	c.Reply("%s", reply150)
	act(c, d)
}

// logins counts the logins among commands.
func logins(commands []string) int {
	n := 0
	for _, cmd := range commands {
		if strings.HasPrefix(cmd, "USER") {
			n++
		}
	}
	return n
}

func TestFaults(t *testing.T) {
	big := strings.Repeat("0123456789", 1000)
	files := map[string]string{"f.bin": big}
	retr := func(act func(c *ftpscript.Conn, d net.Conn)) ftpscript.Handler {
		return func(c *ftpscript.Conn, verb, arg string) bool {
			if verb != "RETR" {
				return false
			}
			transfer(c, "150 Opening BINARY mode data connection.", act)
			return true
		}
	}
	for _, tt := range []struct {
		name string
		h    ftpscript.Handler
		want error
	}{
		{"dropped mid-transfer with 426", retr(func(c *ftpscript.Conn, d net.Conn) {
			d.Write([]byte(big[:100]))
			d.Close()
			c.Reply("426 Connection closed; transfer aborted.")
		}), fetch.ErrShortBody},
		{"short transfer reported as complete", retr(func(c *ftpscript.Conn, d net.Conn) {
			d.Write([]byte(big[:100]))
			d.Close()
			c.Reply("226 Transfer complete.")
		}), fetch.ErrShortBody},
		{"stalled", retr(func(c *ftpscript.Conn, d net.Conn) {
			d.Write([]byte(big[:100]))
			time.Sleep(3 * time.Second)
			d.Close()
		}), fetch.ErrTimeout},
		{"no final reply", retr(func(c *ftpscript.Conn, d net.Conn) {
			d.Write([]byte(big))
			d.Close()
			time.Sleep(3 * time.Second)
		}), fetch.ErrTimeout},
		{"421 on RETR", func(c *ftpscript.Conn, verb, arg string) bool {
			if verb == "RETR" {
				c.Reply("421 Service not available, closing control connection.")
				return true
			}
			return false
		}, fetch.ErrTemporary},
		{"530 on PASS", func(c *ftpscript.Conn, verb, arg string) bool {
			if verb == "PASS" {
				c.Reply("530 Login incorrect.")
				return true
			}
			return false
		}, fetch.ErrAuth},
	} {
		s := scriptServer(t, files, tt.h)
		c := newTraced()
		c.IdleTimeout = 500 * time.Millisecond
		start := time.Now()
		resp, err := c.Get(context.Background(), "ftp://"+s.Addr()+"/f.bin")
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			if cerr := resp.Body.Close(); err == nil {
				err = cerr
			}
		}
		if !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
		// The idle time-out ends a stall, not the library's 30 s wait for
		// the final reply.
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%s: ended after %v", tt.name, d)
		}
	}
}

// TestEPSVFallback checks PASV after a malformed EPSV reply and after an
// EPSV port that cannot be reached.
func TestEPSVFallback(t *testing.T) {
	files := map[string]string{"f.txt": "data\n"}
	for _, tt := range []struct {
		name string
		h    ftpscript.Handler
	}{
		{"malformed reply", func(c *ftpscript.Conn, verb, arg string) bool {
			if verb == "EPSV" {
				c.Reply("229 Entering Extended Passive Mode (garbage)")
				return true
			}
			return false
		}},
		{"refused reply", func(c *ftpscript.Conn, verb, arg string) bool {
			if verb == "EPSV" {
				c.Reply("500 EPSV not understood")
				return true
			}
			return false
		}},
		{"unreachable port", func(c *ftpscript.Conn, verb, arg string) bool {
			if verb == "EPSV" {
				ln, _ := net.Listen("tcp", "127.0.0.1:0")
				port := ln.Addr().(*net.TCPAddr).Port
				ln.Close()
				c.Reply("229 Entering Extended Passive Mode (|||%d|)", port)
				return true
			}
			return false
		}},
	} {
		s := scriptServer(t, files, tt.h)
		c := newTraced()
		body, _ := c.get(t, "ftp://"+s.Addr()+"/f.txt;type=i")
		if body != "data\n" || !contains(s.Commands(), "PASV") {
			t.Errorf("%s: %q, commands %q", tt.name, body, s.Commands())
		}
	}
}

// TestSizeFrom150 checks that SIZE is asked on its own until a 150 reply
// of the server has named the size (then with the transfer's EPSV and
// RETR), and that a later transfer shorter than its size is still an
// error although the server reports success.
func TestSizeFrom150(t *testing.T) {
	full := strings.Repeat("x", 50)
	s := scriptServer(t, map[string]string{"a.bin": full, "b.bin": full}, func(c *ftpscript.Conn, verb, arg string) bool {
		if verb != "RETR" || arg != "b.bin" {
			return false
		}
		transfer(c, "150 Opening BINARY mode data connection for b.bin (50 bytes).", func(c *ftpscript.Conn, d net.Conn) {
			d.Write([]byte(full[:20]))
			d.Close()
			c.Reply("226 Transfer complete.")
		})
		return true
	})
	c := newTraced()
	if body, _ := c.get(t, "ftp://"+s.Addr()+"/a.bin"); body != full {
		t.Fatalf("a.bin: %q", body)
	}
	resp, err := c.Get(context.Background(), "ftp://"+s.Addr()+"/b.bin")
	if err == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		if cerr := resp.Body.Close(); err == nil {
			err = cerr
		}
	}
	if !errors.Is(err, fetch.ErrShortBody) {
		t.Errorf("b.bin: %v, want a short body", err)
	}
	// The 150 replies name sizes: after the first file, SIZE costs no
	// round trip of its own, sent in one write with EPSV and RETR.
	cmds := s.Commands()
	if !contains(cmds, "SIZE a.bin") || !contains(cmds, "SIZE b.bin") || !contains(s.Early(), "EPSV") || !contains(s.Early(), "RETR b.bin") {
		t.Errorf("commands %q, sent ahead %q: want SIZE b.bin in one write with its EPSV and RETR", cmds, s.Early())
	}
}

// TestTypeKept checks that TYPE is sent only when the transfer type
// changes: two text files in a row switch to A once, a binary file after
// them back to I.
func TestTypeKept(t *testing.T) {
	s := scriptServer(t, map[string]string{"x.txt": "x\r\n", "y.txt": "y\r\n", "z.bin": "z"}, nil)
	c := newTraced()
	for _, n := range []string{"x.txt", "y.txt", "z.bin"} {
		c.get(t, "ftp://"+s.Addr()+"/"+n)
	}
	var types []string
	for _, cmd := range s.Commands() {
		if strings.HasPrefix(cmd, "TYPE") || strings.HasPrefix(cmd, "RETR") || strings.HasPrefix(cmd, "SIZE") {
			types = append(types, cmd)
		}
	}
	// TYPE I at login; SIZE for x.txt (the 150 replies name sizes, and a
	// text file's differs from its bytes on the wire), and for z.bin in
	// the write of its RETR, to end the transfer without waiting for 226.
	want := []string{"TYPE I", "SIZE x.txt", "TYPE A", "RETR x.txt", "RETR y.txt", "TYPE I", "SIZE z.bin", "RETR z.bin"}
	if strings.Join(types, "|") != strings.Join(want, "|") {
		t.Errorf("sent %q, want %q", types, want)
	}
}

// TestCancelAfterEnd: a context cancelled after the body was read to the
// end, before Close, leaves the control connection healthy in the pool:
// the next URL uses it without a new login.
func TestCancelAfterEnd(t *testing.T) {
	s := scriptServer(t, map[string]string{"a.bin": strings.Repeat("a", 1000), "b.bin": "b"}, nil)
	c := newTraced()
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := c.Get(ctx, "ftp://"+s.Addr()+"/a.bin")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := io.ReadAll(resp.Body); err != nil || len(b) != 1000 {
		t.Fatalf("a.bin: %d bytes, %v", len(b), err)
	}
	cancel()
	time.Sleep(50 * time.Millisecond) // the context's clean-up runs
	resp.Body.Close()
	if body, _ := c.get(t, "ftp://"+s.Addr()+"/b.bin"); body != "b" {
		t.Errorf("b.bin: %q", body)
	}
	if n := logins(s.Commands()); n != 1 {
		t.Errorf("%d logins, want 1: %q", n, s.Commands())
	}
}

// TestTrickleAfterFastStart checks that a large transfer whose server
// slows to a trickle is read as the bytes come: the raised receive
// low-water mark of a large transfer must not hold them back until the
// idle time-out ends the transfer.
func TestTrickleAfterFastStart(t *testing.T) {
	const size = 6 << 20
	content := strings.Repeat("deref ", size/6)
	s := scriptServer(t, map[string]string{"big.bin": content}, func(c *ftpscript.Conn, verb, arg string) bool {
		if verb != "RETR" {
			return false
		}
		transfer(c, "150 Opening BINARY mode data connection for big.bin (6291456 bytes).", func(c *ftpscript.Conn, d net.Conn) {
			defer d.Close()
			sent := 5 << 20
			if _, err := d.Write([]byte(content[:sent])); err != nil {
				return
			}
			for range 10 { // 10 KiB over a second: far below any mark
				time.Sleep(100 * time.Millisecond)
				if _, err := d.Write([]byte(content[sent : sent+1024])); err != nil {
					return
				}
				sent += 1024
			}
			d.Write([]byte(content[sent:]))
			d.Close()
			c.Reply("226 Transfer complete.")
		})
		return true
	})
	c := newTraced()
	c.IdleTimeout = 500 * time.Millisecond
	got, _ := c.get(t, "ftp://"+s.Addr()+"/big.bin") // read with Read, where the mark is raised
	if len(got) != size || got != content {
		t.Fatalf("got %d bytes, want the %d sent", len(got), size)
	}
}
