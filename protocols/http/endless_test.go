package http_test

import (
	"bufio"
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
	"github.com/urlderef/deref/url"
)

// TestEndlessChunkedBodyPastLimit: a chunked body that never ends, read
// past MaxBytes, is closed by dropping the connection, not drained: the
// server can send little more than the limit and the socket buffers.
func TestEndlessChunkedBodyPastLimit(t *testing.T) {
	var sent atomic.Int64
	closed := make(chan struct{})
	ln, err := testserver.Listen(func(c net.Conn) {
		defer c.Close()
		bufio.NewReader(c).ReadString('\n')
		c.Write([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"))
		chunk := []byte("10000\r\n" + strings.Repeat("x", 0x10000) + "\r\n")
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			n, err := c.Write(chunk)
			sent.Add(int64(n))
			if err != nil {
				close(closed)
				return
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c := fetch.NewClient()
	c.NetrcFile = ""
	c.Proxy = func(*url.URL) (*url.URL, error) { return nil, nil }
	c.MaxBytes = 1 << 20
	resp, err := c.Get(context.Background(), "http://"+ln.Addr().String()+"/endless")
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	if !errors.Is(err, fetch.ErrTooLarge) {
		t.Errorf("read: %v", err)
	}
	resp.Body.Close()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatalf("the connection stays open after Close: %d bytes sent", sent.Load())
	}
	if n := sent.Load(); n > 16<<20 {
		t.Errorf("the server sent %d bytes for a 1 MiB limit", n)
	}
}
