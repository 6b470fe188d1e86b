package gopher_test

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkBinaryItem streams binary items of growing size from a loopback
// server, to nowhere and into a file: allocations and bytes per operation
// stay the same at every size.
func BenchmarkBinaryItem(b *testing.B) {
	zeros := make([]byte, 1<<20)
	s := start(b, func(req string, w io.Writer) {
		n, _ := strconv.ParseInt(strings.TrimPrefix(req, "/"), 10, 64)
		for n > 0 {
			k := min(n, int64(len(zeros)))
			if _, err := w.Write(zeros[:k]); err != nil {
				return
			}
			n -= k
		}
	})
	c := client()
	out := b.TempDir()
	for _, size := range []int64{1 << 20, 64 << 20, 512 << 20} {
		u := fmt.Sprintf("gopher://%s/9/%d", s.addr(), size)
		b.Run(fmt.Sprintf("discard/%dMiB", size>>20), func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				resp, err := c.Get(context.Background(), u)
				if err != nil {
					b.Fatal(err)
				}
				if n, err := io.Copy(struct{ io.Writer }{io.Discard}, resp.Body); err != nil || n != size {
					b.Fatalf("%d bytes, %v", n, err)
				}
				resp.Body.Close()
			}
		})
		b.Run(fmt.Sprintf("file/%dMiB", size>>20), func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Download(context.Background(), u, out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
