package warc_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nlnwa/gowarc"

	"github.com/urlderef/deref/fetch/warc"
)

type cdxLine struct {
	key, ts string
	URL     string `json:"url"`
	Mime    string `json:"mime"`
	Status  string `json:"status"`
	Digest  string `json:"digest"`
	Length  string `json:"length"`
	Offset  string `json:"offset"`
	File    string `json:"filename"`
}

func readCDX(t *testing.T, path string) []cdxLine {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []cdxLine
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(l, " ", 3)
		var c cdxLine
		if len(parts) != 3 || json.Unmarshal([]byte(parts[2]), &c) != nil {
			t.Fatalf("line %q", l)
		}
		c.key, c.ts = parts[0], parts[1]
		out = append(out, c)
	}
	return out
}

// The CDXJ index: a line per resource, response and revisit record,
// sorted by SURT key; its offset and length are the record's gzip member
// in the file. A payload met again is a revisit record, in this run and
// in a later one given the first's index.
func TestCDXAndRevisits(t *testing.T) {
	dir := t.TempDir()
	when := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	w, err := warc.Create(filepath.Join(dir, "one"), warc.Options{Software: "deref/test", CDX: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []warc.Record{
		{Type: "resource", URI: "gopher://gopher.example.org/0/b.txt", Date: when, MediaType: "text/plain", Body: strings.NewReader("bravo\n")},
		{Type: "resource", URI: "ftp://ftp.example.org/pub/a.txt", Date: when, MediaType: "text/plain", Body: strings.NewReader("alpha\n")},
		{Type: "metadata", URI: "ftp://ftp.example.org/pub/a.txt", Date: when, MediaType: "text/x-ftp-control-conversation", Body: strings.NewReader("220 hi\r\n")},
		{Type: "resource", URI: "gopher://gopher.example.org/0/a.txt", Date: when, MediaType: "text/plain", Body: strings.NewReader("alpha\n")},
	} {
		if _, err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	lines := readCDX(t, filepath.Join(dir, "one.cdxj"))
	if len(lines) != 3 {
		t.Fatalf("%d lines: %+v", len(lines), lines)
	}
	wantKeys := []string{"ftp://(org,example,ftp,)/pub/a.txt", "gopher://(org,example,gopher,)/0/a.txt", "gopher://(org,example,gopher,)/0/b.txt"}
	raw, _ := os.ReadFile(filepath.Join(dir, "one.warc.gz"))
	for i, l := range lines {
		if l.key != wantKeys[i] || l.ts != "20261123100000" || l.File != "one.warc.gz" {
			t.Errorf("line %d: %+v", i, l)
		}
		off, _ := strconv.Atoi(l.Offset)
		n, _ := strconv.Atoi(l.Length)
		zr, err := gzip.NewReader(bytes.NewReader(raw[off : off+n]))
		if err != nil {
			t.Fatalf("%s: offset %d: %v", l.URL, off, err)
		}
		b, err := io.ReadAll(zr)
		if err != nil || !strings.Contains(string(b), "WARC-Target-URI: "+l.URL+"\r\n") {
			t.Errorf("%s: offset %d length %d lead to %q (%v)", l.URL, off, n, b[:min(len(b), 200)], err)
		}
	}
	if lines[1].Mime != "warc/revisit" || lines[0].Mime != "text/plain" || lines[0].Digest != lines[1].Digest {
		t.Errorf("the second alpha is a revisit: %+v", lines[:2])
	}

	// A later run, given the first's index.
	w2, err := warc.Create(filepath.Join(dir, "two"), warc.Options{Software: "deref/test", DedupIndex: filepath.Join(dir, "one.cdxj")})
	if err != nil {
		t.Fatal(err)
	}
	w2.Write(warc.Record{Type: "resource", URI: "ftp://mirror.example.org/a.txt", MediaType: "text/plain", Body: strings.NewReader("alpha\n")})
	w2.Write(warc.Record{Type: "resource", URI: "ftp://mirror.example.org/new.txt", MediaType: "text/plain", Body: strings.NewReader("new\n")})
	w2.Close()
	recs := readAll(t, filepath.Join(dir, "two.warc.gz"))
	if len(recs) != 3 || recs[1].Type() != gowarc.Revisit || recs[2].Type() != gowarc.Resource ||
		recs[1].WarcHeader().Get(gowarc.WarcRefersToTargetURI) != "ftp://ftp.example.org/pub/a.txt" ||
		recs[1].WarcHeader().Get(gowarc.WarcRefersToDate) != "2026-11-23T10:00:00Z" {
		t.Errorf("second run: %d records, %v %v\n%s", len(recs), recs[1].Type(), recs[2].Type(), recs[1].WarcHeader())
	}
}

// Index, reading a finished file, writes the index its writer wrote:
// the same lines, an HTTP response's status and media type from its head.
func TestIndexFromFile(t *testing.T) {
	dir := t.TempDir()
	when := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	w, err := warc.Create(filepath.Join(dir, "one"), warc.Options{CDX: true})
	if err != nil {
		t.Fatal(err)
	}
	head := "HTTP/1.1 404 Not Found\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: 5\r\n\r\n"
	for _, r := range []warc.Record{
		{Type: "resource", URI: "gopher://gopher.example.org/0/b.txt", Date: when, MediaType: "text/plain", Body: strings.NewReader("bravo\n")},
		{Type: "response", URI: "http://www.example.org/x", Date: when, MediaType: "application/http;msgtype=response", Body: strings.NewReader(head + "gone\n"),
			PayloadOffset: int64(len(head)), Status: "404", PayloadType: "text/html"},
		{Type: "metadata", URI: "ftp://ftp.example.org/pub/a.txt", Date: when, MediaType: "text/x-ftp-control-conversation", Body: strings.NewReader("220 hi\r\n")},
		{Type: "resource", URI: "gopher://gopher.example.org/0/a.txt", Date: when, MediaType: "text/plain", Body: strings.NewReader("bravo\n")},
	} {
		if _, err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	written, err := os.ReadFile(filepath.Join(dir, "one.cdxj"))
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "one.cdxj"))
	if err := warc.Index(filepath.Join(dir, "one.warc.gz")); err != nil {
		t.Fatal(err)
	}
	read, err := os.ReadFile(filepath.Join(dir, "one.cdxj"))
	if err != nil {
		t.Fatal(err)
	}
	if string(read) != string(written) || !strings.Contains(string(read), `"status":"404"`) || strings.Count(string(read), "\n") != 3 {
		t.Errorf("index read from the file:\n%s\nthe writer's:\n%s", read, written)
	}
}

// The workers of a shared crawl each write a series with its indexes:
// WriteIndex merges the indexes beside the files, or given as .cdxj
// files, into the same sorted index that reading the files through
// makes, and refuses an index that is not sorted.
func TestWriteIndexMerges(t *testing.T) {
	dir := t.TempDir()
	var files []string
	when := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	for wk, urls := range [][]string{{"gopher://h/0/c", "gopher://h/0/a", "http://h/z"}, {"gopher://h/0/b", "gopher://g/1/", "gopher://h/0/d"}} {
		w, err := warc.Create(filepath.Join(dir, fmt.Sprintf("crawl-w%d", wk)), warc.Options{CDX: true})
		if err != nil {
			t.Fatal(err)
		}
		for i, u := range urls {
			w.Write(warc.Record{Type: "resource", URI: u, Date: when.Add(time.Duration(i) * time.Second), MediaType: "text/plain", Body: strings.NewReader(u)})
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		files = append(files, filepath.Join(dir, fmt.Sprintf("crawl-w%d.warc.gz", wk)))
	}
	index := func(paths ...string) string {
		var b strings.Builder
		if err := warc.WriteIndex(&b, paths...); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	merged := index(files...)
	given := index(warc.IndexName(files[0]), warc.IndexName(files[1]))
	for _, f := range files {
		os.Remove(warc.IndexName(f))
	}
	read := index(files...)
	if merged != read || given != read {
		t.Errorf("merged from the indexes:\n%s\ngiven as .cdxj:\n%s\nread from the files:\n%s", merged, given, read)
	}
	lines := strings.Split(strings.TrimSpace(read), "\n")
	if len(lines) != 6 || !sort.StringsAreSorted(lines) {
		t.Errorf("index of %d lines, sorted %v: %q", len(lines), sort.StringsAreSorted(lines), lines)
	}
	bad := filepath.Join(dir, "bad.cdxj")
	os.WriteFile(bad, []byte(lines[1]+"\n"+lines[0]+"\n"), 0o644)
	if err := warc.WriteIndex(io.Discard, bad); err == nil || !strings.Contains(err.Error(), "not sorted") {
		t.Errorf("an unsorted index: %v", err)
	}
}

// TestEmptyIndexBeside: an empty index beside a WARC file (the one the
// shell made of "deref index one.warc.gz > one.cdxj" before deref ran) is
// not taken for the file's: WriteIndex and Open read the file instead.
func TestEmptyIndexBeside(t *testing.T) {
	dir := t.TempDir()
	w, err := warc.Create(filepath.Join(dir, "one"), warc.Options{CDX: true})
	if err != nil {
		t.Fatal(err)
	}
	when := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	if _, err := w.Write(warc.Record{Type: "resource", URI: "gopher://gopher.example.org/0/a.txt", Date: when, MediaType: "text/plain", Body: strings.NewReader("a\n")}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "one.cdxj"), nil, 0o644)
	var b strings.Builder
	if err := warc.WriteIndex(&b, filepath.Join(dir, "one.warc.gz")); err != nil || strings.Count(b.String(), "\n") != 1 {
		t.Errorf("WriteIndex beside an empty index: %v, %q", err, b.String())
	}
	a, err := warc.Open(filepath.Join(dir, "one.warc.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if a.Empty() || len(a.Captures("gopher://gopher.example.org/0/a.txt")) != 1 {
		t.Error("Open beside an empty index: no capture")
	}
}
