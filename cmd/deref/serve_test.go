package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/urlderef/deref/internal/testserver/gopherd"
)

// TestServeCommand runs deref serve as a user would: it prints its
// address, serves a menu and a text item through its pages, refuses a
// loopback server without --allow-private, logs each request on standard
// error, and ends on an interrupt with exit code 0.
func TestServeCommand(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("ends the server with an interrupt signal")
	}
	bin := buildDeref(t)
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "about.txt"), []byte("about <this>\n"), 0o644)
	gs := &gopherd.Server{Root: root}
	if err := gs.Start(); err != nil {
		t.Fatal(err)
	}
	defer gs.Close()
	for _, private := range []bool{true, false} {
		args := []string{"serve", "--listen", "127.0.0.1:0"}
		if private {
			args = append(args, "--allow-private")
		}
		cmd := exec.Command(bin, args...)
		stdout, _ := cmd.StdoutPipe()
		var stderr syncBuffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(stdout).ReadString('\n')
		base, ok := strings.CutPrefix(strings.TrimSpace(line), "deref serve: ")
		if err != nil || !ok {
			cmd.Process.Kill()
			t.Fatalf("first line %q: %v", line, err)
		}
		base = strings.TrimSuffix(base, "/")
		for path, want := range map[string]string{"/gopher/" + gs.Addr() + "/1/": "about.txt", "/gopher/" + gs.Addr() + "/0/about.txt": "about &lt;this&gt;"} {
			resp, err := http.Get(base + path)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			switch {
			case private && (resp.StatusCode != 200 || !strings.Contains(string(b), want)):
				t.Errorf("%s: %d %s", path, resp.StatusCode, b)
			case !private && (resp.StatusCode != 403 || !strings.Contains(string(b), "--allow-private")):
				t.Errorf("without --allow-private, %s: %d %s", path, resp.StatusCode, b)
			}
		}
		if err := interrupt(t, cmd); err != nil {
			t.Errorf("exit: %v\n%s", err, stderr.String())
		}
		if n := strings.Count(stderr.String(), `"GET /gopher/`); n != 2 {
			t.Errorf("%d access log lines:\n%s", n, stderr.String())
		}
	}
}

// TestServeArchive: a Gopher hole crawled with deref crawl --warc-file,
// its server then stopped, is browsed with deref serve --archive: the
// collection lists what it holds, the menu renders with its items
// linked to their captures, the text item shows.
func TestServeArchive(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("ends the server with an interrupt signal")
	}
	bin := buildDeref(t)
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "docs"), 0o755)
	os.WriteFile(filepath.Join(root, "docs", "about.txt"), []byte("about <this>\n"), 0o644)
	gs := &gopherd.Server{Root: root}
	if err := gs.Start(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if out, err := exec.Command(bin, "crawl", "-q", "--warc-file", filepath.Join(dir, "hole"), "gopher://"+gs.Addr()+"/1/").CombinedOutput(); err != nil {
		t.Fatalf("crawl: %v\n%s", err, out)
	}
	addr := gs.Addr()
	gs.Close()
	cmd := exec.Command(bin, "serve", "--listen", "127.0.0.1:0", "--archive", filepath.Join(dir, "hole.warc.gz"))
	stdout, _ := cmd.StdoutPipe()
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}()
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	base := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(line), "deref serve: "), "/")
	get := func(path string) (int, string) {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	code, page := get("/hole/")
	if code != 200 || !strings.Contains(page, "gopher://"+addr+"/1/") {
		t.Fatalf("the collection: %d\n%s\n%s", code, page, stderr.String())
	}
	code, page = get("/hole/gopher://" + addr + "/1/") // the TimeGate, followed
	if code != 200 || !strings.Contains(page, "docs") || !strings.Contains(page, "Archived ") {
		t.Fatalf("the menu: %d\n%s", code, page)
	}
	// Its "live" link leads to the live gateway's page of the menu, on
	// the same server (which refuses a loopback server without
	// --allow-private, as the live gateway does).
	if !strings.Contains(page, `class="live" href="/live/gopher/`+addr+`/1/"`) {
		t.Errorf("the live link:\n%s", page)
	}
	if code, live := get("/live/gopher/" + addr + "/1/"); code != 403 || !strings.Contains(live, "--allow-private") {
		t.Errorf("the live gateway at /live/: %d\n%s", code, live)
	}
	code, page = get("/hole/gopher://" + addr + "/0/docs/about.txt")
	if code != 200 || !strings.Contains(page, "about &lt;this&gt;") {
		t.Errorf("the text: %d\n%s", code, page)
	}
}

// TestServeLimits: deref serve's flags set what a client may hold of
// it: a target past --max-url is answered 414, a head past
// --max-header-size 431.
func TestServeLimits(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("ends the server with an interrupt signal")
	}
	bin := buildDeref(t)
	cmd, base, stderr := startServe(t, bin, "", nil, "serve", "--listen", "127.0.0.1:0", "--max-url", "64", "--max-header-size", "2k", "--send-timeout", "5", "--header-timeout", "2")
	if base == "" {
		t.Fatalf("no address\n%s", stderr.String())
	}
	for path, want := range map[string]int{"/": 200, "/" + strings.Repeat("a", 100): 414} {
		resp, err := http.Get(base + strings.TrimPrefix(path, "/"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("%d bytes of path: %d, want %d", len(path), resp.StatusCode, want)
		}
	}
	req, _ := http.NewRequest("GET", base, nil)
	req.Header.Set("X-Big", strings.Repeat("b", 4096))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("a head of 4 KiB: %d", resp.StatusCode)
	}
	if err := interrupt(t, cmd); err != nil {
		t.Errorf("exit: %v\n%s", err, stderr.String())
	}
}

// TestServeSecondSignal: a stop signal lets a response under way go on
// (for up to 5 s), and a second one ends deref serve at once.
func TestServeSecondSignal(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("signals")
	}
	bin := buildDeref(t)
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "big.bin"))
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(256 << 20)
	f.Close()
	cmd, base, stderr := startServe(t, bin, "", nil, "serve", "--listen", "127.0.0.1:0", "--allow-file", dir)
	if base == "" {
		t.Fatalf("no address\n%s", stderr.String())
	}
	c, err := net.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(base, "http://"), "/"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.(*net.TCPConn).SetReadBuffer(4096)
	io.WriteString(c, "GET /file//"+filepath.ToSlash(dir)+"/big.bin?raw=1 HTTP/1.1\r\nHost: x\r\n\r\n")
	c.Read(make([]byte, 1)) // under way, and read no further
	done := make(chan error, 1)
	cmd.Process.Signal(os.Interrupt)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		t.Fatalf("ended at the first signal with a response under way: %v", err)
	case <-time.After(time.Second):
	}
	second := time.Now()
	cmd.Process.Signal(os.Interrupt)
	select {
	case <-done:
		t.Logf("ended %v after the second signal", time.Since(second).Round(time.Millisecond))
	case <-time.After(2 * time.Second):
		t.Fatal("still running 2 s after a second signal")
	}
}

// TestServePortInUse: a port in use is a network failure (exit 6), its
// one line naming the address and the flag that chooses another.
func TestServePortInUse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	r := runDeref(t, "", "serve", "--listen", ln.Addr().String())
	if r.code != 6 || !strings.Contains(r.stderr, ln.Addr().String()) || !strings.Contains(r.stderr, "--listen") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("exit %d, %q", r.code, r.stderr)
	}
}
