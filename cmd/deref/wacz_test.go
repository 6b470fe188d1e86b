package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urlderef/deref/fetch/gateway"
	"github.com/urlderef/deref/internal/testserver/gopherd"
)

// deref wacz create packs a crawl's WARC file; validate finds nothing
// wrong with it, and says each problem of a damaged one (exit 7).
func TestWACZCommand(t *testing.T) {
	base := prosperoServer(t, nil)
	dir := t.TempDir()
	w := filepath.Join(dir, "p")
	if r := runDeref(t, "", "crawl", "--warc-file", w, base+"/AFTP/pub/docs"); r.code != 0 {
		t.Fatalf("crawl: %+v", r)
	}
	out := filepath.Join(dir, "p.wacz")
	if r := runDeref(t, "", "wacz", "create", "-o", out, w+".warc.gz"); r.code != 0 {
		t.Fatalf("create: %+v", r)
	}
	if r := runDeref(t, "", "wacz", "validate", out); r.code != 0 || r.stdout != "" {
		t.Fatalf("validate: %+v", r)
	}
	b, _ := os.ReadFile(out)
	os.WriteFile(out, append(b[:len(b)/2], b[len(b)/2+1:]...), 0o644) // a byte gone
	if r := runDeref(t, "", "wacz", "validate", out); r.code != 7 {
		t.Errorf("a damaged package: %+v", r)
	}
	if r := runDeref(t, "", "wacz", "create", "-o", filepath.Join(dir, "x.wacz"), filepath.Join(dir, "none.warc.gz")); r.code != 1 || !strings.Contains(r.stderr, "none.warc.gz") {
		t.Errorf("a missing file: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "x.wacz")); err == nil {
		t.Error("a package was left under its name")
	}
}

// site serves, on loopback, an HTML page with a title, a style sheet and
// an image.
func htmlSite(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, `<!doctype html><html><head><title>A Small Site</title><link rel="stylesheet" href="style.css"></head><body><h1>Hello</h1><img src="pic.png" alt="pic"></body></html>`)
	})
	mux.HandleFunc("/style.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		io.WriteString(w, "h1 { color: rgb(255, 0, 0); }")
	})
	mux.HandleFunc("/pic.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write(tinyPNG)
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s.URL + "/"
}

// listOf writes a URL list for -i in dir.
func listOf(t *testing.T, dir string, urls ...string) string {
	t.Helper()
	p := filepath.Join(dir, "urls.txt")
	if err := os.WriteFile(p, []byte(strings.Join(urls, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// tinyPNG is a 1x1 PNG.
var tinyPNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\x00\x05\x00\x01\xff\x89\x99=\x1d\x00\x00\x00\x00IEND\xaeB`\x82")

// --wacz on deref crawl, deref -O and deref mirror: the run's WARC files
// packed when it ends, valid, and served by deref serve --archive from
// the WACZ alone, its pages listed with their titles.
func TestWACZFlag(t *testing.T) {
	site := htmlSite(t)
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "docs"), 0o755)
	os.WriteFile(filepath.Join(root, "docs", "about.txt"), []byte("about this\n"), 0o644)
	gs := &gopherd.Server{Root: root}
	if err := gs.Start(); err != nil {
		t.Fatal(err)
	}
	defer gs.Close()
	hole := "gopher://" + gs.Addr() + "/1/"
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		args []string
		has  string
	}{
		{"crawl", []string{"crawl", "-q", "--wacz", filepath.Join(dir, "crawl.wacz"), site}, site + "style.css"},
		{"get", []string{"-s", "-O", "--output-dir", filepath.Join(dir, "got"), "--wacz", filepath.Join(dir, "get.wacz"), site + "style.css", "gopher://" + gs.Addr() + "/0/docs/about.txt"}, site + "style.css"},
		{"list", []string{"-s", "-i", listOf(t, dir, site+"pic.png", site+"style.css"), "-O", "--output-dir", filepath.Join(dir, "listed"), "--wacz", filepath.Join(dir, "list.wacz")}, site + "pic.png"},
		{"mirror", []string{"mirror", "-s", "--wacz", filepath.Join(dir, "mirror.wacz"), "--warc-file", filepath.Join(dir, "m"), hole, filepath.Join(dir, "tree")}, "gopher://" + gs.Addr() + "/0/docs/about.txt"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if r := runDeref(t, "", c.args...); r.code != 0 {
				t.Fatalf("%+v", r)
			}
			wacz := filepath.Join(dir, c.name+".wacz")
			if r := runDeref(t, "", "wacz", "validate", wacz); r.code != 0 || r.stdout != "" {
				t.Fatalf("validate: %+v", r)
			}
			colls, err := openCollections([]string{wacz}, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			a := colls[c.name]
			if a == nil {
				t.Fatalf("collections %v", colls)
			}
			defer a.Close()
			if len(a.Captures(c.has)) == 0 {
				t.Errorf("%s is not in the WACZ", c.has)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "crawl.warc.gz")); err != nil {
		t.Errorf("the crawl's WARC file is gone: %v", err)
	}
	// Served from the WACZ alone.
	os.Remove(filepath.Join(dir, "crawl.warc.gz"))
	colls, err := openCollections([]string{filepath.Join(dir, "crawl.wacz")}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer colls["crawl"].Close()
	srv := httptest.NewServer(gateway.Archive(colls, gateway.Options{}))
	defer srv.Close()
	get := func(path string) (int, string) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, page := get("/crawl/"); code != 200 || !strings.Contains(page, "A Small Site") || !strings.Contains(page, "<h2>Start here</h2>") {
		t.Errorf("the collection: %d\n%s", code, page)
	}
	if code, page := get("/crawl/" + site + "style.css"); code != 200 || !strings.Contains(page, "rgb(255, 0, 0)") {
		t.Errorf("the style sheet: %d\n%s", code, page)
	}
	if r := runDeref(t, "", "crawl", "--wacz", filepath.Join(dir, "x.zip"), site); r.code != 1 || !strings.Contains(r.stderr, "--wacz") {
		t.Errorf("a name not .wacz: %+v", r)
	}
}

// deref index --zipnum writes the ZipNum form beside a folder, which
// deref serve --archive then reads instead of the WARC files.
func TestIndexZipNumCommand(t *testing.T) {
	site := htmlSite(t)
	dir := t.TempDir()
	coll := filepath.Join(dir, "coll")
	os.Mkdir(coll, 0o755)
	if r := runDeref(t, "", "crawl", "-q", "--warc-file", filepath.Join(coll, "a"), site); r.code != 0 {
		t.Fatalf("%+v", r)
	}
	if r := runDeref(t, "", "index", "--zipnum", coll); r.code != 0 {
		t.Fatalf("%+v", r)
	}
	for _, f := range []string{"index.idx", "index.cdx.gz"} {
		if _, err := os.Stat(filepath.Join(coll, f)); err != nil {
			t.Error(err)
		}
	}
	idx, _ := os.ReadFile(filepath.Join(coll, "index.idx"))
	if !strings.HasPrefix(string(idx), `!meta 0 {"format": "cdxj-gzip-1.0", "filename": "index.cdx.gz"}`+"\n") {
		t.Errorf("index.idx:\n%s", idx)
	}
	colls, err := openCollections([]string{coll}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer colls["coll"].Close()
	if n := len(colls["coll"].Captures(site + "pic.png")); n != 1 {
		t.Errorf("%d captures of the image", n)
	}
	if r := runDeref(t, "", "index", "-o", "x", coll); r.code != 1 {
		t.Errorf("-o without --zipnum: %+v", r)
	}
}
