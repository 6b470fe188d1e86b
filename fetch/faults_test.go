package fetch_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/internal/testserver"
)

// scripted serves every connection with fn, a fault script.
func scripted(t *testing.T, fn func(c net.Conn)) string {
	t.Helper()
	ln, err := testserver.Listen(func(c net.Conn) {
		defer c.Close()
		br := bufio.NewReader(c)
		for { // read the request head
			line, err := br.ReadString('\n')
			if err != nil || line == "\r\n" {
				break
			}
		}
		fn(c)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return "http://" + ln.Addr().String()
}

func TestFaultScripts(t *testing.T) {
	silent := scripted(t, func(c net.Conn) { time.Sleep(5 * time.Second) })
	garbage := scripted(t, func(c net.Conn) { io.WriteString(c, "SSH-2.0-OpenSSH_9.2\r\n\r\n") })
	hugeHead := scripted(t, func(c net.Conn) {
		io.WriteString(c, "HTTP/1.1 200 OK\r\n")
		for range 40000 {
			if _, err := io.WriteString(c, "X-Filler: "+strings.Repeat("a", 40)+"\r\n"); err != nil {
				return
			}
		}
	})
	closed := scripted(t, func(c net.Conn) {})
	c := newClient()
	c.ConnectTimeout = 200 * time.Millisecond
	c.IdleTimeout = 300 * time.Millisecond
	for _, tt := range []struct {
		name, url string
		want      error
		code      int
	}{
		{"no reply", silent + "/x", fetch.ErrTimeout, 6},
		{"not HTTP", garbage + "/x", fetch.ErrProtocol, 7},
		{"endless header", hugeHead + "/x", fetch.ErrProtocol, 7},
		{"closed at once", closed + "/x", fetch.ErrNetwork, 6},
	} {
		start := time.Now()
		_, err := c.Get(context.Background(), tt.url)
		if !errors.Is(err, tt.want) || fetch.ExitCode(err) != tt.code {
			t.Errorf("%s: %v (exit %d), want %v (exit %d)", tt.name, err, fetch.ExitCode(err), tt.want, tt.code)
		}
		if tt.name == "no reply" && time.Since(start) > 4*time.Second {
			t.Errorf("no reply: the time-out did not end the wait (%v)", time.Since(start))
		}
	}
}
