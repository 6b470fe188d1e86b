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

// A Range of a Gopher binary, which the protocol cannot resume, is
// answered by the gateway skipping the first bytes itself: 206 with the
// Content-Range a browser needs to seek and resume.
func TestGopherRange(t *testing.T) {
	data := strings.Repeat("0123456789", 100) // 1,000 bytes
	addr := gopherServer(t, map[string]string{"/song.mp3": data})
	s := start(t, gateway.Options{AllowPrivate: true})
	u := s.URL + "/gopher/" + addr + "/9/song.mp3"
	for _, tt := range []struct {
		rng, crange, body string
		status            int
	}{
		{"bytes=100-", "bytes 100-999/1000", data[100:], 206},
		{"bytes=995-", "bytes 995-999/1000", data[995:], 206},
		{"bytes=100-109", "bytes 100-109/*", data[100:110], 206},
		{"bytes=990-1500", "bytes 990-999/1000", data[990:], 206},
		{"bytes=1000-", "bytes */1000", "", http.StatusRequestedRangeNotSatisfiable},
		{"bytes=5000-", "bytes */1000", "", http.StatusRequestedRangeNotSatisfiable},
	} {
		resp, body := get(t, u, "Range", tt.rng)
		if resp.StatusCode != tt.status || resp.Header.Get("Content-Range") != tt.crange || tt.status == 206 && body != tt.body {
			t.Errorf("%s: %d %q %d bytes", tt.rng, resp.StatusCode, resp.Header.Get("Content-Range"), len(body))
		}
	}
	if resp, body := get(t, u); resp.StatusCode != 200 || body != data || resp.Header.Get("Accept-Ranges") != "bytes" {
		t.Errorf("no range: %d %q, %d bytes", resp.StatusCode, resp.Header.Get("Accept-Ranges"), len(body))
	}
}

// --allow-file DIR lists its folders as FTP folders are listed, each
// name a link that stays inside DIR; "up" stops at DIR.
func TestFileFolders(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "pub", "sub dir"), 0o755)
	os.WriteFile(filepath.Join(dir, "pub", "note.txt"), []byte("a note\n"), 0o644)
	s := start(t, gateway.Options{AllowFile: dir})
	abs := filepath.ToSlash(dir)
	resp, _ := get(t, s.URL+"/file/"+abs+"/pub")
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusFound || loc != "/file/"+abs+"/pub/" {
		t.Errorf("no slash: %d %q", resp.StatusCode, loc)
	}
	resp, page := get(t, s.URL+"/file/"+abs+"/pub/")
	for _, want := range []string{
		`<a href="/file/` + abs + `/pub/note.txt">note.txt</a>`, `<td class="n">7</td>`,
		`<a href="/file/` + abs + `/pub/sub%20dir/">sub dir/</a>`, `<a href="/file/` + abs + `/">up</a>`,
	} {
		if resp.StatusCode != 200 || !strings.Contains(page, want) {
			t.Errorf("%d: no %s in\n%s", resp.StatusCode, want, page)
		}
	}
	if _, body := get(t, s.URL+"/file/"+abs+"/pub/note.txt"); body != "a note\n" {
		t.Errorf("the file's link: %q", body)
	}
	resp, page = get(t, s.URL+"/file/"+abs+"/")
	if resp.StatusCode != 200 || !strings.Contains(page, "pub/</a>") || strings.Contains(page, ">up</a>") {
		t.Errorf("the top: %d\n%s", resp.StatusCode, page)
	}
	if resp, _ := get(t, s.URL+"/file/"+filepath.ToSlash(filepath.Dir(dir))+"/"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("the folder above: %d", resp.StatusCode)
	}
}
