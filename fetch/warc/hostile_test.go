package warc_test

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch/warc"
)

// A hostile or damaged archive: what cannot be read is named in
// Skipped, the rest is served.
func TestOpenDamaged(t *testing.T) {
	dir := t.TempDir()
	w, err := warc.Create(filepath.Join(dir, "d"), warc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	when := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, n := range []string{"a", "b", "c"} {
		w.Write(warc.Record{Type: "resource", URI: "gopher://h/0/" + n, Date: when, MediaType: "text/plain", Body: strings.NewReader(strings.Repeat(n, 5000))})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "d.warc.gz")
	b, _ := os.ReadFile(path)
	// The last record's gzip member cut short.
	os.WriteFile(path, b[:len(b)-20], 0o644)
	a, err := warc.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if len(a.Skipped) != 1 || !strings.Contains(a.Skipped[0], "d.warc.gz") {
		t.Errorf("skipped %q", a.Skipped)
	}
	for _, n := range []string{"a", "b"} {
		c, ok := a.Nearest("gopher://h/0/"+n, when)
		if !ok {
			t.Errorf("%s: not served", n)
			continue
		}
		p, err := a.Open(c)
		if err != nil {
			t.Errorf("%s: %v", n, err)
			continue
		}
		buf := make([]byte, 6000)
		k, _ := p.Read(buf)
		for k < 5000 {
			m, err := p.Read(buf[k:])
			if err != nil {
				break
			}
			k += m
		}
		p.Close()
		if string(buf[:k]) != strings.Repeat(n, 5000) {
			t.Errorf("%s: %d bytes", n, k)
		}
	}
}

// A CDXJ index given as the collection is read as it is: its lines name
// the WARC files beside it, and a malformed line is passed over.
func TestOpenIndex(t *testing.T) {
	dir := t.TempDir()
	w, err := warc.Create(filepath.Join(dir, "x"), warc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	when := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	w.Write(warc.Record{Type: "resource", URI: "gopher://h/0/a", Date: when, MediaType: "text/plain", Body: strings.NewReader("alpha")})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Create(filepath.Join(dir, "all.cdxj"))
	if err := warc.WriteIndex(f, filepath.Join(dir, "x.warc.gz")); err != nil {
		t.Fatal(err)
	}
	f.WriteString("gopher://(h,)/0/b 20240102030405 {not json\n")
	f.Close()
	a, err := warc.Open(filepath.Join(dir, "all.cdxj"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	c, ok := a.Nearest("gopher://h/0/a", when)
	if !ok {
		t.Fatal("not found")
	}
	p, err := a.Open(c)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	b := make([]byte, 10)
	n, _ := p.Read(b)
	if string(b[:n]) != "alpha" {
		t.Errorf("payload %q", b[:n])
	}
	if len(a.Captures("gopher://h/0/b")) != 0 {
		t.Error("a malformed line read as a capture")
	}
	if len(a.Skipped) != 1 || !strings.Contains(a.Skipped[0], "all.cdxj line 2") {
		t.Errorf("skipped %q", a.Skipped)
	}

	// An index out of order is sorted, and found in.
	lines, _ := os.ReadFile(filepath.Join(dir, "all.cdxj"))
	good := strings.SplitN(string(lines), "\n", 2)[0]
	other := strings.ReplaceAll(good, "/0/a", "/0/0")
	os.WriteFile(filepath.Join(dir, "unsorted.cdxj"), []byte(good+"\n"+other+"\n"), 0o644)
	b2, err := warc.Open(filepath.Join(dir, "unsorted.cdxj"))
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	if len(b2.Captures("gopher://h/0/a")) != 1 || len(b2.Captures("gopher://h/0/0")) != 1 {
		t.Errorf("the unsorted index: %v %v", b2.Captures("gopher://h/0/a"), b2.Captures("gopher://h/0/0"))
	}
	if c, ok := b2.Nearest("gopher://h/0/a", when); ok {
		if p, err := b2.Open(c); err != nil {
			t.Errorf("its payload: %v", err)
		} else {
			p.Close()
		}
	}
}

// A record whose Content-Length says more than its block holds ends
// what is read of its file, named in Skipped; the records before it are
// served. An uncompressed file reads as a compressed one does.
func TestOpenLyingLength(t *testing.T) {
	dir := t.TempDir()
	w, err := warc.Create(filepath.Join(dir, "u"), warc.Options{Uncompressed: true})
	if err != nil {
		t.Fatal(err)
	}
	when := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, n := range []string{"a", "b"} {
		w.Write(warc.Record{Type: "resource", URI: "gopher://h/0/" + n, Date: when, MediaType: "text/plain", Body: strings.NewReader(n + n + n)})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "u.warc")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The last record claims 1,000 bytes more than the file has.
	i := strings.LastIndex(string(b), "Content-Length: 3\r\n")
	if i < 0 {
		t.Fatal("no Content-Length of the last record")
	}
	b = append(b[:i:i], append([]byte("Content-Length: 1003\r\n"), b[i+len("Content-Length: 3\r\n"):]...)...)
	os.WriteFile(path, b, 0o644)
	a, err := warc.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if len(a.Skipped) != 1 {
		t.Errorf("skipped %q", a.Skipped)
	}
	if _, ok := a.Nearest("gopher://h/0/a", when); !ok {
		t.Error("the whole record before it is not served")
	}
	if _, ok := a.Nearest("gopher://h/0/b", when); ok {
		t.Error("the record that lies is served")
	}
}

// A record of 1 GiB is indexed and replayed streaming: the heap stays
// far below the record.
func TestOpenHugeRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 1 GiB WARC file")
	}
	dir := t.TempDir()
	w, err := warc.Create(filepath.Join(dir, "h"), warc.Options{Uncompressed: true, NoDigests: true})
	if err != nil {
		t.Fatal(err)
	}
	const size = 1 << 30
	when := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	w.Write(warc.Record{Type: "resource", URI: "gopher://h/9/huge", Date: when, MediaType: "application/octet-stream", Body: io.LimitReader(zeros{}, size)})
	w.Write(warc.Record{Type: "resource", URI: "gopher://h/0/after", Date: when, MediaType: "text/plain", Body: strings.NewReader("after")})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	a, err := warc.Open(filepath.Join(dir, "h.warc"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	c, ok := a.Nearest("gopher://h/9/huge", when)
	if _, after := a.Nearest("gopher://h/0/after", when); !ok || !after || len(a.Skipped) != 0 {
		t.Fatalf("found %v, the next %v, skipped %q", ok, after, a.Skipped)
	}
	p, err := a.Open(c)
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, p)
	p.Close()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if err != nil || n != size || ms.HeapSys > 256<<20 {
		t.Errorf("%d bytes replayed (%v); the heap reached %d MiB", n, err, ms.HeapSys>>20)
	}
}

// zeros reads as endless zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
