package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urlderef/deref/internal/testserver/ftpd"
	"github.com/urlderef/deref/internal/testserver/gopherd"
)

// TestListingToFile: a file gets what standard output shows of a
// listing (--raw the server's bytes, in both); -O of a URL that names
// no file is refused before anything is written, as curl refuses it.
func TestListingToFile(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "pub"), 0o755)
	os.WriteFile(filepath.Join(root, "pub", "a.txt"), []byte("a\n"), 0o644)
	fs, err := ftpd.Start(root)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	u := fs.URL() + "pub/"
	dir := t.TempDir()
	for _, flags := range [][]string{nil, {"--raw"}, {"--json"}, {"-l"}} {
		shown := runDeref(t, "", append(append([]string{}, flags...), u)...)
		out := filepath.Join(dir, "f.txt")
		r := runDeref(t, "", append(append([]string{}, flags...), "-o", out, u)...)
		got, _ := os.ReadFile(out)
		if shown.code != 0 || r.code != 0 || string(got) != shown.stdout || !strings.Contains(shown.stdout, "a.txt") {
			t.Errorf("%v: exit %d/%d, the file %q, standard output %q", flags, shown.code, r.code, got, shown.stdout)
		}
		if flags == nil && !strings.Contains(string(got), "\t"+u+"a.txt\n") {
			t.Errorf("not the TAB form: %q", got)
		}
	}

	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<p>index</p>")) }))
	defer web.Close()
	for _, nameless := range []string{u, fs.URL(), web.URL + "/", web.URL, web.URL + "/dir/"} {
		empty := t.TempDir()
		r := runDeref(t, "", "-O", "--output-dir", empty, nameless)
		left, _ := os.ReadDir(empty)
		if r.code != 1 || !strings.Contains(r.stderr, "names no file") || strings.Count(r.stderr, "\n") != 1 || len(left) != 0 {
			t.Errorf("-O %s: exit %d, %q, left %v", nameless, r.code, r.stderr, left)
		}
	}
	// wget's --directory-prefix saves a folder's page as index.html, as wget does.
	wdir := t.TempDir()
	if r := runDeref(t, "", "--directory-prefix", wdir, web.URL+"/"); r.code != 0 {
		t.Errorf("--directory-prefix: exit %d, %q", r.code, r.stderr)
	} else if b, _ := os.ReadFile(filepath.Join(wdir, "index.html")); string(b) != "<p>index</p>" {
		t.Errorf("--directory-prefix: index.html holds %q", b)
	}
}

// TestHeadAsCurl: -I prints what curl -I prints for FTP and file:
// (Content-Length, Accept-ranges, Last-Modified), with Content-Type
// where known, and for a folder no length; a script reading curl's
// lines reads deref's. Gopher, which cannot resume, says no
// Accept-ranges.
func TestHeadAsCurl(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "pub"), 0o755)
	os.WriteFile(filepath.Join(root, "pub", "a.bin"), []byte("12345"), 0o644)
	when := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	os.Chtimes(filepath.Join(root, "pub", "a.bin"), when, when)
	fs, err := ftpd.Start(root)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	gs := &gopherd.Server{Root: root}
	if err := gs.Start(); err != nil {
		t.Fatal(err)
	}
	defer gs.Close()
	fileURL := "file://" + filepath.ToSlash(root) + "/pub/a.bin"
	if !strings.HasPrefix(fileURL, "file:///") {
		fileURL = "file:///" + strings.TrimPrefix(filepath.ToSlash(root), "/") + "/pub/a.bin"
	}
	for _, u := range []string{fs.URL() + "pub/a.bin", fileURL} {
		r := runDeref(t, "", "-I", u)
		for _, want := range []string{"Content-Length: 5\r\n", "Accept-ranges: bytes\r\n", "Last-Modified: Thu, 02 Jan 2020 03:04:05 GMT\r\n"} {
			if r.code != 0 || !strings.Contains(r.stdout, want) || strings.Contains(r.stdout, "Kind:") {
				t.Errorf("-I %s: exit %d, no %q in %q", u, r.code, want, r.stdout)
			}
		}
	}
	// FTP's lines byte for byte as curl -I writes them (checked by hand
	// against curl 7.88 and vsftpd): MDTM's first, no blank line after.
	if r := runDeref(t, "", "-I", fs.URL()+"pub/a.bin"); r.stdout != "Last-Modified: Thu, 02 Jan 2020 03:04:05 GMT\r\nContent-Length: 5\r\nAccept-ranges: bytes\r\n" {
		t.Errorf("-I ftp: %q", r.stdout)
	}
	r := runDeref(t, "", "-I", fs.URL()+"pub/")
	if r.code != 0 || strings.Contains(r.stdout, "Content-Length") || strings.Contains(r.stdout, "Accept-ranges") {
		t.Errorf("-I of a folder: exit %d, %q", r.code, r.stdout)
	}
	if r := runDeref(t, "", "-I", "--json", fs.URL()+"pub/"); r.code != 0 || strings.Contains(r.stdout, `"size"`) || !strings.Contains(r.stdout, `"kind":"directory"`) {
		t.Errorf("-I --json of a folder: exit %d, %q", r.code, r.stdout)
	}
	r = runDeref(t, "", "-I", "gopher://"+gs.Addr()+"/9/pub/a.bin")
	if r.code != 0 || strings.Contains(r.stdout, "Accept-ranges") {
		t.Errorf("-I gopher: exit %d, %q", r.code, r.stdout)
	}
}

// TestMirrorSkipsUnchanged: deref mirror run again with nothing changed
// fetches nothing and calls nothing updated, as lftp's mirror, rsync and
// wget -m; --ignore-times fetches every file, counting those that came
// back the same as unchanged; a file that changed is "updated".
func TestMirrorSkipsUnchanged(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "sub"), 0o755)
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("alpha\n"), 0o644)
	os.WriteFile(filepath.Join(root, "sub", "b.txt"), []byte("bravo\n"), 0o644)
	fs, err := ftpd.Start(root)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	dst := t.TempDir()
	report := func(args ...string) (rep struct {
		New, Updated, Unchanged int
		Bytes                   int64
	}) {
		t.Helper()
		r := runDeref(t, "", append(append([]string{"mirror", "--json"}, args...), fs.URL(), dst)...)
		if err := json.Unmarshal([]byte(r.stdout), &rep); r.code != 0 || err != nil {
			t.Fatalf("%v: exit %d, %v: %s", args, r.code, err, r.stderr)
		}
		return rep
	}
	if rep := report(); rep.New != 2 {
		t.Fatalf("first run: %+v", rep)
	}
	if rep := report(); rep.New != 0 || rep.Updated != 0 || rep.Unchanged != 2 || rep.Bytes != 0 {
		t.Errorf("again, nothing changed: %+v", rep)
	}
	if rep := report("--ignore-times"); rep.Updated != 0 || rep.Unchanged != 2 || rep.Bytes != 12 {
		t.Errorf("--ignore-times: %+v", rep)
	}
	later := time.Now().Add(time.Hour)
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("ALPHA, longer\n"), 0o644)
	os.Chtimes(filepath.Join(root, "a.txt"), later, later)
	if rep := report(); rep.Updated != 1 || rep.Unchanged != 1 {
		t.Errorf("one changed: %+v", rep)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "a.txt")); string(b) != "ALPHA, longer\n" {
		t.Errorf("a.txt: %q", b)
	}
}
