//go:build interop

package interop

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/urlderef/deref/fetch/crawl"
	"github.com/urlderef/deref/fetch/warc"
)

// TestCrawl crawls the pub menu of pygopherd and gophernicus below its
// selector and the pub folder of vsftpd: every menu or folder and every
// file is fetched, none twice, none fails, and the WARC file holds every
// file's payload byte-equal (warcio.js).
func TestCrawl(t *testing.T) {
	tree := filepath.Join(env(t, "DEREF_INTEROP_TREE"), "pub")
	files := treeFiles(t, tree)
	dirs := 0
	filepath.WalkDir(tree, func(p string, de os.DirEntry, err error) error {
		if err == nil && de.IsDir() {
			dirs++
		}
		return err
	})
	want := map[string]bool{}
	for _, rel := range files {
		b, _ := os.ReadFile(filepath.Join(tree, rel))
		want[sha(b)] = true
	}
	gopher := gopherServers(t)
	for name, start := range map[string]string{
		"pygopherd":   gopher["pygopherd"] + "/1/pub",
		"gophernicus": gopher["gophernicus"] + "/1/pub/", // its menus name folders with a final "/"
		"vsftpd":      ftpServers(t)["vsftpd"] + "/pub/",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			w, err := warc.Create(filepath.Join(dir, name), warc.Options{Software: "deref/interop"})
			if err != nil {
				t.Fatal(err)
			}
			c := client()
			rec := &warc.Recorder{W: w}
			c.Recorder = rec
			rep, err := crawl.Run(context.Background(), c, []string{start}, crawl.Options{Prefix: true, Parallel: 4})
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil || rec.Err() != nil {
				t.Fatal(err, rec.Err())
			}
			if rep.Fetched != len(files)+dirs || rep.Failed != 0 {
				t.Errorf("report %+v, want %d fetched", rep, len(files)+dirs)
			}
			found := 0
			for _, r := range readWithWarcio(t, filepath.Join(dir, name+".warc.gz")) {
				if r.Type == "resource" && want[r.SHA256] {
					found++
				}
			}
			// Over FTP every file, its text too (an archive asks TYPE
			// I); a Gopher server may send a text item's lines with CRLF.
			if found == 0 || name == "vsftpd" && found != len(files) {
				t.Errorf("%d files' payloads in the archive, of %d", found, len(files))
			}
		})
	}
}

// TestConvertLinks: deref crawl -r -np -k and wget -r -np -k of the same
// small site on nginx write the same files, byte for byte: links to the
// folder, root-relative ones with a fragment, srcset, a style sheet, and
// a link above the start made absolute; and so with -nH --cut-dirs=1 -E.
func TestConvertLinks(t *testing.T) {
	base := env(t, "DEREF_INTEROP_HTTP")
	bin := buildDeref(t)
	host := strings.TrimPrefix(base, "http://")
	for _, tt := range []struct {
		flags         []string
		mine, theirs  string // where each tool puts the host's files, below its folder
		checkAbsolute bool
	}{
		{nil, host, host, true},
		{[]string{"-nH", "--cut-dirs=1", "-E"}, "", "", false}, // the files at the top, as wget puts them
	} {
		ours, theirs := crawlBoth(t, bin, append(append([]string{"-r", "-np", "-l", "inf", "-k", "-e", "robots=off"}, tt.flags...), base+"/conv/")...)
		mine := filepath.Join(ours, tt.mine)
		sameFiles(t, fmt.Sprintf("%q", tt.flags), mine, filepath.Join(theirs, tt.theirs), 6, "")
		if !tt.checkAbsolute {
			continue
		}
		if b, _ := os.ReadFile(filepath.Join(mine, "conv", "index.html")); !bytes.Contains(b, []byte(`href='`+base+`/outside.html'`)) || !bytes.Contains(b, []byte(`href="sub/index.html"`)) {
			t.Errorf("conv/index.html:\n%s", b)
		}
	}
}

// TestPageRequisites: deref crawl -p and wget -p, alone and with -r, -np
// and -l, fetch the same files of a site whose pages are shown with files
// outside their folder (a style sheet and what it loads, images, an icon,
// a frame and its image), and with -k write them byte for byte the same:
// the links of the pages, of the style sheets (url() quoted and not,
// @import) and of a <style> element converted alike.
func TestPageRequisites(t *testing.T) {
	base := env(t, "DEREF_INTEROP_HTTP")
	bin := buildDeref(t)
	host := strings.TrimPrefix(base, "http://")
	for _, tt := range []struct {
		flags []string
		files int
	}{
		{[]string{"-p"}, 9},                          // the page and what it is shown with
		{[]string{"-r", "-np", "-l", "1", "-p"}, 10}, // and page.html, its picture past the depth
		{[]string{"-r", "-np", "-p"}, 12},
		{[]string{"-r", "-l", "1", "-p"}, 11}, // above the start too, without -np
	} {
		ours, theirs := crawlBoth(t, bin, append(append([]string{"-k", "-e", "robots=off"}, tt.flags...), base+"/req/docs/")...)
		sameFiles(t, fmt.Sprintf("%q", tt.flags), filepath.Join(ours, host), filepath.Join(theirs, host), tt.files, "")
	}
}

// TestAcceptReject: deref crawl -A, -R, -I, -X, --accept-regex,
// --reject-regex, --ignore-case and -nd pick the same files of a site as
// wget's, byte for byte: suffixes and patterns, folders, pages fetched for
// their links and not kept, a folder's page at the depth limit, and with
// -nd -k the second x.pdf and index.html named NAME.1 and the links
// converted to them. One difference is asserted: with -nd -A pdf, wget
// removes its x.pdf.1 (its name no longer ends in pdf), deref keeps it.
func TestAcceptReject(t *testing.T) {
	base := env(t, "DEREF_INTEROP_HTTP")
	bin := buildDeref(t)
	host := strings.TrimPrefix(base, "http://")
	for _, tt := range []struct {
		flags []string
		files int
		extra string // a file deref writes and wget does not
	}{
		{[]string{"-r", "-np", "-A", "pdf"}, 4, ""},
		{[]string{"-r", "-np", "-R", "txt,pdf"}, 4, ""},
		{[]string{"-r", "-np", "-l", "1", "-A", "pdf"}, 1, ""},
		{[]string{"-r", "-np", "-nd", "-A", "*.PDF,z*"}, 2, ""},
		{[]string{"-r", "-np", "-nd", "-k"}, 9, ""},
		{[]string{"-r", "-np", "-nd", "-A", "pdf"}, 3, "x.pdf.1"},
		{[]string{"-r", "-np", "-X", "/ACC/SUB", "--ignore-case"}, 6, ""},
		{[]string{"-r", "-np", "-I", "/acc/sub"}, 4, ""},
		{[]string{"-r", "-np", "--reject-regex", `sub|\.txt$`}, 5, ""},
		{[]string{"-r", "-np", "--accept-regex", "pdf$"}, 2, ""}, // pages too must match
		{[]string{"-r", "-np", "-A", "pdf", "--ignore-case"}, 5, ""},
	} {
		ours, theirs := crawlBoth(t, bin, append(append([]string{"-e", "robots=off"}, tt.flags...), base+"/acc/")...)
		mine, wgets := filepath.Join(ours, host), filepath.Join(theirs, host)
		if slices.Contains(tt.flags, "-nd") {
			mine, wgets = ours, theirs
		}
		if tt.extra != "" {
			if b, _ := os.ReadFile(filepath.Join(mine, tt.extra)); string(b) != "file acc/sub/x.pdf\n" {
				t.Errorf("%q: %s holds %q", tt.flags, tt.extra, b)
			}
		}
		sameFiles(t, fmt.Sprintf("%q", tt.flags), mine, wgets, tt.files, tt.extra)
	}
}

// TestFileNames: a site whose links make odd names (queries, escaped
// reserved characters in one, a query of 300 bytes, ":", a space, "\\",
// "%", "#", a control character in a query, a name not in ASCII,
// capitals), crawled by deref and by wget with each
// --restrict-file-names: the same files under the same names, byte for
// byte; with -k the same names (the pages' links differ: deref's lead to
// the files, NAME%3FQUERY, where wget's NAME?QUERY lead a browser to NAME).
func TestFileNames(t *testing.T) {
	base := env(t, "DEREF_INTEROP_HTTP")
	bin := buildDeref(t)
	for _, mode := range []string{"", "unix", "windows", "nocontrol", "ascii", "lowercase", "windows,uppercase", "-k"} {
		flags := []string{"-r", "-np", "-e", "robots=off"}
		switch mode {
		case "":
		case "-k":
			flags = append(flags, "-k")
		default:
			flags = append(flags, "--restrict-file-names="+mode)
		}
		ours, theirs := crawlBoth(t, bin, append(flags, base+"/names/")...)
		if mode == "-k" {
			if got, want := treeFiles(t, ours), treeFiles(t, theirs); strings.Join(got, " ") != strings.Join(want, " ") || len(got) != 15 {
				t.Errorf("-k: deref wrote %q, wget %q", got, want)
			}
			continue
		}
		sameFiles(t, mode, ours, theirs, 15, "")
	}
}

// TestWgetCrawlFlags: more of wget's recursive flags, deref crawl and
// wget on the same site: the same files, byte for byte.
func TestWgetCrawlFlags(t *testing.T) {
	base := env(t, "DEREF_INTEROP_HTTP")
	bin := buildDeref(t)
	for _, tt := range []struct {
		flags []string
		files int
	}{
		{[]string{"--https-only"}, 1},
		{[]string{"-Q", "100"}, 1}, // the first page passes it: no order of the rest to depend on
		{[]string{"-L", "--protocol-directories", "--default-page=home.htm"}, 9},
		{[]string{"-nH", "--protocol-directories", "--trust-server-names"}, 9},
		{[]string{"--delete-after"}, 0},
	} {
		ours, theirs := crawlBoth(t, bin, append(append([]string{"-r", "-np", "-e", "robots=off"}, tt.flags...), base+"/acc/")...)
		if tt.files == 0 {
			for _, d := range []string{ours, theirs} {
				filepath.WalkDir(d, func(p string, de os.DirEntry, err error) error {
					if err == nil && !de.IsDir() {
						t.Errorf("%q: %s left", tt.flags, p)
					}
					return err
				})
			}
			continue
		}
		sameFiles(t, fmt.Sprintf("%q", tt.flags), ours, theirs, tt.files, "")
	}
}

// TestRobotsMeta: a page whose <meta name="robots"> says nofollow gives
// no links, as wget has it, unless -e robots=off; rel=nofollow on a link
// is not heeded, by wget or deref. The same files as wget, byte for byte.
func TestRobotsMeta(t *testing.T) {
	base := env(t, "DEREF_INTEROP_HTTP")
	bin := buildDeref(t)
	for _, tt := range []struct {
		robots string
		files  int
	}{{"on", 3}, {"off", 5}} {
		ours, theirs := crawlBoth(t, bin, "-r", "-np", "-e", "robots="+tt.robots, base+"/nofollow/", base+"/nofollow/rel.html")
		sameFiles(t, "robots="+tt.robots, ours, theirs, tt.files, "")
	}
}

// TestFTPCrawl: deref crawl -r and wget -r of vsftpd's pub folder write
// the same files, byte for byte (a .txt with CRLFs as the server holds
// it: TYPE I, as wget asks), and no listing; with --no-remove-listing,
// each folder's .listing, as wget keeps it.
func TestFTPCrawl(t *testing.T) {
	src := ftpServers(t)["vsftpd"] + "/pub/"
	bin := buildDeref(t)
	for _, flags := range [][]string{{"-r"}, {"-r", "--no-remove-listing"}} {
		ours, theirs := crawlBoth(t, bin, append(flags, src)...)
		if len(flags) == 1 {
			sameFiles(t, "-r", ours, theirs, len(treeFiles(t, theirs)), "")
			continue
		}
		got, want := treeFiles(t, ours), treeFiles(t, theirs)
		if strings.Join(got, " ") != strings.Join(want, " ") || !slices.ContainsFunc(got, func(s string) bool { return strings.HasSuffix(s, "/pub/.listing") }) {
			t.Errorf("--no-remove-listing: deref wrote %q, wget %q", got, want)
		}
	}
}

// TestNoVerbose: deref crawl -nv writes what wget -nv writes of each file,
// in the same order (a host's URLs in the order their links were found),
// the time at the start of each line aside.
func TestNoVerbose(t *testing.T) {
	base := env(t, "DEREF_INTEROP_HTTP")
	bin := buildDeref(t)
	dir := t.TempDir()
	lines := func(name string, args ...string) []string {
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
		var got []string
		for _, l := range strings.Split(string(out), "\n") {
			if len(l) > 20 && strings.HasPrefix(l[20:], "URL:") {
				got = append(got, l[20:])
			}
		}
		return got
	}
	ours := lines(bin, "crawl", "--no-netrc", "-nv", "-r", "-np", "-e", "robots=off", "-P", "T", base+"/acc/")
	theirs := lines("wget", "-nv", "-r", "-np", "-e", "robots=off", "-P", "T", base+"/acc/")
	if strings.Join(ours, "\n") != strings.Join(theirs, "\n") || len(ours) != 9 {
		t.Errorf("deref crawl -nv:\n%s\nwget -nv:\n%s", strings.Join(ours, "\n"), strings.Join(theirs, "\n"))
	}
}

// TestRedirectedFolders: links to folders without their slash, which
// nginx sends on to the folders' URLs with it: deref crawl takes the
// folders' pages' links relative to where nginx sent it, as wget does,
// and fetches the same files; it writes those pages as the folders'
// index.html, where wget writes each as a file named after the folder
// and removes it to make the folder for the files.
func TestRedirectedFolders(t *testing.T) {
	base := env(t, "DEREF_INTEROP_HTTP")
	bin := buildDeref(t)
	ours, theirs := crawlBoth(t, bin, "-r", "-np", "-e", "robots=off", base+"/redir/")
	host := strings.TrimPrefix(base, "http://")
	pages := []string{host + "/redir/sub/deeper/index.html", host + "/redir/sub/index.html"}
	got := treeFiles(t, ours)
	for _, p := range pages {
		if !slices.Contains(got, p) {
			t.Errorf("no %s in %q", p, got)
		}
	}
	got = slices.DeleteFunc(got, func(s string) bool { return slices.Contains(pages, s) })
	want := treeFiles(t, theirs)
	if strings.Join(got, " ") != strings.Join(want, " ") || len(want) != 3 {
		t.Fatalf("deref wrote %q besides the folders' pages, wget %q", got, want)
	}
	for _, rel := range got {
		a, _ := os.ReadFile(filepath.Join(ours, rel))
		b, _ := os.ReadFile(filepath.Join(theirs, rel))
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs: %q, wget %q", rel, a, b)
		}
	}
}

// TestMirrorLine: wget's famous line, -mkEpnp (--mirror --convert-links
// --adjust-extension --page-requisites --no-parent), and with -K
// (--backup-converted), each run twice by deref crawl and by wget into
// their own folders: the trees are the same, byte for byte, after each
// run, .orig files included. deref's second run leaves the files nginx
// says are no newer (-N): without -K it fetches the converted pages
// again, with -K it judges them by their originals and fetches nothing.
func TestMirrorLine(t *testing.T) {
	base := env(t, "DEREF_INTEROP_HTTP")
	bin := buildDeref(t)
	host := strings.TrimPrefix(base, "http://")
	for _, tt := range []struct {
		flag      string
		files     int
		unchanged string // what deref's second run says
	}{
		{"-mkEpnp", 12, "6 of them no newer than their files"},
		{"-mkKEpnp", 17, "12 of them no newer than their files"},
	} {
		ours, theirs := t.TempDir(), t.TempDir()
		for run := range 2 {
			out := runTool(t, bin, "crawl", "--no-netrc", tt.flag, "-e", "robots=off", "-P", ours, base+"/req/docs/")
			if unchanged := strings.Contains(out, tt.unchanged); unchanged != (run == 1) {
				t.Errorf("%s: deref, run %d:\n%s", tt.flag, run, out)
			}
			runTool(t, "wget", "-q", tt.flag, "-e", "robots=off", "-P", theirs, base+"/req/docs/")
			sameFiles(t, fmt.Sprintf("%s, run %d", tt.flag, run), filepath.Join(ours, host), filepath.Join(theirs, host), tt.files, "")
		}
	}
}

// buildDeref builds the command into a temporary folder.
func buildDeref(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "deref")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/deref").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// crawlBoth runs deref crawl and wget with the same arguments (flags and
// start URLs), each writing into a folder of its own (-P), quietly, and
// returns the two folders.
func crawlBoth(t *testing.T, bin string, args ...string) (ours, theirs string) {
	t.Helper()
	ours, theirs = t.TempDir(), t.TempDir()
	runTool(t, bin, append([]string{"crawl", "-s", "--no-netrc", "-P", ours}, args...)...)
	runTool(t, "wget", append([]string{"-q", "-P", theirs}, args...)...)
	return ours, theirs
}

// runTool runs a command that must succeed, and returns what it said.
func runTool(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %q: %v\n%s", filepath.Base(name), args, err, out)
	}
	return string(out)
}

// sameFiles checks that the trees mine (deref's) and wgets hold the same
// n files, byte for byte, but for extra, a file deref alone writes, and
// returns their paths.
func sameFiles(t *testing.T, label, mine, wgets string, n int, extra string) []string {
	t.Helper()
	got, want := treeFiles(t, mine), treeFiles(t, wgets)
	if extra != "" {
		got = slices.DeleteFunc(got, func(s string) bool { return s == extra })
	}
	if strings.Join(got, " ") != strings.Join(want, " ") || len(got) != n {
		t.Fatalf("%s: deref wrote %q, wget %q", label, got, want)
	}
	for _, rel := range got {
		a, _ := os.ReadFile(filepath.Join(mine, rel))
		b, _ := os.ReadFile(filepath.Join(wgets, rel))
		if !bytes.Equal(a, b) {
			t.Errorf("%s: %s differs:\nderef:\n%s\nwget:\n%s", label, rel, a, b)
		}
	}
	return got
}
