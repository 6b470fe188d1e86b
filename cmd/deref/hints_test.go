package main

import (
	"bufio"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/urlderef/deref/internal/testserver"
	"github.com/urlderef/deref/internal/testserver/ftpscript"
)

// gopherLines answers every Gopher request with a one-item menu and
// records each request line as it came.
func gopherLines(t *testing.T) (addr string, lines func() []string) {
	var mu sync.Mutex
	var got []string
	ln, err := testserver.Listen(func(c net.Conn) {
		defer c.Close()
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			return
		}
		mu.Lock()
		got = append(got, line)
		mu.Unlock()
		c.Write([]byte("0hit\t/hit\t127.0.0.1\t70\r\n.\r\n"))
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().String(), func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
}

// TestGopherSearchHint: the hint for a type 7 URL works when pasted: the
// URL with ?words sends the words after a TAB, as lynx does.
func TestGopherSearchHint(t *testing.T) {
	addr, lines := gopherLines(t)
	u := "gopher://" + addr + "/7/cgi-bin/search"
	r := runDeref(t, "", u)
	if r.code != 0 || !strings.Contains(r.stderr, u+"?words") {
		t.Fatalf("index: exit %d, %q", r.code, r.stderr)
	}
	if len(lines()) != 0 {
		t.Errorf("an index was asked before any words: %q", lines())
	}
	r = runDeref(t, "", u+"?two+words")
	if r.code != 0 || strings.Contains(r.stderr, "searchable index") || !strings.Contains(r.stdout, "hit") {
		t.Fatalf("search: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if got := lines(); len(got) != 1 || got[0] != "/cgi-bin/search\ttwo words\r\n" {
		t.Errorf("the server got %q", got)
	}
}

// TestFTPFolderHint: a folder named without its closing slash is still
// not found (exit 4), and the error says which URL was meant; a missing
// name gets no such hint. The server answers as vsftpd does: 550 to RETR
// of a folder, 550 to CWD of what is not one.
func TestFTPFolderHint(t *testing.T) {
	s := &ftpscript.Server{Files: map[string]string{"pub/a.txt": "a\r\n"}, Handle: func(c *ftpscript.Conn, verb, arg string) bool {
		if verb == "CWD" && arg != "pub" && arg != "/" {
			c.Reply("550 Failed to change directory.")
			return true
		}
		return false
	}}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	u := "ftp://" + s.Addr() + "/pub"
	r := runDeref(t, "", u)
	if r.code != 4 || !strings.Contains(r.stderr, "did you mean "+u+"/ ?") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("folder: exit %d, %q", r.code, r.stderr)
	}
	r = runDeref(t, "", u+"/nothing")
	if r.code != 4 || strings.Contains(r.stderr, "did you mean") {
		t.Errorf("missing: exit %d, %q", r.code, r.stderr)
	}
}

// TestFTPNoPassword: a user named with no password, no netrc entry and
// no terminal is refused by the server; the error says that no password
// was given and how to give one, and still exits 5.
func TestFTPNoPassword(t *testing.T) {
	s := &ftpscript.Server{Handle: func(c *ftpscript.Conn, verb, arg string) bool {
		if verb == "PASS" {
			c.Reply("530 Login incorrect.")
			return true
		}
		return false
	}}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r := runDeref(t, "", "ftp://alice@"+s.Addr()+"/")
	want := "no password was given for alice"
	if r.code != 5 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "ftp://alice:PASSWORD@"+s.Addr()+"/") {
		t.Errorf("exit %d, %q", r.code, r.stderr)
	}
	// With a password, a refusal says nothing of its absence.
	r = runDeref(t, "", "ftp://alice:wrong@"+s.Addr()+"/")
	if r.code != 5 || strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "wrong") {
		t.Errorf("with a password: exit %d, %q", r.code, r.stderr)
	}
}

// TestHTTPNoPassword: the same for HTTP: a 401 to a user named with no
// password says that none was given.
func TestHTTPNoPassword(t *testing.T) {
	s := server(t)
	host := s.Listener.Addr().String()
	r := runDeref(t, "", "http://alice@"+host+"/secret")
	if r.code != 5 || !strings.Contains(r.stderr, "no password was given for alice") || !strings.Contains(r.stderr, "http://alice:PASSWORD@"+host+"/") {
		t.Errorf("exit %d, %q", r.code, r.stderr)
	}
	r = runDeref(t, "", "http://alice:wrong@"+host+"/secret")
	if r.code != 5 || strings.Contains(r.stderr, "no password") {
		t.Errorf("with a password: exit %d, %q", r.code, r.stderr)
	}
}
