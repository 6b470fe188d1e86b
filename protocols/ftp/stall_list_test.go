package ftp_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/internal/testserver/ftpscript"
)

// TestListingStalls: a listing whose data arrives but whose final reply
// never does, and one whose data stalls, end at the time-out.
func TestListingStalls(t *testing.T) {
	const line = "-rw-r--r--    1 0        0              1 Jan 02  2020 a.txt\r\n"
	for _, tt := range []struct {
		name string
		act  func(c *ftpscript.Conn, d net.Conn)
	}{
		{"no final reply", func(c *ftpscript.Conn, d net.Conn) {
			d.Write([]byte(line))
			d.Close()
			time.Sleep(3 * time.Second)
		}},
		{"data stalls", func(c *ftpscript.Conn, d net.Conn) {
			d.Write([]byte(line))
			time.Sleep(3 * time.Second)
			d.Close()
		}},
	} {
		s := scriptServer(t, map[string]string{"a.txt": "a"}, func(c *ftpscript.Conn, verb, arg string) bool {
			if verb == "LIST" || verb == "MLSD" {
				transfer(c, "150 Here comes the directory listing.", tt.act)
				return true
			}
			return false
		})
		c := newTraced()
		c.IdleTimeout = 500 * time.Millisecond
		start := time.Now()
		resp, err := c.Get(context.Background(), "ftp://"+s.Addr()+"/")
		if err == nil {
			resp.Body.Close()
		}
		if !errors.Is(err, fetch.ErrTimeout) {
			t.Errorf("%s: %v, want a time-out", tt.name, err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%s: ended after %v", tt.name, d)
		}
	}
}

// TestPooledStall: on a control connection kept from an earlier URL, a
// server that stops answering ends the retrieval at the idle time-out, not
// at the connect time-out plus it.
func TestPooledStall(t *testing.T) {
	first := true
	s := scriptServer(t, map[string]string{"a.bin": "a", "b.bin": "b"}, func(c *ftpscript.Conn, verb, arg string) bool {
		if verb == "CWD" && !first {
			time.Sleep(3 * time.Second)
			return true
		}
		if verb == "RETR" {
			first = false
		}
		return false
	})
	c := newTraced()
	c.IdleTimeout = 500 * time.Millisecond
	if body, _ := c.get(t, "ftp://"+s.Addr()+"/a.bin"); body != "a" {
		t.Fatalf("a.bin: %q", body)
	}
	start := time.Now()
	_, err := c.Get(context.Background(), "ftp://"+s.Addr()+"/d/b.bin")
	if !errors.Is(err, fetch.ErrTimeout) {
		t.Errorf("stall on the pooled connection: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("ended after %v", d)
	}
}
