package ftp_test

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/protocols/ftp"
	"github.com/urlderef/deref/url"
)

// TestDataDial: every data connection, a listing's, a small file's and a
// large file's, is opened with Request.DataDial, and only that of the
// large file of known size is marked Bulk (read with blocking system
// calls); the control connection is opened with Dial.
func TestDataDial(t *testing.T) {
	addr, d := startServer(t, nil)
	huge := make([]byte, 5<<20)
	if err := os.WriteFile(filepath.Join(d.root, "pub/huge.bin"), huge, 0o644); err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		dials []string
	)
	var plain net.Dialer
	record := func(kind string) protocols.DialFunc {
		return func(ctx context.Context, network, a string) (net.Conn, error) {
			seen := kind
			if kind == "data" && protocols.Bulk(ctx) {
				seen = "bulk"
			}
			mu.Lock()
			dials = append(dials, seen)
			mu.Unlock()
			return plain.DialContext(ctx, network, a)
		}
	}
	f := &ftp.Fetcher{AnonymousPassword: "tester@example.org"}
	for _, c := range []struct {
		path string
		want []string
	}{
		{"/pub/", []string{"control", "data"}},
		{"/pub/README.txt;type=i", []string{"data"}},
		{"/pub/huge.bin;type=i", []string{"bulk"}},
		{"/pub/data.bin;type=i", []string{"data"}}, // a small file after a large one
	} {
		dials = nil
		req := &protocols.Request{URL: url.MustParse("ftp://" + addr + c.path), Dial: record("control"), DataDial: record("data")}
		resp, err := f.Fetch(context.Background(), req)
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		io.Copy(io.Discard, resp.Body)
		if err := resp.Body.Close(); err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		mu.Lock()
		got := dials
		mu.Unlock()
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: dialled %q, want %q", c.path, got, c.want)
		}
	}
}
