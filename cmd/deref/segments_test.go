package main

import (
	"bytes"
	nethttp "net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/urlderef/deref/internal/testserver/ftpd"
)

// TestSegmentsFlag: --segments N fetches one file over N ranges at once;
// --segment-min leaves smaller files to one connection; standard output
// cannot take ranges.
func TestSegmentsFlag(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 5<<16) // 5 MiB
	var mu sync.Mutex
	var ranges []string
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		if r.Method == nethttp.MethodGet {
			mu.Lock()
			ranges = append(ranges, r.Header.Get("Range"))
			mu.Unlock()
		}
		nethttp.ServeContent(w, r, "data.bin", time.Date(2022, 1, 2, 3, 4, 5, 0, time.UTC), bytes.NewReader(data))
	}))
	defer s.Close()
	dir := t.TempDir()
	out := filepath.Join(dir, "data.bin")
	r := runDeref(t, "", "--segments", "5", "-o", out, s.URL+"/data.bin")
	if b, _ := os.ReadFile(out); r.code != 0 || !bytes.Equal(b, data) {
		t.Fatalf("exit %d, %d bytes: %s", r.code, len(b), r.stderr)
	}
	slices.Sort(ranges)
	if got := strings.Join(ranges, ","); got != ",bytes=1048576-,bytes=2097152-,bytes=3145728-,bytes=4194304-" {
		t.Errorf("ranges %s", got)
	}
	if st, _ := os.Stat(out); !st.ModTime().Equal(time.Date(2022, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Errorf("time %v", st.ModTime())
	}
	ranges = nil
	r = runDeref(t, "", "--segments", "5", "--segment-min", "8M", "-o", out, s.URL+"/data.bin")
	if r.code != 0 || len(ranges) != 1 {
		t.Errorf("below --segment-min: exit %d, ranges %q", r.code, ranges)
	}
	if r := runDeref(t, "", "--segments", "4", s.URL+"/data.bin"); r.code != 1 || !strings.Contains(r.stderr, "--segments") {
		t.Errorf("to standard output: exit %d, %s", r.code, r.stderr)
	}
}

// TestMirrorSegmentsFlag: deref mirror --segments fetches large files in
// ranges; the tree is the server's.
func TestMirrorSegmentsFlag(t *testing.T) {
	root := t.TempDir()
	big := bytes.Repeat([]byte("deref"), 1<<20)
	os.WriteFile(filepath.Join(root, "big.bin"), big, 0o644)
	os.WriteFile(filepath.Join(root, "small.txt"), []byte("small\n"), 0o644)
	s, err := ftpd.Start(root)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dst := t.TempDir()
	r := runDeref(t, "", "mirror", "-v", "--segments", "4", "--segment-min", "1M", s.URL(), dst)
	if b, _ := os.ReadFile(filepath.Join(dst, "big.bin")); r.code != 0 || !bytes.Equal(b, big) {
		t.Fatalf("exit %d, %d bytes: %s", r.code, len(b), r.stderr)
	}
	if des, _ := os.ReadDir(dst); len(des) != 2 {
		t.Errorf("left %v", des)
	}
	if r := runDeref(t, "", "mirror", "--segments", "100", s.URL(), dst); r.code != 1 || !strings.Contains(r.stderr, "--segments") {
		t.Errorf("--segments 100: exit %d, %s", r.code, r.stderr)
	}
}
