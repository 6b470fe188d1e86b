//go:build interop

package interop

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// holeMenus is the size of the generated hole: each menu lists nine
// items of its own besides links, so 500 menus make 5,002 URLs.
const holeMenus = 500

// writeHole writes a Gopher hole of gophermaps into the tree gophernicus
// serves, at /hole/, and a robots.txt at its root: menus linking each
// other in cycles, an item every menu lists, links to other hosts, and a
// folder robots.txt excludes. It returns every URL the crawl must fetch
// and the one it must not; the hole is removed when the test ends.
func writeHole(t *testing.T, base string) (want map[string]bool, excluded string) {
	root := env(t, "DEREF_INTEROP_TREE")
	host, port, _ := strings.Cut(strings.TrimPrefix(base, "gopher://"), ":")
	hole := filepath.Join(root, "hole")
	t.Cleanup(func() {
		os.RemoveAll(hole)
		os.Remove(filepath.Join(root, "robots.txt"))
	})
	write := func(rel, content string) {
		p := filepath.Join(hole, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "robots.txt"), []byte("User-agent: *\nDisallow: /hole/private/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want = map[string]bool{}
	item := func(kind byte, name, sel string) string {
		if kind == '1' {
			want[base+"/1"+sel] = true
		} else {
			want[base+"/0"+sel] = true
		}
		return fmt.Sprintf("%c%s\t%s\t%s\t%s\n", kind, name, sel, host, port)
	}
	menu := func(i int) string { return fmt.Sprintf("/hole/m%03d/", i) }
	write("gophermap", "iA generated hole\n"+item('1', "The first menu", menu(0))+item('0', "Shared", "/hole/shared.txt")+
		fmt.Sprintf("0Private\t/hole/private/secret.txt\t%s\t%s\n", host, port))
	write("shared.txt", "every menu lists this\n")
	write("private/secret.txt", "robots.txt keeps this\n")
	for i := range holeMenus {
		var m strings.Builder
		m.WriteString(fmt.Sprintf("iMenu %d\n", i))
		for k := range 9 {
			sel := fmt.Sprintf("%sf%d.txt", menu(i), k)
			m.WriteString(item('0', fmt.Sprintf("File %d", k), sel))
			write(strings.TrimPrefix(sel, "/hole/"), fmt.Sprintf("item %d of menu %d\n", k, i))
		}
		for _, j := range []int{(i + 1) % holeMenus, (i*7 + 3) % holeMenus, (i*13 + 5) % holeMenus} {
			m.WriteString(item('1', fmt.Sprintf("Menu %d", j), menu(j)))
		}
		m.WriteString(item('1', "Top", "/hole/"))
		m.WriteString(item('0', "Shared", "/hole/shared.txt"))
		m.WriteString("1Elsewhere\t/\tgopher.example.invalid\t70\n")
		m.WriteString(fmt.Sprintf("1Another server\t/\t%s\t%d\n", host, 1))
		write(strings.TrimPrefix(menu(i), "/hole/")+"gophermap", m.String())
	}
	return want, base + "/0/hole/private/secret.txt"
}

// TestCrawlHole crawls a generated hole of 5,002 URLs on gophernicus
// with deref crawl --state, killed (SIGKILL) at a random point and run
// again: every URL in scope is in the WARC files of the two runs exactly
// once (as warcio.js reads them), what robots.txt (gophernicus serves it
// at the selector robots.txt) excludes is not fetched, the two runs
// fetched each URL once but for those under way at the kill, and the
// resumed run ends with the set a crawl never killed ends with.
func TestCrawlHole(t *testing.T) {
	base := gopherServers(t)["gophernicus"]
	want, excluded := writeHole(t, base)
	bin := filepath.Join(t.TempDir(), "deref")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/deref").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	type report struct{ Fetched, Failed, Excluded, Resumed int }
	crawl := func(dir string) (*exec.Cmd, *strings.Builder) {
		cmd := exec.Command(bin, "crawl", "--json", "--no-netrc", "--per-host", "4", "--state", filepath.Join(dir, "state"),
			"--warc-file", filepath.Join(dir, "hole"), "--warc-cdx", base+"/1/hole/")
		out := &strings.Builder{}
		cmd.Stdout = out
		return cmd, out
	}
	finish := func(dir string) report {
		t.Helper()
		cmd, out := crawl(dir)
		if err := cmd.Run(); err != nil {
			t.Fatalf("deref crawl: %v", err)
		}
		var r report
		if err := json.Unmarshal([]byte(out.String()), &r); err != nil {
			t.Fatalf("report %q: %v", out, err)
		}
		return r
	}
	inWARC := func(dir string) map[string]int {
		t.Helper()
		files, _ := filepath.Glob(filepath.Join(dir, "hole-*.warc.gz"))
		uris := map[string]int{}
		for _, r := range readWithWarcio(t, files...) {
			if r.Type == "resource" {
				uris[r.URI]++
			}
		}
		return uris
	}

	// A crawl never killed.
	whole := t.TempDir()
	r := finish(whole)
	if r.Fetched != len(want) || r.Failed != 0 || r.Excluded != 1 {
		t.Errorf("a whole crawl: %+v, want %d fetched", r, len(want))
	}
	wholeSet := inWARC(whole)

	// A crawl killed at a random point once 500 URLs are settled, and run
	// again.
	dir := t.TempDir()
	cmd, _ := crawl(dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for settledLines(filepath.Join(dir, "state")) < 500 {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(time.Duration(rand.IntN(300)) * time.Millisecond)
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	killedAt := settledLines(filepath.Join(dir, "state"))
	r2 := finish(dir)
	t.Logf("killed with %d URLs settled; the resumed run: %+v", killedAt, r2)
	if r2.Failed != 0 || r2.Resumed < 500 || r2.Resumed+r2.Fetched+r2.Excluded != len(want)+1 {
		t.Errorf("resumed run %+v: want %d settled in all", r2, len(want)+1)
	}
	got := inWARC(dir)
	var twice, missing []string
	for u, n := range got {
		if n != 1 {
			twice = append(twice, fmt.Sprintf("%s %d times", u, n))
		}
		if wholeSet[u] != 1 {
			missing = append(missing, "not in the whole crawl: "+u)
		}
	}
	for u := range want {
		if got[u] == 0 {
			missing = append(missing, u)
		}
	}
	sort.Strings(twice)
	sort.Strings(missing)
	if len(twice) > 0 || len(missing) > 0 || len(got) != len(wholeSet) || got[excluded] > 0 || got[base+"/0robots.txt"] != 1 {
		t.Errorf("the two runs' WARC files: %d URLs (the whole crawl's %d); twice: %v; missing: %v", len(got), len(wholeSet), first(twice), first(missing))
	}
}

// settledLines counts the URLs a crawl's state file says are settled.
func settledLines(path string) int {
	b, _ := os.ReadFile(path)
	return strings.Count(string(b), `{"url":`)
}

func first(s []string) []string { return s[:min(len(s), 5)] }
