//go:build interop

package interop

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/urlderef/deref/internal/testserver"
)

// loggedHole is a Gopher hole of 501 items (a root menu, 20 menus of 24
// text items each) that logs every connection with its selector, start
// and end.
type loggedHole struct {
	ln  net.Listener
	mu  sync.Mutex
	log []connection
}

type connection struct {
	sel        string
	start, end time.Time
}

const sharedMenus, sharedItems = 20, 24

func startLoggedHole(t *testing.T) *loggedHole {
	h := &loggedHole{}
	if err := testserver.ListenInto(&h.ln, h.serve); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.ln.Close() })
	return h
}

func (h *loggedHole) serve(c net.Conn) {
	start := time.Now()
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Minute))
	line, err := bufio.NewReader(c).ReadString('\n')
	sel := strings.TrimRight(line, "\r\n")
	defer func() {
		h.mu.Lock()
		h.log = append(h.log, connection{sel, start, time.Now()})
		h.mu.Unlock()
	}()
	if err != nil {
		return
	}
	host, port, _ := net.SplitHostPort(c.LocalAddr().String())
	item := func(t byte, s string) string { return fmt.Sprintf("%c%s\t%s\t%s\t%s\r\n", t, s, s, host, port) }
	var b strings.Builder
	m := -1
	if n, _ := fmt.Sscanf(sel, "/m/%d", &m); n != 1 || sel != fmt.Sprintf("/m/%d", m) || m >= sharedMenus {
		m = -1
	}
	switch {
	case sel == "":
		for i := range sharedMenus {
			b.WriteString(item('1', fmt.Sprintf("/m/%d", i)))
		}
	case strings.Contains(sel, "/t/"):
		b.WriteString("the text of " + sel + "\r\n")
	case m >= 0:
		for k := range sharedItems {
			b.WriteString(item('0', fmt.Sprintf("/m/%d/t/%d", m, k)))
		}
		b.WriteString(item('1', fmt.Sprintf("/m/%d", (m+1)%sharedMenus)) + item('1', ""))
	default:
		b.WriteString("3not here\t\terror.host\t1\r\n")
	}
	b.WriteString(".\r\n")
	time.Sleep(time.Millisecond)
	c.Write([]byte(b.String()))
}

// want is every selector of the hole.
func (h *loggedHole) want() []string {
	out := []string{""}
	for m := range sharedMenus {
		out = append(out, fmt.Sprintf("/m/%d", m))
		for k := range sharedItems {
			out = append(out, fmt.Sprintf("/m/%d/t/%d", m, k))
		}
	}
	return out
}

func (h *loggedHole) connections() []connection {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]connection(nil), h.log...)
}

// TestSharedCrawlWorkers: three deref crawl processes share a frontier in
// Debian's redis-server on a 501-item Gopher hole with --per-host 1 and
// --wait 0.02; one is SIGKILLed part way and a fourth joins late; the one
// killed, started again under its name, cuts what the store never
// acknowledged. The hole's log never shows two connections at once, nor
// a start within --wait of the last end; the WARC files of all the
// workers, read by warcio.js, hold every item, twice only the one under
// way at the kill; deref index merges their indexes into one.
func TestSharedCrawlWorkers(t *testing.T) {
	store := env(t, "DEREF_INTEROP_REDIS") + fmt.Sprintf("/0?prefix=interop-%d", time.Now().UnixNano())
	bin := filepath.Join(t.TempDir(), "deref")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/deref").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	h := startLoggedHole(t)
	dir := t.TempDir()
	start := "gopher://" + h.ln.Addr().String() + "/1"
	const wait = 20 * time.Millisecond
	worker := func(name string) *exec.Cmd {
		cmd := exec.Command(bin, "crawl", "-s", "--state", store, "--worker", name, "--per-host", "1", "--wait", "0.02", "--lease", "2",
			"--parallel", "2", "--warc-file", filepath.Join(dir, "hole"), "--warc-cdx", start)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	waitFor := func(n int) {
		for deadline := time.Now().Add(2 * time.Minute); len(h.connections()) < n; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d connections in two minutes, waiting for %d", len(h.connections()), n)
			}
		}
	}
	w1, w2, w3 := worker("w1"), worker("w2"), worker("w3")
	waitFor(120)
	w2.Process.Signal(syscall.SIGKILL)
	w2.Wait()
	killed := time.Now()
	waitFor(300)
	w4 := worker("w4")
	for _, w := range []*exec.Cmd{w1, w3, w4} {
		if err := w.Wait(); err != nil {
			t.Fatalf("a worker: %v", err)
		}
	}
	if err := worker("w2").Wait(); err != nil { // its records mended; nothing left to fetch
		t.Fatalf("w2 again: %v", err)
	}

	log := h.connections()
	sort.Slice(log, func(i, j int) bool { return log[i].start.Before(log[j].start) })
	inFlight := map[string]bool{} // the connections open, or last begun, at the kill
	for i, c := range log {
		if c.start.Before(killed) && (c.end.After(killed.Add(-50*time.Millisecond)) || i+1 < len(log) && log[i+1].start.After(killed)) {
			inFlight[c.sel] = true
		}
		if i == 0 {
			continue
		}
		prev := log[i-1]
		if c.start.Before(prev.end) {
			t.Errorf("%q began %v before %q ended: two connections at once with --per-host 1", c.sel, prev.end.Sub(c.start), prev.sel)
		} else if gap := c.start.Sub(prev.end); gap < wait-2*time.Millisecond {
			t.Errorf("%q began %v after %q ended, within --wait %v", c.sel, gap, prev.sel, wait)
		}
	}
	asked := map[string]int{}
	for _, c := range log {
		asked[c.sel]++
	}
	for _, sel := range h.want() {
		if asked[sel] == 0 {
			t.Errorf("%q never asked for", sel)
		} else if asked[sel] > 1 && !inFlight[sel] {
			t.Errorf("%q asked for %d times, not under way at the kill (%v)", sel, asked[sel], inFlight)
		}
	}
	if asked["robots.txt"] != 1 {
		t.Errorf("robots.txt asked for %d times, want once for the crawl", asked["robots.txt"])
	}

	files, _ := filepath.Glob(filepath.Join(dir, "hole-*.warc.gz"))
	if open, _ := filepath.Glob(filepath.Join(dir, "*.open")); len(open) > 0 {
		t.Errorf("files left unfinished: %v", open)
	}
	uris := map[string]int{}
	for _, r := range readWithWarcio(t, files...) {
		if r.Type == "resource" {
			uris[r.URI]++
		}
	}
	prefix := "gopher://" + h.ln.Addr().String() + "/"
	for _, sel := range h.want() {
		typ := "1"
		if strings.Contains(sel, "/t/") {
			typ = "0"
		}
		switch n := uris[prefix+typ+sel]; {
		case n == 0:
			t.Errorf("%s in no WARC file", prefix+typ+sel)
		case n > 1 && !inFlight[sel]:
			t.Errorf("%s in the WARC files %d times, not under way at the kill", prefix+typ+sel, n)
		}
	}
	out, err := exec.Command(bin, append([]string{"index"}, files...)...).Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if !sort.StringsAreSorted(lines) || len(lines) < len(h.want()) {
		t.Errorf("deref index of the %d files: %d lines, sorted %v", len(files), len(lines), sort.StringsAreSorted(lines))
	}
	status, err := exec.Command(bin, "crawl", "--state", store, "--status").Output()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d connections; in flight at the kill %v; %d WARC files\n%s", len(log), inFlight, len(files), status)
}

// TestSharedMirrorVsftpd: three deref mirror processes share a mirror of
// vsftpd's pub folder through redis-server, each into a folder of its
// own: each file is in exactly one of them, and together they equal the
// tree, byte for byte.
func TestSharedMirrorVsftpd(t *testing.T) {
	store := env(t, "DEREF_INTEROP_REDIS") + fmt.Sprintf("/0?prefix=interop-mirror-%d", time.Now().UnixNano())
	bin := filepath.Join(t.TempDir(), "deref")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/deref").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	src := mirrorSources(t)["vsftpd"]
	var dsts []string
	var cmds []*exec.Cmd
	for i := range 3 {
		dst := filepath.Join(t.TempDir(), "part")
		dsts = append(dsts, dst)
		cmd := exec.Command(bin, "mirror", "-s", "--no-netrc", "--state", store, "--worker", fmt.Sprint("m", i), "--limit-rate", "4M", src, dst)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("a worker: %v", err)
		}
	}
	all := t.TempDir()
	where := map[string]int{}
	for i, d := range dsts {
		filepath.WalkDir(d, func(p string, de os.DirEntry, err error) error {
			if err != nil || de.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(d, p)
			if j, ok := where[rel]; ok {
				t.Errorf("%s mirrored by workers %d and %d", rel, j, i)
			}
			where[rel] = i
			os.MkdirAll(filepath.Join(all, filepath.Dir(rel)), 0o755)
			return os.Rename(p, filepath.Join(all, rel))
		})
	}
	compareTree(t, all, filepath.Join(env(t, "DEREF_INTEROP_TREE"), "pub"), false)
	t.Logf("files by worker: %v", where)
}
