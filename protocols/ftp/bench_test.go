package ftp_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	ftpserver "github.com/fclairamb/ftpserverlib"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/url"
)

// BenchmarkRetr streams files of growing size from an in-process FTP
// server, to nowhere and into a file: allocations and bytes per operation
// stay the same at every size.
func BenchmarkRetr(b *testing.B) {
	root := b.TempDir()
	sizes := []int64{1 << 20, 64 << 20, 512 << 20}
	for _, n := range sizes {
		f, err := os.Create(filepath.Join(root, fmt.Sprintf("f%d.bin", n)))
		if err != nil {
			b.Fatal(err)
		}
		f.Truncate(n)
		f.Close()
	}
	d := &driver{root: root, settings: &ftpserver.Settings{ListenAddr: "127.0.0.1:0", DefaultTransferType: ftpserver.TransferTypeBinary}}
	s := ftpserver.NewFtpServer(d)
	if err := s.Listen(); err != nil {
		b.Fatal(err)
	}
	go s.Serve()
	defer s.Stop()
	c := fetch.NewClient()
	c.NetrcFile = ""
	c.Proxy = func(*url.URL) (*url.URL, error) { return nil, nil }
	out := b.TempDir()
	if _, err := c.Download(context.Background(), fmt.Sprintf("ftp://%s/f%d.bin", s.Addr(), sizes[0]), out); err != nil {
		b.Fatal(err) // warm up: the pool and one-time set-up are not per-object cost
	}
	for _, n := range sizes {
		u := fmt.Sprintf("ftp://%s/f%d.bin", s.Addr(), n)
		b.Run(fmt.Sprintf("discard/%dMiB", n>>20), func(b *testing.B) {
			b.SetBytes(n)
			b.ReportAllocs()
			for b.Loop() {
				resp, err := c.Get(context.Background(), u)
				if err != nil {
					b.Fatal(err)
				}
				if got, err := io.Copy(struct{ io.Writer }{io.Discard}, resp.Body); err != nil || got != n {
					b.Fatalf("%d bytes, %v", got, err)
				}
				resp.Body.Close()
			}
		})
		b.Run(fmt.Sprintf("file/%dMiB", n>>20), func(b *testing.B) {
			b.SetBytes(n)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Download(context.Background(), u, out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
