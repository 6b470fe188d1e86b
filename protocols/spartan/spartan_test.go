package spartan_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/protocols/spartan"
	"github.com/urlderef/deref/url"
)

// spartand reads "host path length" and the data, as the specification
// has a server do, and answers from reply.
func spartand(t *testing.T, reply func(host, path, data string) string) (string, chan string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	reqs := make(chan string, 10)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				line, err := br.ReadString('\n')
				if err != nil {
					return
				}
				f := strings.Fields(line)
				if len(f) != 3 || !strings.HasSuffix(line, "\r\n") {
					io.WriteString(c, "4 bad request\r\n")
					return
				}
				n, _ := strconv.Atoi(f[2])
				data := make([]byte, n)
				io.ReadFull(br, data)
				reqs <- line + string(data)
				io.WriteString(c, reply(f[0], f[1], string(data)))
			}()
		}
	}()
	return ln.Addr().String(), reqs
}

func TestSpartan(t *testing.T) {
	addr, reqs := spartand(t, func(host, path, data string) string {
		switch path {
		case "/":
			return "2 text/gemini\r\n# Home\n=> /file.txt A file\n=: /echo Say something\n"
		case "/file.txt":
			return "2 text/plain; charset=utf-8\r\nplain text\n"
		case "/echo":
			return "2 text/plain\r\nyou said: " + data
		case "/old":
			return "3 /file.txt\r\n"
		case "/oops":
			return "5 the server broke\r\n"
		case "/junk":
			return "20 what\r\n"
		}
		return "4 not found\r\n"
	})
	f := &spartan.Fetcher{}
	get := func(u string) (*protocols.Response, string, error) {
		resp, err := f.Fetch(context.Background(), &protocols.Request{URL: url.MustParse(u)})
		if err != nil {
			return nil, "", err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b), nil
	}
	base := "spartan://" + addr
	resp, _, err := get(base + "/")
	if err != nil || resp.Kind != protocols.KindDirectory || len(resp.Entries) != 2 || <-reqs != "127.0.0.1 / 0\r\n" {
		t.Fatalf("%v %+v", err, resp)
	}
	if e := resp.Entries[1]; e.Kind != protocols.KindSearchIndex || e.URL != base+"/echo" || e.Name != "Say something" {
		t.Errorf("the prompt line: %+v", e)
	}
	if _, body, err := get(base + "/echo?hello%20there"); err != nil || body != "you said: hello there" || <-reqs != "127.0.0.1 /echo 11\r\nhello there" {
		t.Errorf("%v %q", err, body)
	}
	if resp, _, err := get(base + "/old"); err != nil || resp.Kind != protocols.KindRedirect || resp.Location.String() != base+"/file.txt" {
		t.Errorf("%v %+v", err, resp)
	}
	for p, want := range map[string]error{"/nosuch": protocols.ErrNotFound, "/oops": protocols.ErrTemporary, "/junk": protocols.ErrProtocol} {
		if _, _, err := get(base + p); !errors.Is(err, want) {
			t.Errorf("%s: %v", p, err)
		}
	}
}
