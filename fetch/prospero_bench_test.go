package fetch_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urlderef/deref/internal/testserver/prosperod"
	"github.com/urlderef/deref/url"
)

// BenchmarkProsperoExchanges counts what a retrieval costs on the wire:
// requests sent (exchanges) and datagrams the server read, for a small
// file and for a listing of 150 entries.
func BenchmarkProsperoExchanges(b *testing.B) {
	s := &prosperod.Server{}
	if err := s.Start(); err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for _, bc := range []struct{ name, path string }{{"file", "/AFTP/pub/hello.txt"}, {"listing", "/AFTP/pub/many"}, {"file-30000", "/AFTP/pub/big.txt"}} {
		b.Run(bc.name, func(b *testing.B) {
			c := newClient()
			u := url.MustParse("prospero://" + s.Addr() + bc.path)
			reqs, dgrams := len(s.Requests()), s.Received()
			for b.Loop() {
				resp, err := c.Fetch(context.Background(), u, 0)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			b.ReportMetric(float64(len(s.Requests())-reqs)/float64(b.N), "exchanges/op")
			b.ReportMetric(float64(s.Received()-dgrams)/float64(b.N), "datagrams/op")
		})
	}
}

// BenchmarkProsperoMiB fetches a 1 MiB file in-band (PROSPERO-CONTENTS,
// with the window of 64 packets deref asks for and with the server's 16)
// and through its AFTP access method (an FTP server on loopback serving
// the same area): "default" is the way the Fetcher chooses, AFTP for a
// file over its InBandMax.
func BenchmarkProsperoMiB(b *testing.B) {
	root := b.TempDir()
	content := strings.Repeat("a line of the mebibyte, with a ' in it\n", (1<<20)/39+1)[:1<<20]
	os.MkdirAll(filepath.Join(root, "pub"), 0o755)
	os.WriteFile(filepath.Join(root, "pub", "mib.txt"), []byte(content), 0o644)
	f := serveFTP(b, root)
	_, port, _ := strings.Cut(f.Addr(), ":")
	s := &prosperod.Server{Files: map[string]string{"ftp/pub/mib.txt": content}, AFTPHost: "127.0.0.1(" + port + ")"}
	if err := s.Start(); err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	u := url.MustParse("prospero://" + s.Addr() + "/AFTP/pub/mib.txt")
	for _, bc := range []struct {
		name   string
		max    int64
		window int
	}{{"in-band", 2 << 20, 0}, {"in-band-window-16", 2 << 20, -1}, {"default", 0, 0}} {
		b.Run(bc.name, func(b *testing.B) {
			c := newClient()
			c.Prospero.InBandMax, c.Prospero.Window = bc.max, bc.window
			b.SetBytes(1 << 20)
			for b.Loop() {
				resp, err := c.Fetch(context.Background(), u, 0)
				if err != nil {
					b.Fatal(err)
				}
				n, err := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err != nil || n != 1<<20 {
					b.Fatal(n, err)
				}
			}
		})
	}
}
