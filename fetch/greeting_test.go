package fetch_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/internal/testserver"
	"github.com/urlderef/deref/internal/testserver/ftpscript"
	"github.com/urlderef/deref/url"
)

// TestSilentGreeting: an FTP or NNTP server that accepts the connection
// and never greets is given the connect time-out, not the connect and
// idle time-outs together: the greeting is part of connecting.
func TestSilentGreeting(t *testing.T) {
	ln, err := testserver.Listen(func(c net.Conn) {
		time.Sleep(5 * time.Second)
		c.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, scheme := range []string{"ftp", "nntp"} {
		c := fetch.NewClient()
		c.NetrcFile = ""
		c.Proxy = func(*url.URL) (*url.URL, error) { return nil, nil }
		c.ConnectTimeout, c.IdleTimeout = 200*time.Millisecond, 10*time.Second
		u := scheme + "://" + ln.Addr().String() + "/x"
		if scheme == "nntp" {
			u += "/1"
		}
		start := time.Now()
		_, err := c.Get(context.Background(), u)
		if !errors.Is(err, fetch.ErrTimeout) || !strings.Contains(err.Error(), "no greeting") {
			t.Errorf("%s: %v", scheme, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: gave up after %v", scheme, d)
		}
	}
}

// TestSlowReplyAfterGreeting: once the server has greeted, a reply slower
// than the connect time-out is waited for (the idle time-out applies).
func TestSlowReplyAfterGreeting(t *testing.T) {
	s := &ftpscript.Server{Files: map[string]string{"f": "data"}, Handle: func(c *ftpscript.Conn, verb, arg string) bool {
		if verb == "PASS" {
			time.Sleep(600 * time.Millisecond)
		}
		return false
	}}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := fetch.NewClient()
	c.NetrcFile = ""
	c.Proxy = func(*url.URL) (*url.URL, error) { return nil, nil }
	c.ConnectTimeout, c.IdleTimeout = 200*time.Millisecond, 10*time.Second
	resp, err := c.Get(context.Background(), "ftp://"+s.Addr()+"/f")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}
