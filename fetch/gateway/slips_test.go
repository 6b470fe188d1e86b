package gateway_test

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch/gateway"
	"github.com/urlderef/deref/url"
)

// /?url= keeps a path's "//": a file: URL's empty host and FTP's empty
// segments survive the redirect, and the page it leads to serves the
// file.
func TestRedirectKeepsSlashes(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "note.txt"), []byte("a note\n"), 0o644)
	s := start(t, gateway.Options{AllowFile: dir})
	abs := filepath.ToSlash(dir)
	for _, tt := range []struct{ in, want string }{
		{"file://" + abs + "/note.txt", "/file/" + abs + "/note.txt"},
		{"file:" + abs + "/note.txt", "/file/" + abs + "/note.txt"},
		{"ftp://127.0.0.1/a//b", "/ftp/127.0.0.1/a//b"},
	} {
		resp, _ := get(t, s.URL+"/?url="+url.EscapeQuery(tt.in))
		if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusFound || loc != tt.want {
			t.Errorf("%s: %d %q, want %q", tt.in, resp.StatusCode, loc, tt.want)
		}
	}
	resp, _ := get(t, s.URL+"/?url="+url.EscapeQuery("file://"+abs+"/note.txt"))
	if resp, body := get(t, s.URL+resp.Header.Get("Location")); resp.StatusCode != 200 || body != "a note\n" {
		t.Errorf("the page of the redirect: %d %q", resp.StatusCode, body)
	}
}

// The access log hides passwords in every form a request names a URL:
// the page path, and ?url= encoded or not.
func TestAccessLogRedactsEveryForm(t *testing.T) {
	var mu sync.Mutex
	var buf bytes.Buffer
	w := writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return buf.Write(p) })
	for _, json := range []bool{false, true} {
		buf.Reset()
		s := start(t, gateway.Options{Log: w, LogJSON: json})
		get(t, s.URL+"/?url="+url.EscapeQuery("ftp://alice:s3cret@127.0.0.1/pub/"))
		get(t, s.URL+"/?url=ftp://bob:t0psecret@127.0.0.1/pub/")
		get(t, s.URL+"/ftp/carol:hush3d@127.0.0.1/pub/")
		time.Sleep(10 * time.Millisecond)
		mu.Lock()
		out := buf.String()
		mu.Unlock()
		if n := strings.Count(out, "\n"); n != 3 {
			t.Errorf("json %v: %d lines:\n%s", json, n, out)
		}
		for _, secret := range []string{"s3cret", "t0psecret", "hush3d"} {
			if strings.Contains(out, secret) {
				t.Errorf("json %v: the log shows %s:\n%s", json, secret, out)
			}
		}
		if !strings.Contains(out, "alice") || !strings.Contains(out, "bob") {
			t.Errorf("json %v: the users are gone too:\n%s", json, out)
		}
	}
}

// A search's result page carries its words: in the URL box and in the
// raw and download links, which answer the same results.
func TestSearchPageKeepsWords(t *testing.T) {
	addr := gopherServer(t, map[string]string{
		"/find": "0hit one\t/one\tHOST\tPORT\r\n.\r\n",
	})
	s := start(t, gateway.Options{AllowPrivate: true})
	resp, _ := get(t, s.URL+"/gopher/"+addr+"/7/find?q=two+words")
	loc := resp.Header.Get("Location")
	resp, page := get(t, s.URL+loc)
	if resp.StatusCode != 200 || !strings.Contains(page, `value="gopher://`+addr+`/7/find%09two%20words"`) {
		t.Errorf("URL box:\n%s", page)
	}
	for _, p := range []string{"raw=1", "download=1"} {
		want := `href="` + loc + "?" + p + `"`
		if !strings.Contains(page, want) {
			t.Errorf("no %s in:\n%s", want, page)
			continue
		}
		resp, body := get(t, s.URL+loc+"?"+p)
		if resp.StatusCode != 200 || !strings.Contains(body, "hit one") {
			t.Errorf("%s: %d %q", p, resp.StatusCode, body)
		}
	}
}

// A refused destination is one answer for every scheme: 403, the URL of
// the page asked for (a menu's type 1, not the type 0 it is fetched as),
// and why, with no protocol's word for a dial that failed.
func TestRefusalOneClass(t *testing.T) {
	s := start(t, gateway.Options{})
	for _, p := range []string{"/gopher/127.0.0.1:7070/1/subdir", "/ftp/127.0.0.1:2121/pub/", "/nntp/127.0.0.1:1119/alt.test"} {
		resp, body := get(t, s.URL+p)
		want := strings.Replace(strings.TrimPrefix(p, "/"), "/", "://", 1) + ": refused by the gateway: 127.0.0.1 is a private"
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, want) ||
			strings.Contains(body, "network failure") || strings.Contains(body, "protocol error") {
			t.Errorf("%s: %d, want %q in\n%s", p, resp.StatusCode, want, body)
		}
	}
}
