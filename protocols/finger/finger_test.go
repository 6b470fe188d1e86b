package finger_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/protocols/finger"
	"github.com/urlderef/deref/url"
)

// fingerd answers each query line with what reply makes of it, and
// records the lines, as a finger daemon under inetd would.
func fingerd(t *testing.T, reply func(q string) string) (addr string, queries chan string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	queries = make(chan string, 10)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				line, err := bufio.NewReader(c).ReadString('\n')
				if err != nil {
					return
				}
				queries <- line
				io.WriteString(c, reply(strings.TrimRight(line, "\r\n")))
			}()
		}
	}()
	return ln.Addr().String(), queries
}

func TestFinger(t *testing.T) {
	addr, queries := fingerd(t, func(q string) string {
		if q == "" {
			return "No one logged on.\r\n"
		}
		return "Login: " + q + "\r\nPlan:\r\nTo test.\r\n"
	})
	f := &finger.Fetcher{}
	for u, want := range map[string][2]string{
		"finger://" + addr + "/gus":       {"gus\r\n", "Login: gus\r\nPlan:\r\nTo test.\r\n"},
		"finger://" + addr + "//W%20gus":  {"/W gus\r\n", "Login: /W gus\r\nPlan:\r\nTo test.\r\n"},
		"finger://" + addr + "/":          {"\r\n", "No one logged on.\r\n"},
		"finger://" + addr:                {"\r\n", "No one logged on.\r\n"},
		"finger://" + addr + "/gus%20doe": {"gus doe\r\n", "Login: gus doe\r\nPlan:\r\nTo test.\r\n"},
	} {
		resp, err := f.Fetch(context.Background(), &protocols.Request{URL: url.MustParse(u)})
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if q := <-queries; err != nil || q != want[0] || string(b) != want[1] || resp.MediaType != "text/plain" {
			t.Errorf("%s: query %q, answer %q %v", u, q, b, err)
		}
	}
	for u, want := range map[string]error{
		"finger://" + addr + "/gus@elsewhere.example": protocols.ErrPermission, // forwarding
		"finger://" + addr + "/@elsewhere.example":    protocols.ErrPermission,
		"finger://" + addr + "/a%0D%0Ab":              protocols.ErrBadURL,
		"finger://u@" + addr + "/gus":                 protocols.ErrBadURL,
	} {
		if _, err := f.Fetch(context.Background(), &protocols.Request{URL: url.MustParse(u)}); !errors.Is(err, want) {
			t.Errorf("%s: %v", u, err)
		}
	}
	select {
	case q := <-queries:
		t.Errorf("a refused query was sent: %q", q)
	default:
	}
	// Allowed, the query goes as it is.
	fw := &finger.Fetcher{Forward: true}
	resp, err := fw.Fetch(context.Background(), &protocols.Request{URL: url.MustParse("finger://" + addr + "/gus@elsewhere.example")})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if q := <-queries; q != "gus@elsewhere.example\r\n" {
		t.Errorf("forwarded query %q", q)
	}
}

func TestSilentServer(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			time.Sleep(time.Second)
			c.Close()
		}
	}()
	resp, err := (&finger.Fetcher{ReplyTimeout: 100 * time.Millisecond}).Fetch(context.Background(), &protocols.Request{URL: url.MustParse("finger://" + ln.Addr().String() + "/gus")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !errors.Is(err, protocols.ErrTimeout) {
		t.Errorf("%v", err)
	}
}
