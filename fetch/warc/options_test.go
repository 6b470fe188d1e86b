package warc_test

import (
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"encoding/base32"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nlnwa/gowarc"

	"github.com/urlderef/deref/fetch/warc"
)

// Uncompressed writes NAME.warc, each record as it is (no gzip), a
// large streamed block spooled raw and copied in behind its head; the
// CDXJ index's offsets and lengths are the records' bytes in the file.
func TestUncompressed(t *testing.T) {
	dir := t.TempDir()
	w, err := warc.Create(filepath.Join(dir, "out"), warc.Options{TempDir: dir, Uncompressed: true, CDX: true})
	if err != nil {
		t.Fatal(err)
	}
	head := "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n"
	big := randomish(1<<20+5, 7) // past memPerRecord: spooled to a file
	bodies := map[string]string{
		"gopher://h/9/big":  string(big),
		"gopher://h/0/text": strings.Repeat("a line of text\n", 8000),
		"gopher://h/0/tiny": "tiny\n",
		"http://h/page":     head + "page\n",
	}
	order := []string{"gopher://h/9/big", "gopher://h/0/text", "gopher://h/0/tiny", "http://h/page"}
	for _, u := range order {
		r := warc.Record{Type: "resource", URI: u, MediaType: "application/octet-stream", Body: io.MultiReader(strings.NewReader(bodies[u]))}
		if strings.HasPrefix(u, "http:") {
			r = warc.Record{Type: "response", URI: u, MediaType: "application/http;msgtype=response", Body: strings.NewReader(bodies[u]),
				PayloadOffset: int64(len(head)), Status: "200", PayloadType: "text/plain"}
		}
		if _, err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "out.warc.gz")); err == nil {
		t.Error("out.warc.gz written")
	}
	path := filepath.Join(dir, "out.warc")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(raw, []byte("WARC/1.1\r\n")) {
		t.Fatalf("the file begins %q", raw[:min(len(raw), 20)])
	}
	recs, blocks := readRecords(t, path, true)
	if len(recs) != 5 || recs[0].Type() != gowarc.Warcinfo {
		t.Fatalf("%d records", len(recs))
	}
	for i, u := range order {
		h := recs[i+1].WarcHeader()
		sum := sha1.Sum([]byte(bodies[u]))
		if h.Get(gowarc.WarcTargetURI) != u || blocks[i+1] != bodies[u] || h.Get(gowarc.ContentLength) != strconv.Itoa(len(bodies[u])) ||
			h.Get(gowarc.WarcBlockDigest) != "sha1:"+base32.StdEncoding.EncodeToString(sum[:]) {
			t.Errorf("record %d (%s): %d bytes of %d, header\n%s", i+1, u, len(blocks[i+1]), len(bodies[u]), h)
		}
	}
	lines := readCDX(t, filepath.Join(dir, "out.cdxj"))
	if len(lines) != 4 {
		t.Fatalf("%d index lines", len(lines))
	}
	end := 0
	for _, l := range lines {
		off, _ := strconv.Atoi(l.Offset)
		n, _ := strconv.Atoi(l.Length)
		rec := string(raw[off : off+n])
		if l.File != "out.warc" || !strings.HasPrefix(rec, "WARC/1.1\r\n") || !strings.Contains(rec, "\r\nWARC-Target-URI: "+l.URL+"\r\n") ||
			!strings.HasSuffix(rec, bodies[l.URL]+"\r\n\r\n") {
			t.Errorf("%s: offset %d length %d in %s", l.URL, off, n, l.File)
		}
		end = max(end, off+n)
	}
	if end != len(raw) {
		t.Errorf("the records indexed end at %d, the file at %d", end, len(raw))
	}
}

// NoDigests leaves out both digests, and with them the revisit records:
// the same payload twice is written twice, and the index says no digest.
func TestNoDigests(t *testing.T) {
	dir := t.TempDir()
	w, err := warc.Create(filepath.Join(dir, "out"), warc.Options{TempDir: dir, NoDigests: true, CDX: true})
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("streamed and packed\n", 10000)
	for _, r := range []warc.Record{
		{Type: "resource", URI: "gopher://h/0/a", MediaType: "text/plain", Body: strings.NewReader("same\n")},
		{Type: "resource", URI: "gopher://h/0/b", MediaType: "text/plain", Body: strings.NewReader("same\n")},
		{Type: "resource", URI: "gopher://h/0/big", MediaType: "text/plain", Body: io.MultiReader(strings.NewReader(big))},
	} {
		if _, err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	recs, blocks := readRecords(t, filepath.Join(dir, "out.warc.gz"), true)
	if len(recs) != 4 {
		t.Fatalf("%d records", len(recs))
	}
	for i, rec := range recs[1:] {
		if rec.Type() != gowarc.Resource {
			t.Errorf("record %d: %v", i+1, rec.Type())
		}
	}
	// As written: gowarc's reader adds the digests a record lacks.
	f, err := os.Open(filepath.Join(dir, "out.warc.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	text, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(text), "\r\nWARC-Block-Digest: "); n != 1 || strings.Contains(string(text), "WARC-Payload-Digest") {
		t.Errorf("%d block digests (the warcinfo record's alone wanted), payload digests: %v", n, strings.Contains(string(text), "WARC-Payload-Digest"))
	}
	if blocks[2] != "same\n" || blocks[3] != big {
		t.Errorf("blocks %q, %d bytes", blocks[2], len(blocks[3]))
	}
	for _, l := range readCDX(t, filepath.Join(dir, "out.cdxj")) {
		if l.Digest != "" || l.Mime != "text/plain" {
			t.Errorf("index line %+v", l)
		}
	}
}

// InfoFields go into every file's warcinfo record, a line each, after
// deref's own.
func TestInfoFields(t *testing.T) {
	dir := t.TempDir()
	w, err := warc.Create(filepath.Join(dir, "out"), warc.Options{Software: "deref/test", MaxSize: 1, InfoFields: []string{"operator: Archive Team", "isPartOf: gopher\r\nspace"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"gopher://h/0/a", "gopher://h/0/b"} {
		if _, err := w.Write(warc.Record{Type: "resource", URI: u, MediaType: "text/plain", Body: strings.NewReader(u)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"out-00000.warc.gz", "out-00001.warc.gz"} {
		recs, blocks := readRecords(t, filepath.Join(dir, name), true)
		if len(recs) != 2 || recs[0].Type() != gowarc.Warcinfo ||
			!strings.HasPrefix(blocks[0], "software: deref/test\r\n") || !strings.HasSuffix(blocks[0], "\r\noperator: Archive Team\r\nisPartOf: gopher  space\r\n") {
			t.Errorf("%s: %d records, warcinfo %q", name, len(recs), blocks[0])
		}
	}
}

// wgetCDX is a CDX file as wget 1.21's --warc-cdx writes it: its header
// line naming the fields, then a line per response record.
const wgetCDX = ` CDX a b a m s k r M V g u
http://www.example.org/a.txt 20261120081500 http://www.example.org/a.txt text/plain 200 %s - - 1187 web.warc.gz <urn:uuid:0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9>
http://www.example.org/gone 20261120081501 http://www.example.org/gone text/html 404 %s - - 2311 web.warc.gz <urn:uuid:11111111-2222-4333-8444-555555555555>
`

// A payload the CDX file of wget's --warc-cdx lists becomes a revisit
// record referring to wget's record: its ID, URL and time.
func TestDedupWgetCDX(t *testing.T) {
	dir := t.TempDir()
	digest := func(s string) string {
		sum := sha1.Sum([]byte(s))
		return base32.StdEncoding.EncodeToString(sum[:])
	}
	index := filepath.Join(dir, "web.cdx")
	if err := os.WriteFile(index, []byte(strings.ReplaceAll(strings.Replace(wgetCDX, "%s", digest("alpha\n"), 1), "%s", "-")), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := warc.Create(filepath.Join(dir, "out"), warc.Options{DedupIndex: index})
	if err != nil {
		t.Fatal(err)
	}
	when := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	w.Write(warc.Record{Type: "resource", URI: "gopher://h/0/a.txt", Date: when, MediaType: "text/plain", Body: strings.NewReader("alpha\n")})
	w.Write(warc.Record{Type: "resource", URI: "gopher://h/0/b.txt", Date: when, MediaType: "text/plain", Body: strings.NewReader("bravo\n")})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	recs := readAll(t, filepath.Join(dir, "out.warc.gz"))
	if len(recs) != 3 || recs[1].Type() != gowarc.Revisit || recs[2].Type() != gowarc.Resource {
		t.Fatalf("%d records", len(recs))
	}
	h := recs[1].WarcHeader()
	if h.Get(gowarc.WarcRefersTo) != "<urn:uuid:0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9>" || h.Get(gowarc.WarcRefersToTargetURI) != "http://www.example.org/a.txt" ||
		h.Get(gowarc.WarcRefersToDate) != "2026-11-20T08:15:00Z" {
		t.Errorf("the revisit record:\n%s", h)
	}

	// A CDX file whose header names no digest field is refused.
	bad := filepath.Join(dir, "bad.cdx")
	os.WriteFile(bad, []byte(" CDX a b m s\nhttp://www.example.org/a.txt 20261120081500 text/plain 200\n"), 0o644)
	if _, err := warc.Create(filepath.Join(dir, "bad"), warc.Options{DedupIndex: bad}); err == nil || !strings.Contains(err.Error(), "digest field (k)") {
		t.Errorf("Create with %s: %v", bad, err)
	}
}

// An index that cannot be read whole is an error naming it, not an
// index read in part.
func TestDedupIndexUnreadable(t *testing.T) {
	dir := t.TempDir()
	index := filepath.Join(dir, "long.cdxj")
	os.WriteFile(index, []byte("x 20261120081500 {\"url\": \""+strings.Repeat("a", 2<<20)+"\"}\n"), 0o644)
	if _, err := warc.Create(filepath.Join(dir, "out"), warc.Options{DedupIndex: index}); err == nil || !strings.Contains(err.Error(), index) {
		t.Errorf("Create: %v", err)
	}
}

// Continue takes up an archive an earlier run left: the records go on in
// the next free file of its series, never over one; without it an
// existing file is an error.
func TestContinue(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "a")
	for i := range 3 {
		w, err := warc.Create(name, warc.Options{Continue: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(warc.Record{Type: "resource", URI: fmt.Sprintf("gopher://h/0/%d", i), MediaType: "text/plain", Body: strings.NewReader("x\n")}); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"a.warc.gz", "a-00001.warc.gz", "a-00002.warc.gz"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	if _, err := warc.Create(name, warc.Options{}); err == nil || !strings.Contains(err.Error(), "exists already") {
		t.Errorf("without Continue: %v", err)
	}
}

// Continued with CDX, an earlier file of the series that has no index
// (a full disk left no room for it) gets one.
func TestContinueIndexes(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "a")
	w, err := warc.Create(name, warc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(warc.Record{Type: "resource", URI: "gopher://h/0/x", MediaType: "text/plain", Body: strings.NewReader("x\n")})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w, err = warc.Create(name, warc.Options{Continue: true, CDX: true})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if b, err := os.ReadFile(filepath.Join(dir, "a.cdxj")); err != nil || !strings.Contains(string(b), "gopher://h/0/x") {
		t.Errorf("a.cdxj: %q %v", b, err)
	}
}
