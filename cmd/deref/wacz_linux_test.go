package main

import (
	"archive/zip"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch/warc"
)

// noWACZ checks that no WACZ, whole or begun, is in dir.
func noWACZ(t *testing.T, dir string) {
	t.Helper()
	if m, _ := filepath.Glob(filepath.Join(dir, "*.wacz*")); len(m) > 0 {
		t.Errorf("left: %v", m)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, ".*.wacz-*")); len(m) > 0 {
		t.Errorf("left: %v", m)
	}
}

// A crawl with --wacz stopped by a signal writes no WACZ and says so;
// resumed (--state), it packs every WARC file of its series, the first
// run's too, and the WACZ holds every file of the site once.
func TestWACZInterruptedResumed(t *testing.T) {
	bin := buildDeref(t)
	site, files := fullDiskSite(t)
	dir := t.TempDir()
	args := []string{"crawl", "-s", "--limit-rate", "4M", "--wacz", filepath.Join(dir, "site.wacz"), "--state", filepath.Join(dir, "c.state"), site}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NETRC=/nonexistent")
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); time.Since(start) < 20*time.Second; time.Sleep(20 * time.Millisecond) {
		if st, err := os.Stat(filepath.Join(dir, "c.state")); err == nil && st.Size() > 0 {
			break
		}
	}
	time.Sleep(300 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("%v, want exit 130\n%s", err, stderr.String())
	}
	noWACZ(t, dir)
	if !strings.Contains(stderr.String(), "--wacz: "+filepath.Join(dir, "site.wacz")+" not written: the run was interrupted") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	first, _ := filepath.Glob(filepath.Join(dir, "site-*.warc.gz"))
	if len(first) == 0 {
		t.Fatal("the interrupted run left no WARC file")
	}
	if code, stderr := runIn(t, bin, dir, args...); code != 0 {
		t.Fatalf("resumed: exit %d\n%s", code, stderr)
	}
	all, _ := filepath.Glob(filepath.Join(dir, "site-*.warc.gz"))
	if len(all) <= len(first) {
		t.Fatalf("the resumed run wrote no WARC file of its own: %v", all)
	}
	zr, err := zip.OpenReader(filepath.Join(dir, "site.wacz"))
	if err != nil {
		t.Fatal(err)
	}
	packed := 0
	for _, f := range zr.File {
		if strings.HasPrefix(f.Name, "archive/") {
			packed++
		}
	}
	zr.Close()
	if packed != len(all) {
		t.Errorf("%d WARC files packed, the series has %d", packed, len(all))
	}
	a, err := warc.Open(filepath.Join(dir, "site.wacz"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for name := range files {
		if n := len(a.Captures(site + name)); n != 1 {
			t.Errorf("%s: %d captures in the WACZ", name, n)
		}
	}
}

// A disk that fills: while the WARC file is written, or while the WACZ
// is packed: exit 8, said once, no WACZ under its name or begun, and
// the WARC file whole in the second case.
func TestWACZDiskFull(t *testing.T) {
	bin := buildDeref(t)
	t.Run("WARC", func(t *testing.T) {
		site, _ := fullDiskSite(t)
		disk, _ := smallDisk(t, "4m")
		code, stderr := runIn(t, bin, disk, "crawl", "-s", "--wacz", filepath.Join(disk, "w.wacz"), site)
		if code != 8 {
			t.Errorf("exit %d, want 8\n%s", code, stderr)
		}
		noWACZ(t, disk)
	})
	t.Run("WACZ", func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 4))
		body := map[string][]byte{}
		for _, name := range []string{"/a.bin", "/b.bin"} {
			b := make([]byte, 1200<<10) // apart: not one payload, revisited
			for i := range b {
				b[i] = byte(r.Uint32())
			}
			body[name] = b
		}
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			switch req.URL.Path {
			case "/":
				w.Header().Set("Content-Type", "text/html")
				w.Write([]byte(`<a href="a.bin">a</a> <a href="b.bin">b</a>`))
			case "/a.bin", "/b.bin":
				w.Write(body[req.URL.Path])
			default:
				http.NotFound(w, req)
			}
		}))
		defer s.Close()
		disk, _ := smallDisk(t, "4m")
		code, stderr := runIn(t, bin, disk, "crawl", "-s", "--wacz", filepath.Join(disk, "w.wacz"), s.URL+"/")
		if code != 8 {
			t.Errorf("exit %d, want 8\n%s", code, stderr)
		}
		saidOnce(t, "crawl --wacz", stderr, "no space left")
		if !strings.Contains(stderr, "--wacz: ") {
			t.Errorf("stderr: %s", stderr)
		}
		noWACZ(t, disk)
		if code, stderr := runIn(t, bin, disk, "wacz", "create", "-o", filepath.Join(disk, "x.wacz"), filepath.Join(disk, "w.warc.gz")); code != 8 || !strings.Contains(stderr, "no space left") {
			t.Errorf("deref wacz create: exit %d, want 8\n%s", code, stderr)
		}
		noWACZ(t, disk)
		a, err := warc.Open(filepath.Join(disk, "w.warc.gz"))
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		if len(a.Skipped) > 0 || len(a.Captures(s.URL+"/b.bin")) != 1 {
			t.Errorf("the WARC file: skipped %v", a.Skipped)
		}
	})
}
