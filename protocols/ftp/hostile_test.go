package ftp_test

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/internal/testserver"
	"github.com/urlderef/deref/internal/testserver/ftpscript"
)

// endless writes chunk to w until the peer goes away or ten seconds
// pass, counting what it wrote.
func endless(w io.Writer, chunk string, sent *atomic.Int64) {
	b := []byte(chunk)
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); {
		n, err := w.Write(b)
		sent.Add(int64(n))
		if err != nil {
			return
		}
	}
}

// TestEndlessReplies: a reply line without end, a multi-line reply without
// end, and a listing without end each end the retrieval with an error once
// past their bound, having read little more than it: memory stays bounded
// whatever the server sends.
func TestEndlessReplies(t *testing.T) {
	const lineLimit, listingLimit = 4 << 10, 1 << 20
	for _, tt := range []struct {
		name string
		url  string
		h    ftpscript.Handler
		raw  func(c net.Conn, sent *atomic.Int64) // instead of the script server
		want error
	}{
		{name: "endless greeting line", raw: func(c net.Conn, sent *atomic.Int64) { endless(c, "220 "+strings.Repeat("x", 1000), sent) }, want: fetch.ErrProtocol},
		{name: "endless multi-line reply", url: "/f", h: func(c *ftpscript.Conn, verb, arg string) bool {
			if verb != "FEAT" {
				return false
			}
			c.Reply("211-Features:")
			var sent atomic.Int64
			endless(c, " MDTM\r\n", &sent)
			return true
		}, want: fetch.ErrProtocol},
		{name: "endless listing", url: "/", h: func(c *ftpscript.Conn, verb, arg string) bool {
			if verb != "LIST" {
				return false
			}
			d, err := c.AcceptData()
			if err != nil {
				return true
			}
			c.Reply("150 Here it comes.")
			var sent atomic.Int64
			endless(d, "-rw-r--r--    1 0        0             383 Jan 02  2020 README.txt\r\n", &sent)
			d.Close()
			c.Reply("226 Done.")
			return true
		}, want: fetch.ErrTooLarge},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var sent atomic.Int64
			var addr string
			if tt.raw != nil {
				ln, err := testserver.Listen(func(c net.Conn) { defer c.Close(); tt.raw(c, &sent) })
				if err != nil {
					t.Fatal(err)
				}
				defer ln.Close()
				addr = ln.Addr().String()
			} else {
				s := scriptServer(t, map[string]string{"f": "x"}, tt.h)
				addr = s.Addr()
			}
			c := newTraced()
			c.Trace = nil
			c.MaxLineLength, c.MaxListing = lineLimit, listingLimit
			resp, err := c.Get(context.Background(), "ftp://"+addr+tt.url)
			if err == nil {
				resp.Body.Close()
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
			if n := sent.Load(); n > 8<<20 {
				t.Errorf("the server sent %d bytes before deref gave up", n)
			}
		})
	}
}
