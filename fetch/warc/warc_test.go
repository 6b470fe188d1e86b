package warc_test

import (
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"encoding/base32"
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

// readAll reads every record of a WARC file back with gowarc's reader.
func readAll(t *testing.T, path string) []gowarc.WarcRecord {
	t.Helper()
	recs, _ := readRecords(t, path, false)
	return recs
}

// readRecords reads every record of a WARC file back with gowarc's
// reader and, with blocks, each block as its record comes: the reader
// keeps only the first MiB of a block it has gone past.
func readRecords(t *testing.T, path string, blocks bool) (recs []gowarc.WarcRecord, blockStrings []string) {
	t.Helper()
	r, err := gowarc.NewWarcFileReader(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for {
		rec, _, _, err := r.Next()
		if err == io.EOF {
			return recs, blockStrings
		}
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
		if blocks {
			blockStrings = append(blockStrings, blockString(t, rec))
		}
	}
}

// A resource record and its metadata record: a warcinfo record first,
// each record its own gzip member, the block digest the SHA-1 of the
// block, the protocol named.
func TestWriteRecords(t *testing.T) {
	dir := t.TempDir()
	w, err := warc.Create(filepath.Join(dir, "out"), warc.Options{Software: "deref/test", CommandLine: "deref --warc-file out gopher://h/0/a"})
	if err != nil {
		t.Fatal(err)
	}
	body := strings.Repeat("a line of a gopher text item\n", 100000) // past the memory buffer: spooled
	when := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	id, err := w.Write(warc.Record{Type: "resource", URI: "gopher://h/0/a", Date: when, MediaType: "text/plain", Protocol: "gopher", IP: "127.0.0.1", Body: strings.NewReader(body)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(warc.Record{Type: "metadata", URI: "gopher://h/0/a", Date: when, MediaType: "text/x-ftp-control-conversation", ConcurrentTo: id, Body: strings.NewReader("220 ready\r\n")}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "out.warc.gz")
	recs := readAll(t, path)
	if len(recs) != 3 {
		t.Fatalf("%d records", len(recs))
	}
	if recs[0].Type() != gowarc.Warcinfo || !strings.Contains(blockString(t, recs[0]), "software: deref/test\r\nformat: WARC File Format 1.1\r\n") {
		t.Errorf("first record %v: %q", recs[0].Type(), blockString(t, recs[0]))
	}
	res := recs[1]
	h := res.WarcHeader()
	sum := sha1.Sum([]byte(body))
	if res.Type() != gowarc.Resource || h.Get(gowarc.WarcTargetURI) != "gopher://h/0/a" || h.Get("WARC-Protocol") != "gopher" ||
		h.Get(gowarc.WarcBlockDigest) != "sha1:"+base32.StdEncoding.EncodeToString(sum[:]) || h.Get(gowarc.WarcIPAddress) != "127.0.0.1" ||
		h.Get(gowarc.WarcDate) != "2026-11-23T10:00:00Z" {
		t.Errorf("resource header:\n%s", h)
	}
	if h.Get(gowarc.ContentLength) != "2900000" {
		t.Errorf("resource block of %s bytes, want %d", h.Get(gowarc.ContentLength), len(body))
	}
	if m := recs[2].WarcHeader(); m.Get(gowarc.WarcConcurrentTo) != "<"+id+">" || recs[2].Type() != gowarc.Metadata {
		t.Errorf("metadata header:\n%s", m)
	}
	// One gzip member per record: each decompresses alone to one record.
	raw, _ := os.ReadFile(path)
	br := bytes.NewReader(raw)
	var starts []string
	for br.Len() > 0 {
		zr, err := gzip.NewReader(br)
		if err != nil {
			t.Fatal(err)
		}
		zr.Multistream(false)
		b, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		starts = append(starts, strings.SplitN(string(b), "\r\n", 3)[1])
	}
	if strings.Join(starts, "|") != "WARC-Type: warcinfo|WARC-Type: resource|WARC-Type: metadata" {
		t.Errorf("gzip members begin %q", starts)
	}
}

func blockString(t *testing.T, rec gowarc.WarcRecord) string {
	t.Helper()
	r, err := rec.Block().RawBytes()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r)
	return string(b)
}

// With a maximum size, files roll over, each with its warcinfo record.
func TestRollover(t *testing.T) {
	dir := t.TempDir()
	w, err := warc.Create(filepath.Join(dir, "out"), warc.Options{MaxSize: 2000, Software: "deref/test"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if _, err := w.Write(warc.Record{Type: "resource", URI: "file:///x" + string(rune('a'+i)), MediaType: "application/octet-stream", Body: bytes.NewReader(randomish(3000, i))}); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	names, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(names) < 2 || filepath.Base(names[0]) != "out-00000.warc.gz" {
		t.Fatalf("files %v", names)
	}
	for _, n := range names {
		recs := readAll(t, n)
		if len(recs) < 2 || recs[0].Type() != gowarc.Warcinfo {
			t.Errorf("%s: %d records, first %v", n, len(recs), recs[0].Type())
		}
	}
	if _, err := warc.Create(filepath.Join(dir, "out"), warc.Options{}); err != nil {
		t.Errorf("rolled-over names do not clash with NAME.warc.gz: %v", err)
	}
}

// A rollover never parts a retrieval's records: a record concurrent to
// the one written last (an HTTP request after its response) goes into
// that one's file, past MaxSize; the next retrieval starts a new file.
func TestRolloverKeepsPairs(t *testing.T) {
	dir := t.TempDir()
	w, err := warc.Create(filepath.Join(dir, "out"), warc.Options{MaxSize: 1000, Software: "deref/test"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		uri := "http://example.org/" + string(rune('a'+i))
		id, err := w.Write(warc.Record{Type: "response", URI: uri, MediaType: "application/http;msgtype=response",
			Body: bytes.NewReader(append([]byte("HTTP/1.1 200 OK\r\n\r\n"), randomish(3000, i)...)), PayloadOffset: 19})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(warc.Record{Type: "request", URI: uri, MediaType: "application/http;msgtype=request", ConcurrentTo: id,
			Body: strings.NewReader("GET /" + string(rune('a'+i)) + " HTTP/1.1\r\nHost: example.org\r\n\r\n")}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	names, _ := filepath.Glob(filepath.Join(dir, "out-*.warc.gz"))
	if len(names) != 3 {
		t.Fatalf("files %v, want one for each of the 3 retrievals", names)
	}
	for _, n := range names {
		recs := readAll(t, n)
		var types []string
		for _, r := range recs {
			types = append(types, r.Type().String())
		}
		if got := strings.Join(types, " "); got != "warcinfo response request" {
			t.Errorf("%s: records %s, want warcinfo response request", filepath.Base(n), got)
		}
	}
}

func randomish(n, seed int) []byte {
	b := make([]byte, n)
	x := uint32(seed*7919 + 1)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

// A group's records wait for its commit and go into the file together,
// after records written since; the commit's callback comes once they are
// in the file, with the file's size; a dropped group writes nothing.
func TestGroups(t *testing.T) {
	dir := t.TempDir()
	w, err := warc.Create(filepath.Join(dir, "g"), warc.Options{Numbered: true})
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	w.OnFile(func(path string) { files = append(files, path) })
	rec := func(uri string, g *warc.Group) {
		t.Helper()
		if _, err := w.Write(warc.Record{Type: "resource", URI: uri, MediaType: "text/plain", Body: strings.NewReader("body of " + uri), Group: g}); err != nil {
			t.Fatal(err)
		}
	}
	a, dropped := w.NewGroup(), w.NewGroup()
	rec("gopher://h/0/a1", a)
	rec("gopher://h/0/x1", dropped)
	rec("gopher://h/0/plain", nil)
	rec("gopher://h/0/a2", a)
	type commit struct {
		file string
		end  int64
	}
	got := make(chan commit, 1)
	a.Commit(func(file string, end int64) { got <- commit{file, end} })
	dropped.Drop()
	c := <-got
	want := filepath.Join(dir, "g-00000.warc.gz")
	if c.file != want {
		t.Errorf("committed in %q, want %q", c.file, want)
	}
	open, err := os.Stat(want + ".open")
	if err != nil || open.Size() != c.end {
		t.Errorf("commit says %d bytes; the file: %v, %v", c.end, open, err)
	}
	rec("gopher://h/0/after", nil)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range readAll(t, want)[1:] {
		uris = append(uris, r.WarcHeader().Get(gowarc.WarcTargetURI))
	}
	if strings.Join(uris, " ") != "gopher://h/0/plain gopher://h/0/a1 gopher://h/0/a2 gopher://h/0/after" {
		t.Errorf("records in the file: %v", uris)
	}
	if len(files) != 1 || files[0] != want {
		t.Errorf("files begun: %v", files)
	}
	// A second writer of the same name writes beside the first.
	w2, err := warc.Create(filepath.Join(dir, "g"), warc.Options{Numbered: true})
	if err != nil {
		t.Fatal(err)
	}
	rec2 := warc.Record{Type: "resource", URI: "gopher://h/0/again", Body: strings.NewReader("x")}
	if _, err := w2.Write(rec2); err != nil {
		t.Fatal(err)
	}
	if err := w2.Close(); err != nil {
		t.Fatal(err)
	}
	if recs := readAll(t, filepath.Join(dir, "g-00001.warc.gz")); len(recs) != 2 || recs[1].WarcHeader().Get(gowarc.WarcTargetURI) != "gopher://h/0/again" {
		t.Errorf("the second writer's file holds %d records", len(recs))
	}
}

// BenchmarkSmallRecords writes the records of a small FTP file: a
// resource record of 700 bytes and its control conversation, as a mirror
// of many small files makes them; the time per operation is what the
// archive adds per file.
func BenchmarkSmallRecords(b *testing.B) {
	w, err := warc.Create(filepath.Join(b.TempDir(), "small"), warc.Options{})
	if err != nil {
		b.Fatal(err)
	}
	body := strings.Repeat("<p>Some words of a generated page.</p>\n", 18)
	conv := "> TYPE I\r\n200 Switching to Binary mode.\r\n> SIZE /site/p/1.html\r\n213 700\r\n> EPSV\r\n229 Entering Extended Passive Mode (|||30000|)\r\n> RETR /site/p/1.html\r\n150 Opening BINARY mode data connection (700 bytes).\r\n226 Transfer complete.\r\n"
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		n++ // each file differs from the others, as a mirror's do: no revisit records
		id, err := w.Write(warc.Record{Type: "resource", URI: "ftp://127.0.0.1:2121/site/p/1.html", MediaType: "text/html", Protocol: "ftp", Body: strings.NewReader(strconv.Itoa(n) + body)})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := w.Write(warc.Record{Type: "metadata", URI: "ftp://127.0.0.1:2121/site/p/1.html", MediaType: "text/x-ftp-control-conversation", ConcurrentTo: id, Body: strings.NewReader(conv)}); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

// A record written while nothing else comes reaches the file before
// Close: what the writer holds is flushed once it is idle, so that a run
// killed between two slow transfers keeps what it archived.
func TestIdleFlush(t *testing.T) {
	dir := t.TempDir()
	w, err := warc.Create(filepath.Join(dir, "out"), warc.Options{Software: "deref/test"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Write(warc.Record{Type: "resource", URI: "gopher://h/0/a", MediaType: "text/plain", Body: strings.NewReader("an item\n")}); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(dir, "out.warc.gz.open")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile(open)
		if err != nil && !os.IsNotExist(err) { // begun with the first record
			t.Fatal(err)
		}
		members := 0
		br := bytes.NewReader(b) // a ByteReader: each member is read to its end, no further
		zr, err := gzip.NewReader(br)
		for err == nil {
			zr.Multistream(false)
			var block []byte
			if block, err = io.ReadAll(zr); err == nil {
				if bytes.Contains(block, []byte("WARC-Target-URI: gopher://h/0/a")) && bytes.HasSuffix(block, []byte("an item\n\r\n\r\n")) {
					return // the resource record, whole
				}
				members++
				err = zr.Reset(br)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s the open file holds %d bytes, %d whole records, not the resource", len(b), members)
		}
	}
}

// Blocks of unknown or large size are compressed as they stream in and
// joined to their record's head afterwards: each record is still one
// gzip member whose CRC-32 and length the reader checks, whatever the
// block (incompressible, empty, larger than a deflate stored block), and
// a block seen before becomes a revisit record with no block.
func TestStreamedBlocks(t *testing.T) {
	dir := t.TempDir()
	w, err := warc.Create(filepath.Join(dir, "out"), warc.Options{TempDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("a line of a large text item, compressed as it comes\n", 20000)
	bodies := map[string][]byte{
		"gopher://h/9/random": randomish(3<<20+17, 1),
		"gopher://h/0/text":   []byte(text),
		"gopher://h/0/empty":  nil,
		"gopher://h/0/short":  []byte("no length known"),
	}
	order := []string{"gopher://h/9/random", "gopher://h/0/text", "gopher://h/0/empty", "gopher://h/0/short"}
	for _, u := range order {
		// io.MultiReader hides the length: the block streams.
		if _, err := w.Write(warc.Record{Type: "resource", URI: u, MediaType: "application/octet-stream", Body: io.MultiReader(bytes.NewReader(bodies[u]))}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Write(warc.Record{Type: "resource", URI: "gopher://h/0/again", MediaType: "text/plain", Body: io.MultiReader(strings.NewReader(text))}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "out.warc.gz")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	br := bytes.NewReader(raw)
	members := 0
	for br.Len() > 0 {
		zr, err := gzip.NewReader(br)
		if err != nil {
			t.Fatal(err)
		}
		zr.Multistream(false)
		if _, err := io.Copy(io.Discard, zr); err != nil { // checks the member's CRC-32 and length
			t.Fatalf("member %d: %v", members, err)
		}
		members++
	}
	recs, blocks := readRecords(t, path, true)
	if members != 6 || len(recs) != 6 {
		t.Fatalf("%d members, %d records, want 6", members, len(recs))
	}
	for i, u := range order {
		rec := recs[i+1]
		h := rec.WarcHeader()
		got := blocks[i+1]
		sum := sha1.Sum(bodies[u])
		if h.Get(gowarc.WarcTargetURI) != u || got != string(bodies[u]) || h.Get(gowarc.ContentLength) != strconv.Itoa(len(bodies[u])) ||
			h.Get(gowarc.WarcBlockDigest) != "sha1:"+base32.StdEncoding.EncodeToString(sum[:]) {
			t.Errorf("record %d (%s): %d bytes of %d, header\n%s", i+1, u, len(got), len(bodies[u]), h)
		}
	}
	rv := recs[5]
	if rv.Type() != gowarc.Revisit || rv.WarcHeader().Get(gowarc.WarcRefersToTargetURI) != "gopher://h/0/text" || blocks[5] != "" {
		t.Errorf("the same payload again: %v, header\n%s", rv.Type(), rv.WarcHeader())
	}
}

// BenchmarkStreamedRecord writes a resource record whose block streams
// in (its size unknown): the bytes per operation stay flat as the block
// grows 16 times, since the block is compressed as it comes and spooled
// past 256 KiB (compressed), never held whole.
func BenchmarkStreamedRecord(b *testing.B) {
	for _, size := range []int{1 << 20, 16 << 20} {
		b.Run(strconv.Itoa(size>>20)+"MiB", func(b *testing.B) {
			dir := b.TempDir()
			w, err := warc.Create(filepath.Join(dir, "big"), warc.Options{TempDir: dir})
			if err != nil {
				b.Fatal(err)
			}
			pattern := randomish(64<<10, 3) // repeated farther apart than deflate looks: spooled nearly whole
			b.SetBytes(int64(size))
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				n++ // each block differs from the others: no revisit records
				body := io.MultiReader(strings.NewReader(strconv.Itoa(n)), io.LimitReader(repeatReader(pattern), int64(size)))
				if _, err := w.Write(warc.Record{Type: "resource", URI: "gopher://h/9/big", MediaType: "application/octet-stream", Body: body}); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// repeatReader reads its bytes again and again.
type repeatReader []byte

func (r repeatReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		n += copy(p[n:], r)
	}
	return n, nil
}

// A block that cannot be spooled (its temporary folder is gone) fails
// its record, whose member is not begun, and the writer says so; the
// records around it are whole.
func TestStreamedBlockUnspooled(t *testing.T) {
	dir := t.TempDir()
	w, err := warc.Create(filepath.Join(dir, "out"), warc.Options{TempDir: filepath.Join(dir, "gone")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(warc.Record{Type: "resource", URI: "gopher://h/0/before", MediaType: "text/plain", Body: strings.NewReader("before\n")}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(warc.Record{Type: "resource", URI: "gopher://h/9/big", MediaType: "application/octet-stream", Body: io.MultiReader(bytes.NewReader(randomish(1<<20, 5)))}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(warc.Record{Type: "resource", URI: "gopher://h/0/after", MediaType: "text/plain", Body: strings.NewReader("after\n")}); err != nil {
		t.Fatal(err)
	}
	err = w.Close()
	if err == nil || !strings.Contains(err.Error(), "gopher://h/9/big") || !strings.Contains(err.Error(), "compressing the block") {
		t.Fatalf("Close: %v", err)
	}
	var uris []string
	for _, rec := range readAll(t, filepath.Join(dir, "out.warc.gz")) {
		uris = append(uris, rec.WarcHeader().Get(gowarc.WarcTargetURI))
	}
	if strings.Join(uris, " ") != " gopher://h/0/before gopher://h/0/after" {
		t.Errorf("records of %q", uris)
	}
}

// A file is indexed (read with gowarc's reader) while a writer of
// another archive makes records: under the race detector, each reader
// and builder that gowarc makes sets a global of the UUID package, so
// the two must not be made at once.
func TestIndexBesideWriter(t *testing.T) {
	dir := t.TempDir()
	first := filepath.Join(dir, "first")
	w, err := warc.Create(first, warc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	when := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	if _, err := w.Write(warc.Record{Type: "resource", URI: "gopher://h/0/a", Date: when, MediaType: "text/plain", Body: strings.NewReader("a\n")}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() {
		w, err := warc.Create(filepath.Join(dir, "second"), warc.Options{})
		if err != nil {
			done <- err
			return
		}
		for i := range 50 {
			if _, err := w.Write(warc.Record{Type: "resource", URI: "gopher://h/0/" + strconv.Itoa(i), Date: when, MediaType: "text/plain", Body: strings.NewReader("b\n")}); err != nil {
				w.Close()
				done <- err
				return
			}
		}
		done <- w.Close()
	}()
	for range 50 {
		if err := warc.Index(first + ".warc.gz"); err != nil {
			t.Error(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := len(readAll(t, filepath.Join(dir, "second.warc.gz"))); n != 51 {
		t.Errorf("%d records in the second file, want 51", n)
	}
}
