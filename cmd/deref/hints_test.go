package main

import (
	"bufio"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/urlderef/deref/internal/testserver"
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
