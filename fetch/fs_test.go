package fetch_test

import (
	"context"
	"errors"
	"io/fs"
	nethttp "net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/internal/testserver/ftpd"
	"github.com/urlderef/deref/internal/testserver/gopherd"
	"github.com/urlderef/deref/internal/testserver/nntpd"
	"github.com/urlderef/deref/internal/testserver/waisd"
)

// fsTree is the content of the trees served in the io/fs tests.
var fsTree = map[string]string{
	"README.txt":           "top\n",
	"pub/a.txt":            "alpha\n",
	"pub/b.bin":            "\x00\x01\x02\r\n\x03",
	"pub/empty.bin":        "",
	"pub/with space.txt":   "spaced\n",
	"pub/nested/deep.txt":  "deep\n",
	"pub/nested/more/x.md": "# x\n",
}

// fsFiles are fsTree's names, for fstest.TestFS.
func fsFiles() []string {
	var out []string
	for n := range fsTree {
		out = append(out, n)
	}
	return out
}

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	when := time.Date(2021, 3, 4, 5, 6, 7, 0, time.UTC)
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, when, when)
	}
	return root
}

func fileURLOf(dir string) string {
	u := "file://" + filepath.ToSlash(dir)
	if !strings.HasPrefix(u, "file:///") {
		u = "file:///" + strings.TrimPrefix(u, "file://")
	}
	return u + "/"
}

// TestFS checks NewFS with testing/fstest against each kind of tree, each
// served in-process.
func TestFS(t *testing.T) {
	root := writeTree(t, fsTree)
	fs1 := serveFTP(t, root)
	gs := &gopherd.Server{Root: root}
	startOrFail(t, gs.Start, gs.Close)
	hs := httptest.NewServer(nethttp.FileServer(nethttp.Dir(root)))
	defer hs.Close()

	c := newClient()
	for _, tt := range []struct{ name, url string }{
		{"file", fileURLOf(root)},
		{"ftp", fs1.URL()},
		{"gopher", "gopher://" + gs.Addr() + "/1/"},
		{"http", hs.URL + "/"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fsys, err := fetch.NewFS(context.Background(), c, tt.url)
			if err != nil {
				t.Fatal(err)
			}
			if err := fstest.TestFS(fsys, fsFiles()...); err != nil {
				t.Fatal(err)
			}
			b, err := fs.ReadFile(fsys, "pub/b.bin")
			if err != nil || string(b) != fsTree["pub/b.bin"] {
				t.Errorf("pub/b.bin: %q %v", b, err)
			}
			if _, err := fs.Stat(fsys, "pub/none.txt"); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a missing name: %v", err)
			}
		})
	}
}

// ftpFS serves files over FTP and views the folder path of it as a file
// system.
func ftpFS(t *testing.T, files map[string]string, path string) (fs.FS, *ftpd.Server) {
	t.Helper()
	s := serveFTP(t, writeTree(t, files))
	fsys, err := fetch.NewFS(context.Background(), newClient(), s.URL()+path)
	if err != nil {
		t.Fatal(err)
	}
	return fsys, s
}

// Listed sizes and times are the FileInfo's; the entry is its Sys.
func TestFSInfo(t *testing.T) {
	fsys, s := ftpFS(t, fsTree, "pub/")
	info, err := fs.Stat(fsys, "a.txt")
	if err != nil {
		t.Fatal(err)
	}
	if info.Size() != 6 || !info.ModTime().Equal(time.Date(2021, 3, 4, 5, 6, 7, 0, time.UTC)) || info.IsDir() {
		t.Errorf("a.txt: %d %v %v", info.Size(), info.ModTime(), info.IsDir())
	}
	if e, ok := info.Sys().(fetch.TreeEntry); !ok || e.URL.String() != s.URL()+"pub/a.txt;type=i" {
		t.Errorf("Sys: %#v", info.Sys())
	}
	des, err := fs.ReadDir(fsys, ".")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	if got := strings.Join(names, ","); got != "a.txt,b.bin,empty.bin,nested,with space.txt" {
		t.Errorf("ReadDir: %s", got)
	}
	if _, err := fetch.NewFS(context.Background(), newClient(), s.URL()+"pub/a.txt"); err == nil {
		t.Error("a file as the top of a tree")
	}
}

// os.CopyFS of an FTP tree is the tree.
func TestFSCopy(t *testing.T) {
	fsys, _ := ftpFS(t, fsTree, "")
	dst := filepath.Join(t.TempDir(), "copy")
	if err := os.CopyFS(dst, fsys); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	filepath.WalkDir(dst, func(p string, de fs.DirEntry, err error) error {
		if err == nil && !de.IsDir() {
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(dst, p)
			got[filepath.ToSlash(rel)] = string(b)
		}
		return err
	})
	if len(got) != len(fsTree) {
		t.Errorf("%d files, want %d: %v", len(got), len(fsTree), got)
	}
	for n, want := range fsTree {
		if got[n] != want {
			t.Errorf("%s: %q, want %q", n, got[n], want)
		}
	}
}

// Names that are not path elements are left out, never renamed.
func TestFSNames(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("these names cannot be made there")
	}
	fsys, _ := ftpFS(t, map[string]string{"ok.txt": "ok\n", `back\slash.txt`: "b\n", "bad\xffutf8.txt": "u\n"}, "")
	if err := fstest.TestFS(fsys, "ok.txt"); err != nil {
		t.Fatal(err)
	}
	des, _ := fs.ReadDir(fsys, ".")
	if len(des) != 1 {
		t.Errorf("%d entries: %v", len(des), des)
	}
}

// A newsgroup is a folder of articles named by number.
func TestFSNews(t *testing.T) {
	ns := nntpd.New()
	ns.AddGroup("local.test", "")
	ns.Post("local.test", "<a1@test>", []string{"From: A <a@test>", "Subject: first", "Date: Sun, 22 Nov 2026 10:00:00 +0000"}, "Hello.\n")
	ns.Post("local.test", "<a2@test>", []string{"From: B <b@test>", "Subject: second/with slash"}, "Again.\n")
	startOrFail(t, ns.Start, ns.Close)
	fsys, err := fetch.NewFS(context.Background(), newClient(), "nntp://"+ns.Addr()+"/local.test")
	if err != nil {
		t.Fatal(err)
	}
	if err := fstest.TestFS(fsys, "1", "2"); err != nil {
		t.Fatal(err)
	}
	b, err := fs.ReadFile(fsys, "2")
	if err != nil || !strings.HasSuffix(string(b), "\r\n\r\nAgain.\r\n") {
		t.Errorf("%q %v", b, err)
	}
	// The size the group's overview gives is the article's length.
	if info, err := fs.Stat(fsys, "2"); err != nil || info.Size() != int64(len(b)) {
		t.Errorf("article 2: %v, %v, want size %d", info, err, len(b))
	}
	info, _ := fs.Stat(fsys, "1")
	if info == nil || !info.ModTime().Equal(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("article 1: %v", info)
	}
}

// A WAIS search is a folder of its hits, named by their docids' file
// names.
func TestFSWAIS(t *testing.T) {
	ws := waisd.New()
	startOrFail(t, ws.Start, ws.Close)
	fsys, err := fetch.NewFS(context.Background(), newClient(), "wais://"+ws.Addr()+"/test?gophers")
	if err != nil {
		t.Fatal(err)
	}
	des, err := fs.ReadDir(fsys, ".")
	if err != nil || len(des) == 0 {
		t.Fatalf("%v %v", des, err)
	}
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	if err := fstest.TestFS(fsys, names...); err != nil {
		t.Fatal(err)
	}
	if b, err := fs.ReadFile(fsys, "alpha.txt"); err != nil || string(b) != waisd.Alpha {
		t.Errorf("alpha.txt: %q %v (names %v)", b, err, names)
	}
	if _, err := fetch.NewFS(context.Background(), newClient(), "wais://"+ws.Addr()+"/test"); !errors.Is(err, fetch.ErrBadURL) {
		t.Errorf("a database without a search: %v", err)
	}
}

// TestFSUnknownSize: over Gopher, whose menus give no sizes, a file's
// Size is 0 and its Sys's TreeEntry says -1, unknown, which tells it from
// an empty file of a listing that gives sizes (FTP's empty.bin: 0 and 0).
func TestFSUnknownSize(t *testing.T) {
	root := writeTree(t, fsTree)
	gs := &gopherd.Server{Root: root}
	if err := gs.Start(); err != nil {
		t.Fatal(err)
	}
	defer gs.Close()
	fsys, err := fetch.NewFS(context.Background(), newClient(), "gopher://"+gs.Addr()+"/1/pub")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a.txt", "empty.bin"} {
		info, err := fs.Stat(fsys, name)
		if err != nil {
			t.Fatal(err)
		}
		if e, ok := info.Sys().(fetch.TreeEntry); !ok || info.Size() != 0 || e.Size != -1 {
			t.Errorf("gopher %s: Size %d, Sys %#v", name, info.Size(), info.Sys())
		}
	}
	ftpfs, _ := ftpFS(t, fsTree, "pub/")
	info, err := fs.Stat(ftpfs, "empty.bin")
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := info.Sys().(fetch.TreeEntry); !ok || info.Size() != 0 || e.Size != 0 {
		t.Errorf("ftp empty.bin: Size %d, Sys %#v", info.Size(), info.Sys())
	}
}
