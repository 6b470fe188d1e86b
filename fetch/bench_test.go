package fetch_test

import (
	"context"
	"fmt"
	"io"
	nethttp "net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch"
)

// zeros is an io.ReadSeeker of n bytes that holds no memory of its own, so
// the server side stays flat too.
type zeros struct{ off, n int64 }

func (z *zeros) Read(p []byte) (int, error) {
	if z.off >= z.n {
		return 0, io.EOF
	}
	k := min(int64(len(p)), z.n-z.off)
	clear(p[:k])
	z.off += k
	return int(k), nil
}

func (z *zeros) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
		z.off = off
	case io.SeekCurrent:
		z.off += off
	case io.SeekEnd:
		z.off = z.n + off
	}
	return z.off, nil
}

var benchSizes = []int64{1 << 20, 64 << 20, 1 << 30}

// zerosServer serves /N as N zero bytes, with ranges, until the benchmark
// ends.
func zerosServer(b *testing.B) *httptest.Server {
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		var n int64
		fmt.Sscanf(r.URL.Path, "/%d", &n)
		nethttp.ServeContent(w, r, "x.bin", time.Time{}, &zeros{n: n})
	}))
	b.Cleanup(s.Close)
	return s
}

// BenchmarkStreamHTTP streams objects of growing size over loopback HTTP,
// to nowhere and into a file. Allocations and bytes per operation stay the
// same at every size: nothing holds the object in memory.
func BenchmarkStreamHTTP(b *testing.B) {
	s := zerosServer(b)
	c := newClient()
	if _, err := c.Download(context.Background(), s.URL+"/1", b.TempDir()); err != nil { // warm up: one-time set-up is not per-object cost
		b.Fatal(err)
	}
	for _, size := range benchSizes {
		u := fmt.Sprintf("%s/%d", s.URL, size)
		b.Run(fmt.Sprintf("discard/%dMiB", size>>20), func(b *testing.B) { benchDiscard(b, c, u, size) })
		b.Run(fmt.Sprintf("file/%dMiB", size>>20), func(b *testing.B) {
			dir := b.TempDir()
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Download(context.Background(), u, dir); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSegments downloads objects of growing size over loopback HTTP
// in 4 segments: bytes and allocations per operation stay the same at
// every size (each segment holds one buffer, never the object).
func BenchmarkSegments(b *testing.B) {
	s := zerosServer(b)
	c := newClient()
	for _, size := range []int64{16 << 20, 64 << 20, 256 << 20} {
		u := fmt.Sprintf("%s/%d", s.URL, size)
		b.Run(fmt.Sprintf("%dMiB", size>>20), func(b *testing.B) {
			dir := b.TempDir()
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.DownloadWith(context.Background(), u, dir, fetch.DownloadOptions{Segments: 4}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStreamFile does the same for file: URLs.
func BenchmarkStreamFile(b *testing.B) {
	dir := b.TempDir()
	c := newClient()
	for _, size := range benchSizes {
		name := filepath.Join(dir, fmt.Sprintf("src-%d", size))
		f, err := os.Create(name)
		if err != nil {
			b.Fatal(err)
		}
		f.Truncate(size)
		f.Close()
		b.Run(fmt.Sprintf("discard/%dMiB", size>>20), func(b *testing.B) { benchDiscard(b, c, fileURL(name), size) })
		b.Run(fmt.Sprintf("file/%dMiB", size>>20), func(b *testing.B) {
			out := b.TempDir()
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Download(context.Background(), fileURL(name), out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchDiscard fetches u and reads it to the end, size bytes, per op.
func benchDiscard(b *testing.B, c *fetch.Client, u string, size int64) {
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		resp, err := c.Get(context.Background(), u)
		if err != nil {
			b.Fatal(err)
		}
		if n, err := io.Copy(discardWriter{}, resp.Body); err != nil || n != size {
			b.Fatalf("copied %d, %v", n, err)
		}
		resp.Body.Close()
	}
}

type discardWriter struct{}

func (discardWriter) Write(p []byte) (int, error) { return len(p), nil }
