package ftp_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/internal/testserver/ftpscript"
)

// TestListingStalls: a listing whose data arrives but whose final reply
// never does, and one whose data stalls, end at the time-out.
func TestListingStalls(t *testing.T) {
	for _, tt := range []struct {
		name string
		act  func(c *ftpscript.Conn)
	}{
		{"no final reply", func(c *ftpscript.Conn) {
			d, err := c.AcceptData()
			if err != nil {
				return
			}
			c.Reply("150 Here comes the directory listing.")
			d.Write([]byte("-rw-r--r--    1 0        0              1 Jan 02  2020 a.txt\r\n"))
			d.Close()
			time.Sleep(3 * time.Second)
		}},
		{"data stalls", func(c *ftpscript.Conn) {
			d, err := c.AcceptData()
			if err != nil {
				return
			}
			c.Reply("150 Here comes the directory listing.")
			d.Write([]byte("-rw-r--r--    1 0        0              1 Jan 02  2020 a.txt\r\n"))
			time.Sleep(3 * time.Second)
			d.Close()
		}},
	} {
		s := scriptServer(t, map[string]string{"a.txt": "a"}, func(c *ftpscript.Conn, verb, arg string) bool {
			if verb == "LIST" || verb == "MLSD" {
				tt.act(c)
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
