package fetch_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urlderef/deref/fetch/mirror"
	"github.com/urlderef/deref/internal/testserver/geminid"
)

// capsule serves a folder of n small pages.
func capsule(b *testing.B, n int) *geminid.Server {
	pages := map[string]string{}
	var index strings.Builder
	index.WriteString("20 text/gemini\r\n# Pages\n")
	for i := range n {
		fmt.Fprintf(&index, "=> p%04d.txt page %d\n", i, i)
		pages[fmt.Sprintf("/p/p%04d.txt", i)] = fmt.Sprintf("20 text/plain\r\npage %d\n", i)
	}
	pages["/p/"] = index.String()
	s := &geminid.Server{Pages: pages}
	if err := s.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkGeminiMirror mirrors a capsule of 2,000 pages: full TLS
// handshakes a page (sessions resumed after the first), pages a second;
// "floor" is the least a Go program does for the same pages (TLS with
// session resumption, one request each, in turn).
func BenchmarkGeminiMirror(b *testing.B) {
	const n = 2000
	s := capsule(b, n)
	b.Run("deref", func(b *testing.B) {
		for b.Loop() {
			c := newClient()
			c.Gemini.KnownHosts = filepath.Join(b.TempDir(), "known_hosts")
			rep, err := mirror.Run(context.Background(), c, "gemini://"+s.Addr()+"/p/", b.TempDir(), mirror.Options{})
			if err != nil || rep.New != n {
				b.Fatal(err, rep.New)
			}
			full, _ := c.Gemini.Handshakes()
			b.ReportMetric(float64(full-1)/n, "full-handshakes/page")
		}
		b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "pages/s")
	})
	b.Run("floor", func(b *testing.B) {
		for b.Loop() {
			cfg := &tls.Config{InsecureSkipVerify: true, ClientSessionCache: tls.NewLRUClientSessionCache(16)}
			get := func(u string) {
				c, err := tls.Dial("tcp", s.Addr(), cfg)
				if err != nil {
					b.Fatal(err)
				}
				io.WriteString(c, u+"\r\n")
				io.Copy(io.Discard, bufio.NewReader(c))
				c.Close()
			}
			get("gemini://" + s.Addr() + "/p/")
			for i := range n {
				get(fmt.Sprintf("gemini://%s/p/p%04d.txt", s.Addr(), i))
			}
		}
		b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "pages/s")
	})
}
