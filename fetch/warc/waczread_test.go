package warc

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// writeSite writes a WARC file of a small site: an HTML page with a
// title, its style sheet and image, a Gopher menu, an FTP folder and a
// text file, and n more pages.
func writeSite(t testing.TB, name string, n int) string {
	t.Helper()
	w, err := Create(name, Options{Software: "deref/test"})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	http := func(u, ctype, body string) Record {
		head := "HTTP/1.1 200 OK\r\nContent-Type: " + ctype + "\r\nContent-Length: " + fmt.Sprint(len(body)) + "\r\n\r\n"
		return Record{Type: "response", URI: u, MediaType: "application/http;msgtype=response", Protocol: "http/1.1", Body: strings.NewReader(head + body),
			PayloadOffset: int64(len(head)), PayloadType: ctype, Status: "200"}
	}
	recs := []Record{
		http("http://127.0.0.1:8080/", "text/html", "<html><head><title>The  Home\nPage</title><link rel=stylesheet href=s.css></head><body><img src=i.png></body></html>"),
		http("http://127.0.0.1:8080/s.css", "text/css", "body{color:red}"),
		http("http://127.0.0.1:8080/i.png", "image/png", "\x89PNG fake"),
		{Type: "resource", URI: "gopher://127.0.0.1:7070/1/", MediaType: "application/gopher-menu", Protocol: "gopher", Body: strings.NewReader("iA menu\tfake\t(NULL)\t0\r\n.\r\n"), Status: "-"},
		{Type: "resource", URI: "ftp://127.0.0.1:2121/pub/", MediaType: "text/plain", Protocol: "ftp", Body: strings.NewReader("type=file;size=6;modify=20260101000000; a.txt\r\n"), Status: "-"},
		{Type: "resource", URI: "ftp://127.0.0.1:2121/pub/a.txt", MediaType: "text/plain", Protocol: "ftp", Body: strings.NewReader("alpha\n"), Status: "-"},
	}
	for i := range n {
		recs = append(recs, Record{Type: "resource", URI: fmt.Sprintf("gopher://127.0.0.1:7070/0/f%05d", i), MediaType: "text/plain", Protocol: "gopher", Body: strings.NewReader(fmt.Sprintf("file %d\n", i)), Status: "-"})
	}
	for _, r := range recs {
		r.Date = at
		if _, err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return name + ".warc.gz"
}

func payloadOf(t *testing.T, a *Archive, u string) string {
	t.Helper()
	c, ok := a.Nearest(u, time.Now())
	if !ok {
		t.Fatalf("%s: no capture", u)
	}
	p, err := a.Open(c)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	b, err := io.ReadAll(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A WACZ deref wrote, read back in place: its captures found through its
// index (CDXJ, and ZipNum past ZipNumLines captures), payloads read from
// the WARC file inside the ZIP, its pages listed with their titles.
func TestWACZRead(t *testing.T) {
	for _, n := range []int{0, 2 * ZipNumLines} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			dir := t.TempDir()
			warcFile := writeSite(t, filepath.Join(dir, "site"), n)
			out := filepath.Join(dir, "site.wacz")
			if err := CreateWACZ(out, []string{warcFile}, WACZOptions{Software: "deref/test"}); err != nil {
				t.Fatal(err)
			}
			if p, err := ValidateWACZ(out); err != nil || len(p) > 0 {
				t.Fatalf("%v %q", err, p)
			}
			zr, err := zip.OpenReader(out)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, f := range zr.File {
				names = append(names, f.Name)
				if f.Method != zip.Store {
					t.Errorf("%s is compressed", f.Name)
				}
			}
			zr.Close()
			want := "indexes/index.cdxj"
			if n > 0 {
				want = "indexes/index.cdx.gz indexes/index.idx"
			}
			if !strings.Contains(strings.Join(names, " "), want) {
				t.Errorf("files %v, want %s", names, want)
			}
			os.Remove(warcFile) // read from the WACZ alone
			a, err := Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			if got := payloadOf(t, a, "http://127.0.0.1:8080/s.css"); got != "body{color:red}" {
				t.Errorf("style sheet: %q", got)
			}
			if got := payloadOf(t, a, "ftp://127.0.0.1:2121/pub/a.txt"); got != "alpha\n" {
				t.Errorf("ftp file: %q", got)
			}
			if n > 0 {
				if got := payloadOf(t, a, "gopher://127.0.0.1:7070/0/f04321"); got != "file 4321\n" {
					t.Errorf("file 4321: %q", got)
				}
				if got := a.Captures("gopher://127.0.0.1:7070/0/f05999"); len(got) != 1 {
					t.Errorf("the last file: %v", got)
				}
			}
			if c := a.Captures("http://127.0.0.1:8080/nothing"); len(c) != 0 {
				t.Errorf("a URL not archived: %v", c)
			}
			count := 0
			a.URLs(func(string, int) bool { count++; return true })
			if count != 6+n {
				t.Errorf("%d URLs, want %d", count, 6+n)
			}
			var pages []string
			a.Pages(func(p Page) bool { pages = append(pages, p.URL+" "+p.Title); return true })
			if strings.Join(pages, "|") != "http://127.0.0.1:8080/ The Home Page|gopher://127.0.0.1:7070/1/ |ftp://127.0.0.1:2121/pub/ " {
				t.Errorf("pages: %q", pages)
			}
		})
	}
}

// rezip writes a ZIP of the entries given, in order, each stored or
// deflated as said.
func rezip(t *testing.T, out string, entries []zipEntry) {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, e := range entries {
		m := zip.Store
		if e.deflate {
			m = zip.Deflate
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: e.name, Method: m})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(e.data)
	}
	zw.Close()
	if err := os.WriteFile(out, b.Bytes(), 0o666); err != nil {
		t.Fatal(err)
	}
}

type zipEntry struct {
	name    string
	data    []byte
	deflate bool
}

func unzip(t *testing.T, file string) []zipEntry {
	t.Helper()
	zr, err := zip.OpenReader(file)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var out []zipEntry
	for _, f := range zr.File {
		rc, _ := f.Open()
		b, _ := io.ReadAll(rc)
		rc.Close()
		out = append(out, zipEntry{name: f.Name, data: b})
	}
	return out
}

// WACZ files of other layouts: the index deflated in the ZIP, its JSON's
// numbers as numbers, no index at all; and a js-wacz package whose WARC
// hash is that of its bytes twice, named as such by validate.
func TestWACZOtherLayouts(t *testing.T) {
	dir := t.TempDir()
	warcFile := writeSite(t, filepath.Join(dir, "site"), 0)
	ours := filepath.Join(dir, "site.wacz")
	if err := CreateWACZ(ours, []string{warcFile}, WACZOptions{}); err != nil {
		t.Fatal(err)
	}
	entries := unzip(t, ours)
	t.Run("deflated index, numbers", func(t *testing.T) {
		var es []zipEntry
		for _, e := range entries {
			if e.name == "indexes/index.cdxj" {
				e.data = regexp.MustCompile(`"(offset|length)":"(\d+)"`).ReplaceAll(e.data, []byte(`"$1":$2`))
				if !regexp.MustCompile(`"offset":[0-9]`).Match(e.data) {
					t.Fatalf("not rewritten: %s", e.data)
				}
				e.deflate = true
			}
			es = append(es, e)
		}
		out := filepath.Join(dir, "deflated.wacz")
		rezip(t, out, es)
		a, err := Open(out)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		if got := payloadOf(t, a, "ftp://127.0.0.1:2121/pub/a.txt"); got != "alpha\n" {
			t.Errorf("%q", got)
		}
	})
	t.Run("no index", func(t *testing.T) {
		var es []zipEntry
		for _, e := range entries {
			if !strings.HasPrefix(e.name, "indexes/") {
				es = append(es, e)
			}
		}
		out := filepath.Join(dir, "noindex.wacz")
		rezip(t, out, es)
		a, err := Open(out)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		if got := payloadOf(t, a, "http://127.0.0.1:8080/s.css"); got != "body{color:red}" {
			t.Errorf("%q", got)
		}
		p, _ := ValidateWACZ(out)
		if !strings.Contains(strings.Join(p, "\n"), "no index under indexes/") {
			t.Errorf("%q", p)
		}
	})
	t.Run("js-wacz 0.1.6 hash", func(t *testing.T) {
		var es []zipEntry
		var manifest []byte
		for _, e := range entries {
			if e.name == "datapackage.json" {
				var dp datapackage
				json.Unmarshal(e.data, &dp)
				for i, r := range dp.Resources {
					if strings.HasPrefix(r.Path, "archive/") {
						for _, w := range entries {
							if w.name == r.Path {
								sum := sha256.Sum256(append(append([]byte{}, w.data...), w.data...)) // under 64 KiB: the file twice
								dp.Resources[i].Hash = "sha256:" + hex.EncodeToString(sum[:])
							}
						}
					}
				}
				e.data, _ = json.Marshal(dp)
				manifest = e.data
			}
			if e.name == "datapackage-digest.json" {
				sum := sha256.Sum256(manifest)
				e.data = []byte(`{"path":"datapackage.json","hash":"sha256:` + hex.EncodeToString(sum[:]) + `"}`)
			}
			es = append(es, e)
		}
		out := filepath.Join(dir, "js.wacz")
		rezip(t, out, es)
		p, err := ValidateWACZ(out)
		if err != nil || len(p) != 1 || !strings.Contains(p[0], "archive/site.warc.gz: datapackage.json gives the sha256 of its bytes read twice") || !strings.Contains(p[0], "js-wacz#127") {
			t.Errorf("%v %q", err, p)
		}
	})
	t.Run("a block that lies", func(t *testing.T) {
		big := writeSite(t, filepath.Join(dir, "big"), ZipNumLines)
		out := filepath.Join(dir, "big.wacz")
		if err := CreateWACZ(out, []string{big}, WACZOptions{}); err != nil {
			t.Fatal(err)
		}
		var es []zipEntry
		for _, e := range unzip(t, out) {
			if e.name == "indexes/index.idx" {
				lines := strings.Split(string(e.data), "\n")
				lines[2] = strings.Replace(lines[2], "gopher://", "gopher://x", 1) // the second block's key
				e.data = []byte(strings.Join(lines, "\n"))
			}
			es = append(es, e)
		}
		rezip(t, out, es)
		p, _ := ValidateWACZ(out)
		if !strings.Contains(strings.Join(p, "\n"), "indexes/index.idx line 3: its block's first line is keyed") {
			t.Errorf("%q", p)
		}
	})
}

// deref index --zipnum's form beside a collection: a fifth of the flat
// index or less, and the same captures found through it.
func TestZipNumBeside(t *testing.T) {
	dir := t.TempDir()
	coll := filepath.Join(dir, "coll")
	os.Mkdir(coll, 0o777)
	warcFile := writeSite(t, filepath.Join(coll, "a"), 2*ZipNumLines+17)
	if err := WriteZipNum(filepath.Join(coll, "index"), coll); err != nil {
		t.Fatal(err)
	}
	var flat bytes.Buffer
	if err := WriteIndex(&flat, warcFile); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(coll, "index.cdx.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Size()*5 > int64(flat.Len()) {
		t.Errorf("ZipNum %d bytes, flat CDXJ %d", st.Size(), flat.Len())
	}
	a, err := Open(coll)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if len(a.temps) != 0 {
		t.Error("the folder was indexed again beside its ZipNum index")
	}
	if _, ok := a.indexes[0].(*zipnumIndex); !ok || len(a.indexes) != 1 {
		t.Errorf("indexes: %T", a.indexes)
	}
	for _, u := range []string{"gopher://127.0.0.1:7070/0/f00000", "gopher://127.0.0.1:7070/0/f02999", "gopher://127.0.0.1:7070/0/f03000", "gopher://127.0.0.1:7070/0/f06016", "http://127.0.0.1:8080/"} {
		if len(a.Captures(u)) != 1 {
			t.Errorf("%s: %v", u, a.Captures(u))
		}
	}
	if got := payloadOf(t, a, "gopher://127.0.0.1:7070/0/f03000"); got != "file 3000\n" {
		t.Errorf("%q", got)
	}
	// A WARC file written after the index is read all the same.
	later := time.Now().Add(time.Minute)
	w, err := Create(filepath.Join(coll, "b"), Options{Software: "deref/test"})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(Record{Type: "resource", URI: "gopher://127.0.0.1:7070/0/later", Date: later, MediaType: "text/plain", Protocol: "gopher", Status: "-", Body: strings.NewReader("later\n")})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(filepath.Join(coll, "b.warc.gz"), later, later)
	b, err := Open(coll)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if got := payloadOf(t, b, "gopher://127.0.0.1:7070/0/later"); got != "later\n" || len(b.Captures("gopher://127.0.0.1:7070/0/f03000")) != 1 {
		t.Errorf("a file newer than the index: %q, %d captures of an older one", got, len(b.Captures("gopher://127.0.0.1:7070/0/f03000")))
	}
}

// The keys of a WACZ's index are those wabac.js looks captures up by.
func TestWACZKey(t *testing.T) {
	for in, want := range map[string]string{
		"http://www.Example.com/A?b=2&a=1":     "com,example)/a?a=1&b=2",
		"https://www2.example.com:8443/x#frag": "com,example:8443)/x",
		"http://127.0.0.1:8080":                "1,0,0,127:8080)/",
		"http://example.com:80/":               "com,example)/",
		"gopher://127.0.0.1:7070/0/README":     "gopher://127.0.0.1:7070/0/README",
		"ftp://127.0.0.1:2121/pub/;type=d":     "ftp://127.0.0.1:2121/pub/;type=d",
	} {
		if got := waczKey(in); got != want {
			t.Errorf("waczKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// Browsertrix's layout: its WARC file named rec-*.warc.gz, the ZipNum
// pair with numbers for numbers, and two page lists (pages.jsonl, the
// seeds, and extraPages.jsonl), one of them deflated.
func TestWACZBrowsertrixLayout(t *testing.T) {
	dir := t.TempDir()
	warcFile := writeSite(t, filepath.Join(dir, "rec-20260102-crawler"), 10)
	var lines []string
	err := scanEach(warcFile, func(e cdxEntry, end int64) {
		j, _ := json.Marshal(map[string]any{"url": e.url, "mime": e.mime, "status": e.status, "offset": e.offset, "length": end - e.offset, "filename": filepath.Base(warcFile)})
		lines = append(lines, waczKey(e.url)+" "+e.date.Format(cdxTime)+" "+string(j))
	}, func(int64) {})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	var cdx, idx bytes.Buffer
	if err := writeZipNum(strings.NewReader(strings.Join(lines, "\n")+"\n"), &cdx, &idx, "index.cdx.gz"); err != nil {
		t.Fatal(err)
	}
	w, _ := os.ReadFile(warcFile)
	out := filepath.Join(dir, "btrix.wacz")
	rezip(t, out, []zipEntry{
		{name: "archive/" + filepath.Base(warcFile), data: w},
		{name: "indexes/index.cdx.gz", data: cdx.Bytes()},
		{name: "indexes/index.idx", data: idx.Bytes(), deflate: true},
		{name: "pages/pages.jsonl", data: []byte(`{"format": "json-pages-1.0", "id": "pages", "title": "Seed Pages"}` + "\n" + `{"id": "a", "url": "http://127.0.0.1:8080/", "title": "Home", "loadState": 4, "ts": "2026-01-02T03:04:05Z", "seed": true}` + "\n")},
		{name: "pages/extraPages.jsonl", data: []byte(`{"format": "json-pages-1.0", "id": "extra-pages", "title": "Non-Seed Pages"}` + "\n" + `{"id": "b", "url": "gopher://127.0.0.1:7070/1/", "title": "Menu", "ts": "2026-01-02T03:04:05Z"}` + "\n"), deflate: true},
		{name: "datapackage.json", data: []byte(`{"profile": "data-package", "wacz_version": "1.1.1", "resources": []}`)},
	})
	a, err := Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if got := payloadOf(t, a, "gopher://127.0.0.1:7070/0/f00007"); got != "file 7\n" {
		t.Errorf("%q", got)
	}
	if got := payloadOf(t, a, "http://127.0.0.1:8080/i.png"); got != "\x89PNG fake" {
		t.Errorf("%q", got)
	}
	var pages []string
	a.Pages(func(p Page) bool { pages = append(pages, p.Title+" "+p.Time.Format(cdxTime)); return true })
	if strings.Join(pages, "|") != "Home 20260102030405|Menu 20260102030405" {
		t.Errorf("pages: %q", pages)
	}
}
