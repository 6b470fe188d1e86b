package nntp_test

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/protocols/nntp"
	"github.com/urlderef/deref/url"
)

// BenchmarkGroup reads the 1,000 articles of a group (2 KiB each): over
// one connection with the commands pipelined, over one connection one
// command at a time, and with a connection per article.
func BenchmarkGroup(b *testing.B) {
	s := groupServer(b, 1000, 2048)
	ctx := context.Background()
	var specs []string
	for i := 1; i <= 1000; i++ {
		specs = append(specs, fmt.Sprint(i))
	}
	session := func(b *testing.B, window int) {
		for b.Loop() {
			sess, err := (&nntp.Fetcher{}).Open(ctx, &protocols.Request{URL: url.MustParse("nntp://" + s.Addr() + "/bench.test")})
			if err != nil {
				b.Fatal(err)
			}
			if _, _, _, err := sess.Group(ctx, "bench.test"); err != nil {
				b.Fatal(err)
			}
			n := 0
			err = sess.Articles(ctx, specs, window, func(_ string, r io.Reader, err error) error {
				if err != nil {
					return err
				}
				k, err := io.Copy(io.Discard, r)
				n += int(k)
				return err
			})
			if err != nil {
				b.Fatal(err)
			}
			sess.Close()
		}
	}
	b.Run("pipelined", func(b *testing.B) { session(b, 32) })
	b.Run("one-connection", func(b *testing.B) { session(b, 1) })
	b.Run("connection-per-article", func(b *testing.B) {
		f := &nntp.Fetcher{MaxIdle: -1}
		for b.Loop() {
			for _, n := range specs {
				r, err := f.Fetch(ctx, &protocols.Request{URL: url.MustParse("nntp://" + s.Addr() + "/bench.test/" + n)})
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, r.Body)
				r.Body.Close()
			}
		}
	})
}

// BenchmarkArticleSize fetches one article of 64 KiB, 4 MiB and 64 MiB:
// bytes and allocations per operation stay the same as articles grow.
func BenchmarkArticleSize(b *testing.B) {
	ctx := context.Background()
	buf := make([]byte, 32<<10)
	for _, size := range []int{64 << 10, 4 << 20, 64 << 20} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			s := groupServer(b, 1, size)
			f := &nntp.Fetcher{}
			u := url.MustParse("nntp://" + s.Addr() + "/bench.test/1")
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				r, err := f.Fetch(ctx, &protocols.Request{URL: u})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{r.Body}, buf); err != nil {
					b.Fatal(err)
				}
				r.Body.Close()
			}
		})
	}
}
