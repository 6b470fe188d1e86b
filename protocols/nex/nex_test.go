package nex_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/protocols/nex"
	"github.com/urlderef/deref/url"
)

// nexd serves files by the path a client sends, as the specification
// has a server do: the document, or a folder's "=>" lines, then close.
func nexd(t *testing.T, files map[string]string) (string, chan string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	paths := make(chan string, 10)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				line, _ := bufio.NewReader(c).ReadString('\n')
				p := strings.TrimRight(line, "\r\n")
				paths <- line
				if b, ok := files[p]; ok {
					io.WriteString(c, b)
				} else {
					io.WriteString(c, "not found\n")
				}
			}()
		}
	}()
	return ln.Addr().String(), paths
}

func TestNex(t *testing.T) {
	addr, paths := nexd(t, map[string]string{
		"":            "Welcome.\n=> about.txt About\n=> docs/\n=> nex://elsewhere.example/\n=> gemini://g.example/page.gmi\n",
		"about.txt":   "About this server.\n",
		"docs/":       "=> ../ up\n=> a.pdf\n",
		"docs/a.pdf":  "%PDF",
		"noextension": "plain",
	})
	f := &nex.Fetcher{}
	get := func(u string) (*protocols.Response, string) {
		t.Helper()
		resp, err := f.Fetch(context.Background(), &protocols.Request{URL: url.MustParse(u)})
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	base := "nex://" + addr + "/"
	resp, body := get(base)
	if p := <-paths; p != "\r\n" || resp.Kind != protocols.KindDirectory || !strings.HasPrefix(body, "Welcome.") {
		t.Fatalf("path %q, %+v", p, resp)
	}
	var got []string
	for _, e := range resp.Entries {
		got = append(got, fmt.Sprintf("%s %s %s", e.Kind, e.Name, e.URL))
	}
	want := "file About " + base + "about.txt|directory docs/ " + base + "docs/|directory nex://elsewhere.example/ nex://elsewhere.example/|file gemini://g.example/page.gmi gemini://g.example/page.gmi"
	if strings.Join(got, "|") != want {
		t.Errorf("entries:\n%s\nwant\n%s", strings.Join(got, "|"), want)
	}
	if resp, body := get(base + "about.txt"); <-paths != "about.txt\r\n" || resp.Kind != protocols.KindFile || resp.MediaType != "text/plain" || body != "About this server.\n" {
		t.Errorf("%+v %q", resp, body)
	}
	if resp, _ := get(base + "docs/a.pdf"); <-paths != "docs/a.pdf\r\n" || resp.MediaType != "application/pdf" || resp.Name != "a.pdf" {
		t.Errorf("%+v", resp)
	}
	if resp, _ := get(base + "noextension"); <-paths != "noextension\r\n" || resp.MediaType != "text/plain" {
		t.Errorf("%+v", resp)
	}
}
