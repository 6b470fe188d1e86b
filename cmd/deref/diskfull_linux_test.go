package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
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
)

// smallDisk mounts a tmpfs of size bytes for the test (root only: the
// tests are skipped, saying so, elsewhere) and returns its folder and a
// function that remounts it with other options ("size=64m", "ro").
func smallDisk(t *testing.T, size string) (string, func(opts string)) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the full-disk tests mount a small tmpfs, which needs root (CI runs them as root)")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v: %s): the full-disk tests need one", err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir, func(opts string) {
		t.Helper()
		if out, err := exec.Command("mount", "-o", "remount,"+opts, dir).CombinedOutput(); err != nil {
			t.Fatalf("remount %s: %v: %s", opts, err, out)
		}
	}
}

// fullDiskSite serves, on loopback, a folder of files that together are
// three times a 4 MiB disk: an 8 MiB file, nine of 600 KiB, a small one.
func fullDiskSite(t *testing.T) (string, map[string][]byte) {
	t.Helper()
	root := t.TempDir()
	files := map[string][]byte{}
	r := rand.New(rand.NewPCG(1, 2))
	add := func(name string, n int) {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		files[name] = b
		if err := os.WriteFile(filepath.Join(root, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	add("big.bin", 8<<20)
	for i := 1; i <= 9; i++ {
		add(fmt.Sprintf("f%d.bin", i), 600<<10)
	}
	add("small.bin", 100<<10)
	s := httptest.NewServer(http.FileServer(http.Dir(root)))
	t.Cleanup(s.Close)
	return s.URL + "/", files
}

// urlList writes the URLs of the site's files, a line each, for -i.
func urlList(t *testing.T, site string, files map[string][]byte) string {
	t.Helper()
	list := filepath.Join(t.TempDir(), "urls")
	var urls []string
	for name := range files {
		urls = append(urls, site+name)
	}
	if err := os.WriteFile(list, []byte(strings.Join(urls, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return list
}

// runIn runs bin with args in dir and returns its exit code and standard
// error.
func runIn(t *testing.T, bin, dir string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NETRC=/nonexistent", "XDG_CONFIG_HOME="+t.TempDir())
	var errb bytes.Buffer
	cmd.Stderr = &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, errb.String()
}

// wholeOrPart checks that every file under dir is whole (what the site
// serves under its name) or a NAME.part, and returns how many are whole.
func wholeOrPart(t *testing.T, dir string, files map[string][]byte) int {
	t.Helper()
	whole := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".part") || strings.HasSuffix(p, ".state") || strings.HasSuffix(p, ".html") {
			return nil
		}
		b, _ := os.ReadFile(p)
		if want, ok := files[filepath.Base(p)]; !ok || !bytes.Equal(b, want) {
			t.Errorf("%s: %d bytes under its final name, not the whole file", p, len(b))
		} else {
			whole++
		}
		return nil
	})
	return whole
}

// saidOnce checks that stderr says words once, on one line that
// names a file, and never panics.
func saidOnce(t *testing.T, what, stderr, words string) {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if strings.Contains(l, words) {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], ".") {
		t.Errorf("%s: %q said %d times:\n%s", what, words, len(lines), stderr)
	}
	if strings.Contains(stderr, "panic") {
		t.Errorf("%s: %s", what, stderr)
	}
}

// Every writer on a disk that fills: exit 8, "no space left" said once
// naming the file, nothing incomplete under a final name; after room is
// made, the same command ends with every file whole.
func TestDiskFull(t *testing.T) {
	bin := buildDeref(t)
	site, files := fullDiskSite(t)
	list := urlList(t, site, files)

	for _, tt := range []struct {
		name string
		args func(disk string) []string
		out  func(disk string) string // where the files go
	}{
		{"-o", func(d string) []string { return []string{"-s", "-o", filepath.Join(d, "big.bin"), site + "big.bin"} }, func(d string) string { return d }},
		{"-O", func(d string) []string { return []string{"-s", "-O", site + "big.bin"} }, func(d string) string { return d }},
		{"-i --parallel 4", func(d string) []string {
			return []string{"-s", "-i", list, "--parallel", "4", "-O", "--output-dir", filepath.Join(d, "files")}
		}, func(d string) string { return filepath.Join(d, "files") }},
		{"mirror", func(d string) []string { return []string{"mirror", "-s", site, filepath.Join(d, "tree")} }, func(d string) string { return filepath.Join(d, "tree") }},
		{"crawl --output-dir --state", func(d string) []string {
			return []string{"crawl", "-s", "--output-dir", filepath.Join(d, "site"), "--state", filepath.Join(d, "crawl.state"), site}
		}, func(d string) string { return filepath.Join(d, "site") }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			disk, remount := smallDisk(t, "4m")
			code, stderr := runIn(t, bin, disk, tt.args(disk)...)
			if code != 8 {
				t.Errorf("exit %d, want 8\n%s", code, stderr)
			}
			saidOnce(t, tt.name, stderr, "no space left")
			wholeOrPart(t, tt.out(disk), files)
			remount("size=64m")
			code, stderr = runIn(t, bin, disk, tt.args(disk)...)
			if code != 0 {
				t.Fatalf("again, with room: exit %d\n%s", code, stderr)
			}
			want := len(files)
			if strings.HasPrefix(tt.name, "-o") || strings.HasPrefix(tt.name, "-O") {
				want = 1
			}
			if n := wholeOrPart(t, tt.out(disk), files); n != want {
				t.Errorf("again, with room: %d whole files, want %d", n, want)
			}
		})
	}
}

// gzipMembers reads a .warc.gz file member by member and returns how many
// it holds; a member cut short is an error.
func gzipMembers(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	br := bufio.NewReader(f) // a ByteReader: gzip reads no further than each member's end
	zr, err := gzip.NewReader(br)
	if err != nil {
		t.Fatal(err)
	}
	zr.Multistream(false)
	n := 0
	for {
		if _, err := io.Copy(io.Discard, zr); err != nil {
			t.Fatalf("%s: member %d: %v", path, n+1, err)
		}
		n++
		if err := zr.Reset(br); err == io.EOF {
			return n
		} else if err != nil {
			t.Fatalf("%s: after member %d: %v", path, n, err)
		}
		zr.Multistream(false) // Reset turns it on again
	}
}

// cdxjLines are the lines of a CDXJ index; an index of no record has none.
func cdxjLines(idx []byte) []string {
	var out []string
	for _, l := range strings.Split(string(idx), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// A WARC file on a disk that fills ends at its last whole record and
// its CDXJ lists only the records it holds; a crawl with --state resumed
// once there is room holds every URL once across its files.
func TestDiskFullWARC(t *testing.T) {
	bin := buildDeref(t)
	site, files := fullDiskSite(t)
	disk, remount := smallDisk(t, "4m")
	args := []string{"crawl", "-s", "--warc-file", filepath.Join(disk, "w"), "--warc-cdx", "--state", filepath.Join(disk, "w.state"), site}
	code, stderr := runIn(t, bin, disk, args...)
	if code != 8 {
		t.Errorf("exit %d, want 8\n%s", code, stderr)
	}
	saidOnce(t, "crawl --warc-file", stderr, "no space left")
	check := func() map[string]int {
		seen := map[string]int{}
		warcs, _ := filepath.Glob(filepath.Join(disk, "*.warc.gz"))
		opens, _ := filepath.Glob(filepath.Join(disk, "*.open"))
		if len(warcs) == 0 || len(opens) != 0 {
			t.Fatalf("WARC files %v, unfinished %v", warcs, opens)
		}
		for _, w := range warcs {
			members := gzipMembers(t, w)
			st, _ := os.Stat(w)
			idx, err := os.ReadFile(strings.TrimSuffix(w, ".warc.gz") + ".cdxj")
			if err != nil {
				t.Fatal(err)
			}
			lines := cdxjLines(idx)
			for _, l := range lines {
				var off, length int64
				fmt.Sscanf(l[strings.Index(l, `"length":"`)+10:], "%d", &length)
				fmt.Sscanf(l[strings.Index(l, `"offset":"`)+10:], "%d", &off)
				if off+length > st.Size() {
					t.Errorf("%s: the index lists a record past the file's end: %s", w, l)
				}
				u := l[strings.Index(l, `"url":"`)+7:]
				seen[u[:strings.IndexByte(u, '"')]]++
			}
			if members < len(lines) {
				t.Errorf("%s: %d members, %d indexed", w, members, len(lines))
			}
		}
		return seen
	}
	check()
	remount("size=64m")
	if code, stderr := runIn(t, bin, disk, args...); code != 0 {
		t.Fatalf("resumed with room: exit %d\n%s", code, stderr)
	}
	seen := check()
	for name := range files {
		if seen[site+name] != 1 {
			t.Errorf("%s is archived %d times", name, seen[site+name])
		}
	}
}

// deref -i --warc-file on a disk that fills: the archive ends at a whole
// record, its index lists what it holds; the same command run again with
// room continues the archive's series (NAME-00001.warc.gz) and never
// writes over the first: together they hold every URL.
func TestDiskFullWARCContinued(t *testing.T) {
	bin := buildDeref(t)
	site, files := fullDiskSite(t)
	list := urlList(t, site, files)
	disk, remount := smallDisk(t, "4m")
	out := t.TempDir()
	args := []string{"-s", "--warc-file", filepath.Join(disk, "arch"), "--warc-cdx", "-i", list, "-O", "--output-dir", out}
	code, stderr := runIn(t, bin, disk, args...)
	if code != 8 {
		t.Errorf("exit %d, want 8\n%s", code, stderr)
	}
	saidOnce(t, "-i --warc-file", stderr, "no space left")
	first, _ := os.ReadFile(filepath.Join(disk, "arch.warc.gz"))
	gzipMembers(t, filepath.Join(disk, "arch.warc.gz"))
	remount("size=64m")
	if code, stderr := runIn(t, bin, disk, args...); code != 0 {
		t.Fatalf("again, with room: exit %d\n%s", code, stderr)
	}
	if again, _ := os.ReadFile(filepath.Join(disk, "arch.warc.gz")); !bytes.Equal(again, first) {
		t.Error("the first archive was written over")
	}
	seen := map[string]bool{}
	for _, name := range []string{"arch", "arch-00001"} {
		gzipMembers(t, filepath.Join(disk, name+".warc.gz"))
		idx, err := os.ReadFile(filepath.Join(disk, name+".cdxj"))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range cdxjLines(idx) {
			u := l[strings.Index(l, `"url":"`)+7:]
			seen[u[:strings.IndexByte(u, '"')]] = true
		}
	}
	for name := range files {
		if !seen[site+name] {
			t.Errorf("%s is in neither archive", name)
		}
	}
}

// On a read-only file system: exit 8, said once, nothing written.
func TestReadOnlyDisk(t *testing.T) {
	bin := buildDeref(t)
	site, _ := fullDiskSite(t)
	disk, remount := smallDisk(t, "4m")
	remount("ro")
	for _, args := range [][]string{{"-s", "-O", site + "small.bin"}, {"mirror", "-s", site, filepath.Join(disk, "tree")}} {
		code, stderr := runIn(t, bin, disk, args...)
		if code != 8 {
			t.Errorf("%v: exit %d, want 8\n%s", args, code, stderr)
		}
		saidOnce(t, strings.Join(args, " "), stderr, "read-only file system")
	}
	if entries, _ := os.ReadDir(disk); len(entries) != 0 {
		t.Errorf("written: %v", entries)
	}
}

// SIGTERM and SIGHUP end a download as SIGINT does: exit 130, its
// NAME.part kept and nothing under the final name, and a WARC file
// finished, ending at a whole record; -C - then ends it whole.
func TestStopSignals(t *testing.T) {
	bin := buildDeref(t)
	site, files := fullDiskSite(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT} {
		dir := t.TempDir()
		cmd := exec.Command(bin, "-s", "--limit-rate", "1M", "--warc-file", "w", "-O", site+"f1.bin", site+"big.bin")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "NETRC=/nonexistent")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for start := time.Now(); time.Since(start) < 20*time.Second; time.Sleep(20 * time.Millisecond) {
			if st, err := os.Stat(filepath.Join(dir, "big.bin.part")); err == nil && st.Size() > 0 {
				break // f1.bin whole, big.bin under way
			}
		}
		cmd.Process.Signal(sig)
		err := cmd.Wait()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
			t.Errorf("%v: %v, want exit 130", sig, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "big.bin")); err == nil {
			t.Errorf("%v: big.bin under its final name", sig)
		}
		if _, err := os.Stat(filepath.Join(dir, "big.bin.part")); err != nil {
			t.Errorf("%v: no big.bin.part to continue: %v", sig, err)
		}
		if n := gzipMembers(t, filepath.Join(dir, "w.warc.gz")); n < 2 {
			t.Errorf("%v: %d records", sig, n)
		}
		if code, stderr := runIn(t, bin, dir, "-s", "-C", "-", "-O", site+"big.bin"); code != 0 {
			t.Errorf("%v: -C -: exit %d %s", sig, code, stderr)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "big.bin")); !bytes.Equal(b, files["big.bin"]) {
			t.Errorf("%v: continued, big.bin is not whole (%d bytes)", sig, len(b))
		}
	}
}

// A mirror whose destination is removed under it stops at the first
// file it cannot write: exit 8, said once, no panic, and nothing put
// back under a final name.
func TestDestinationRemoved(t *testing.T) {
	bin := buildDeref(t)
	site, _ := fullDiskSite(t)
	dst := filepath.Join(t.TempDir(), "tree")
	cmd := exec.Command(bin, "mirror", "-s", "--limit-rate", "2M", site, dst)
	cmd.Env = append(os.Environ(), "NETRC=/nonexistent")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); time.Since(start) < 5*time.Second; time.Sleep(50 * time.Millisecond) {
		if entries, _ := os.ReadDir(dst); len(entries) > 0 {
			break // under way
		}
	}
	time.Sleep(300 * time.Millisecond)
	if err := os.RemoveAll(dst); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 8 {
		t.Errorf("exit: %v, want 8\n%s", err, errb.String())
	}
	saidOnce(t, "a removed destination", errb.String(), "no such file or directory")
	if _, err := os.Stat(dst); err == nil {
		t.Errorf("%s is there again", dst)
	}
}

// SIGTERM and SIGHUP end deref mirror and deref crawl as SIGINT does:
// exit 130, nothing incomplete under a final name, and the same command
// run again ends with every file whole.
func TestStopSignalsTrees(t *testing.T) {
	bin := buildDeref(t)
	site, files := fullDiskSite(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP} {
		for _, c := range []struct {
			name string
			args func(dir string) []string
			out  func(dir string) string
		}{
			{"mirror", func(d string) []string {
				return []string{"mirror", "-s", "--limit-rate", "8M", site, filepath.Join(d, "tree")}
			}, func(d string) string { return filepath.Join(d, "tree") }},
			{"crawl", func(d string) []string {
				return []string{"crawl", "-s", "--limit-rate", "8M", "--output-dir", filepath.Join(d, "site"), "--state", filepath.Join(d, "c.state"), site}
			}, func(d string) string { return filepath.Join(d, "site") }},
		} {
			dir := t.TempDir()
			cmd := exec.Command(bin, c.args(dir)...)
			cmd.Env = append(os.Environ(), "NETRC=/nonexistent")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			for start := time.Now(); time.Since(start) < 20*time.Second; time.Sleep(20 * time.Millisecond) {
				if parts, _ := filepath.Glob(filepath.Join(c.out(dir), "*", "*.part")); len(parts) > 0 {
					break
				}
				if parts, _ := filepath.Glob(filepath.Join(c.out(dir), "*.part")); len(parts) > 0 {
					break
				}
			}
			cmd.Process.Signal(sig)
			err := cmd.Wait()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
				t.Errorf("%s, %v: %v, want exit 130", c.name, sig, err)
			}
			wholeOrPart(t, c.out(dir), files)
			if code, stderr := runIn(t, bin, dir, c.args(dir)...); code != 0 {
				t.Errorf("%s, %v, again: exit %d %s", c.name, sig, code, stderr)
			}
			if n := wholeOrPart(t, c.out(dir), files); n != len(files) {
				t.Errorf("%s, %v, again: %d whole files of %d", c.name, sig, n, len(files))
			}
		}
	}
}

// deref crawl stopped by a full disk says so on one line, and nothing
// of the URLs it stops (no "interrupted" line for each); with no byte
// free at all it says so too; and where other URLs failed as well (a
// host's 404s) the disk is why it stopped: exit 8.
func TestDiskFullCrawlSaysOnce(t *testing.T) {
	bin := buildDeref(t)
	site, _ := fullDiskSite(t)
	missing := httptest.NewServer(http.NotFoundHandler())
	defer missing.Close()
	for _, c := range []struct {
		name   string
		fill   bool
		extra  []string
		reason string
	}{
		{"full on the way", false, nil, "no space left"},
		{"no byte free", true, nil, "no space left"},
		{"with 404s", false, []string{missing.URL + "/a", missing.URL + "/b"}, "no space left"},
	} {
		t.Run(c.name, func(t *testing.T) {
			disk, _ := smallDisk(t, "4m")
			if c.fill {
				f, _ := os.Create(filepath.Join(disk, "filler"))
				b := make([]byte, 64<<10)
				for {
					if _, err := f.Write(b); err != nil {
						break
					}
				}
				for {
					if _, err := f.Write(b[:1]); err != nil {
						break
					}
				}
				f.Close()
			}
			args := append([]string{"crawl", "-s", "--output-dir", filepath.Join(disk, "site"), "--state", filepath.Join(disk, "c.state")}, c.extra...)
			args = append(args, site)
			code, stderr := runIn(t, bin, disk, args...)
			if code != 8 {
				t.Errorf("exit %d, want 8\n%s", code, stderr)
			}
			saidOnce(t, c.name, stderr, c.reason)
			if strings.Contains(stderr, "interrupted") {
				t.Errorf("a line for each URL stopped:\n%s", stderr)
			}
		})
	}
}
