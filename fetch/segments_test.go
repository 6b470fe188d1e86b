package fetch_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	nethttp "net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch"
)

func randomBytes(n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// rangeServer serves data at /data with HTTP ranges of the form
// "bytes=N-", sending at most limit() bytes of each answer before it
// drops the connection (0: all); it records each request's start.
type rangeServer struct {
	*httptest.Server
	mu     sync.Mutex
	starts []int64
	heads  int
	limit  atomic.Int64
	ranges bool
}

func newRangeServer(t *testing.T, data []byte, ranges bool) *rangeServer {
	rs := &rangeServer{ranges: ranges}
	when := time.Date(2022, 1, 2, 3, 4, 5, 0, time.UTC)
	rs.Server = httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		w.Header().Set("Last-Modified", when.Format(nethttp.TimeFormat))
		if r.Method == nethttp.MethodHead {
			rs.mu.Lock()
			rs.heads++
			rs.mu.Unlock()
			w.Header().Set("Content-Length", strconv.Itoa(len(data)))
			return
		}
		var start int64
		if h := r.Header.Get("Range"); h != "" && rs.ranges {
			start, _ = strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(h, "bytes="), "-"), 10, 64)
		}
		rs.mu.Lock()
		rs.starts = append(rs.starts, start)
		rs.mu.Unlock()
		body := data[start:]
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		if start > 0 {
			w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, len(data)-1, len(data)))
			w.WriteHeader(nethttp.StatusPartialContent)
		}
		if l := rs.limit.Load(); l > 0 && int64(len(body)) > l {
			body = body[:l] // then the handler returns: the connection is dropped short
		}
		w.Write(body)
	}))
	t.Cleanup(rs.Close)
	return rs
}

func (rs *rangeServer) seen() []int64 {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	out := slices.Clone(rs.starts)
	slices.Sort(out)
	return out
}

// onlyFile checks that the file p holds data and is all dir holds.
func onlyFile(t *testing.T, dir, p string, data []byte) {
	t.Helper()
	if b, _ := os.ReadFile(p); !bytes.Equal(b, data) {
		t.Errorf("%d bytes differ from the %d served", len(b), len(data))
	}
	if des, _ := os.ReadDir(dir); len(des) != 1 {
		t.Errorf("left %v", des)
	}
}

// Segments split the object into equal ranges fetched at once, over HTTP
// and FTP; the file is the object and nothing else is left.
func TestSegments(t *testing.T) {
	data := randomBytes(6<<20 + 12345)
	rs := newRangeServer(t, data, true)
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "data.bin"), data, 0o644)
	fs := serveFTP(t, root)
	c := newClient()
	var last fetch.Progress
	for _, src := range []string{rs.URL + "/data", fs.URL() + "data.bin"} {
		dir := t.TempDir()
		p, err := c.DownloadWith(context.Background(), src, dir, fetch.DownloadOptions{Name: "out", Segments: 4, Progress: func(p fetch.Progress) { last = p }})
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if b, _ := os.ReadFile(p); !bytes.Equal(b, data) {
			t.Errorf("%s: %d bytes differ from the %d served", src, len(b), len(data))
		}
		if des, _ := os.ReadDir(dir); len(des) != 1 {
			t.Errorf("%s: left %v", src, des)
		}
		if !last.Done || last.Bytes != int64(len(data)) {
			t.Errorf("%s: last progress %+v", src, last)
		}
	}
	n := int64(len(data))
	if got, want := rs.seen(), []int64{0, n / 4, n / 2, 3 * n / 4}; !slices.Equal(got, want) {
		t.Errorf("HTTP ranges asked from %v, want %v", got, want)
	}
}

// A server that ignores ranges gets one connection, from the start.
func TestSegmentsNoResume(t *testing.T) {
	data := randomBytes(3 << 20)
	rs := newRangeServer(t, data, false)
	dir := t.TempDir()
	p, err := newClient().DownloadWith(context.Background(), rs.URL+"/data", dir, fetch.DownloadOptions{Segments: 3})
	if err != nil {
		t.Fatal(err)
	}
	onlyFile(t, dir, p, data)
	// Every answer came from 0: the segments that asked before the first
	// found out, and then the one connection.
	if got := rs.seen(); len(got) < 2 || len(got) > 4 || slices.Max(got) != 0 {
		t.Errorf("requests from %v", got)
	}
}

// An interrupted segmented download leaves NAME.part and its state; the
// next attempt continues every segment where it stopped.
func TestSegmentsResume(t *testing.T) {
	data := randomBytes(4 << 20)
	rs := newRangeServer(t, data, true)
	rs.limit.Store(300 << 10)
	dir := t.TempDir()
	c := newClient()
	_, err := c.DownloadWith(context.Background(), rs.URL+"/data", dir, fetch.DownloadOptions{Name: "out", Segments: 4})
	if !errors.Is(err, fetch.ErrShortBody) {
		t.Fatalf("first attempt: %v", err)
	}
	state, err := os.ReadFile(filepath.Join(dir, "out"+fetch.SegmentsSuffix))
	if err != nil || !bytes.HasPrefix(state, []byte("deref segments 1\nsize 4194304\n")) {
		t.Fatalf("state %q %v", state, err)
	}
	first := len(rs.seen())
	rs.limit.Store(0)
	p, err := c.DownloadWith(context.Background(), rs.URL+"/data", dir, fetch.DownloadOptions{Name: "out", Segments: 4, ResumePart: true})
	if err != nil {
		t.Fatal(err)
	}
	onlyFile(t, dir, p, data)
	rs.mu.Lock()
	again := slices.Clone(rs.starts[first:])
	rs.mu.Unlock()
	for _, s := range again {
		if s%(1<<20) == 0 {
			t.Errorf("a segment started over at %d: %v", s, again)
		}
	}
	if len(again) != 4 {
		t.Errorf("second attempt asked from %v", again)
	}
}

// A segmented download's digest is checked before it takes its name.
func TestSegmentsChecksum(t *testing.T) {
	data := randomBytes(3 << 20)
	rs := newRangeServer(t, data, true)
	sum := sha256.Sum256(data)
	dir := t.TempDir()
	c := newClient()
	if _, err := c.DownloadWith(context.Background(), rs.URL+"/data", dir, fetch.DownloadOptions{Name: "ok", Segments: 3, Checksum: &fetch.Checksum{Algorithm: "sha256", Sum: sum[:]}}); err != nil {
		t.Fatal(err)
	}
	sum[0]++
	_, err := c.DownloadWith(context.Background(), rs.URL+"/data", dir, fetch.DownloadOptions{Name: "bad", Segments: 3, Checksum: &fetch.Checksum{Algorithm: "sha256", Sum: sum[:]}})
	if !errors.Is(err, fetch.ErrChecksum) {
		t.Fatalf("%v", err)
	}
	if des, _ := os.ReadDir(dir); len(des) != 1 || des[0].Name() != "ok" {
		t.Errorf("left %v", des)
	}
}

// countingRecorder counts what a recorder is given.
type countingRecorder struct {
	mu        sync.Mutex
	records   int
	bytes     int64
	offsetOne bool
}

func (r *countingRecorder) Record(_ context.Context, rt fetch.Retrieval) io.WriteCloser {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.records++
	if rt.Response.Offset > 0 {
		r.offsetOne = true
	}
	return r
}

func (r *countingRecorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.bytes += int64(len(p))
	return len(p), nil
}

func (r *countingRecorder) Close() error { return nil }

// With a recorder, a download asked for in segments comes over one
// connection: the archive gets the object whole, as one response.
func TestSegmentsWithRecorder(t *testing.T) {
	data := randomBytes(6 << 20)
	rs := newRangeServer(t, data, true)
	c := newClient()
	rec := &countingRecorder{}
	c.Recorder = rec
	dir := t.TempDir()
	p, err := c.DownloadWith(context.Background(), rs.URL+"/data", dir, fetch.DownloadOptions{Segments: 4})
	if err != nil {
		t.Fatal(err)
	}
	onlyFile(t, dir, p, data)
	if rec.records != 1 || rec.bytes != int64(len(data)) || rec.offsetOne || !slices.Equal(rs.seen(), []int64{0}) {
		t.Errorf("%d records of %d bytes (a range: %v); ranges asked %v", rec.records, rec.bytes, rec.offsetOne, rs.seen())
	}
}
