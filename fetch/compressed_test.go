package fetch_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	nethttp "net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/url"
)

// gzipServer serves /text gzipped to a client that accepts gzip, /bomb
// (8 MiB of zeros in a few KiB) the same way, and /broken as a gzip
// coding that is not one; it records each request's Accept-Encoding.
func gzipServer(t *testing.T, text string) (*httptest.Server, func() []string) {
	var mu sync.Mutex
	var asked []string
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		mu.Lock()
		asked = append(asked, r.Header.Get("Accept-Encoding"))
		mu.Unlock()
		body := []byte(text)
		switch r.URL.Path {
		case "/bomb":
			body = make([]byte, 8<<20)
		case "/broken":
			w.Header().Set("Content-Encoding", "gzip")
			io.WriteString(w, "this is no gzip stream")
			return
		}
		if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") || r.Header.Get("Range") != "" {
			nethttp.ServeContent(w, r, "text", modTime, bytes.NewReader(body))
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		zw.Write(body)
		zw.Close()
	}))
	t.Cleanup(s.Close)
	return s, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), asked...)
	}
}

// TestCompressed: Client.Compressed asks for gzip and gives the object
// decoded (Size unknown); a resume asks for no coding; without it no
// coding is asked for; MaxBytes holds for the decoded object; a broken
// coding is a protocol error.
func TestCompressed(t *testing.T) {
	text := strings.Repeat("a compressible line of text\n", 500)
	s, asked := gzipServer(t, text)
	c := newClient()
	c.Compressed = true
	read := func(o fetch.FetchOptions, path string) (string, *fetch.Response, error) {
		resp, err := c.FetchWith(context.Background(), url.MustParse(s.URL+path), o)
		if err != nil {
			return "", nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), resp, err
	}
	got, resp, err := read(fetch.FetchOptions{}, "/text")
	if err != nil || got != text || resp.Size != -1 || asked()[0] != "gzip" {
		t.Errorf("compressed: %d bytes, %v, size %d, asked %q", len(got), err, resp.Size, asked())
	}
	got, _, err = read(fetch.FetchOptions{Offset: 100}, "/text")
	if err != nil || got != text[100:] || asked()[1] != "" {
		t.Errorf("resumed: %d bytes, %v, asked %q", len(got), err, asked())
	}
	c.MaxBytes = 1 << 20
	if _, _, err := read(fetch.FetchOptions{}, "/bomb"); !errors.Is(err, fetch.ErrTooLarge) {
		t.Errorf("8 MiB decoded past MaxBytes 1 MiB: %v", err)
	}
	if _, _, err := read(fetch.FetchOptions{}, "/broken"); !errors.Is(err, fetch.ErrProtocol) {
		t.Errorf("broken coding: %v", err)
	}
	c.Compressed = false
	if got, _, err := read(fetch.FetchOptions{}, "/text"); err != nil || got != text || asked()[len(asked())-1] != "" {
		t.Errorf("not compressed: %d bytes, %v, asked %q", len(got), err, asked())
	}
}
