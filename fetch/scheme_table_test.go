package fetch_test

import (
	"cmp"
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/mirror"
	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// memFetcher is a protocol written outside the engine: mem://tree/PATH
// serves files from a map, folders (paths ending in "/") as listings, and
// honours offsets.
type memFetcher struct{ files map[string]string }

var memTime = time.Date(2022, 5, 6, 7, 8, 9, 0, time.UTC)

func (m memFetcher) Fetch(_ context.Context, req *protocols.Request) (*protocols.Response, error) {
	p := strings.TrimPrefix(req.URL.Path, "/")
	if p == "" || strings.HasSuffix(p, "/") {
		seen := map[string]bool{}
		var entries []protocols.Entry
		for name, content := range m.files {
			rest, ok := strings.CutPrefix(name, p)
			if !ok {
				continue
			}
			first, _, deeper := strings.Cut(rest, "/")
			if seen[first] {
				continue
			}
			seen[first] = true
			e := protocols.Entry{Kind: protocols.KindFile, Name: first, Size: int64(len(content)), ModTime: memTime, URL: "mem://tree/" + p + first}
			if deeper {
				e.Kind, e.Size, e.URL = protocols.KindDirectory, -1, e.URL+"/"
			}
			entries = append(entries, e)
		}
		if len(entries) == 0 && p != "" {
			return nil, fmt.Errorf("%w: %s", protocols.ErrNotFound, p)
		}
		sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
		return &protocols.Response{Kind: protocols.KindDirectory, Entries: entries, Size: -1, Body: io.NopCloser(strings.NewReader(""))}, nil
	}
	content, ok := m.files[p]
	if !ok {
		return nil, fmt.Errorf("%w: %s", protocols.ErrNotFound, p)
	}
	off := min(req.Offset, int64(len(content)))
	return &protocols.Response{Kind: protocols.KindFile, Offset: off, Size: int64(len(content)) - off, ModTime: memTime,
		Name: path.Base(p), Body: io.NopCloser(strings.NewReader(content[off:]))}, nil
}

// A protocol registered from outside works end to end: retrieval, resume,
// listing, download, the mirror and the file system, with no change to
// the engine.
func TestRegisteredScheme(t *testing.T) {
	files := map[string]string{"a.txt": "alpha\n", "sub/b.txt": "bravo\n", "sub/deep/c.txt": "charlie\n"}
	c := newClient()
	c.Register(fetch.Scheme{Name: "mem", Fetcher: memFetcher{files}, Tree: protocols.TreeListing})
	ctx := context.Background()

	if got, err := body(t, c, "mem://tree/a.txt"); err != nil || got != "alpha\n" {
		t.Errorf("get: %q %v", got, err)
	}
	resp, err := c.Fetch(ctx, url.MustParse("mem://tree/sub/b.txt"), 2)
	if err != nil || resp.Offset != 2 {
		t.Fatalf("resume: %v %+v", err, resp)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "avo\n" {
		t.Errorf("resumed: %q", b)
	}
	resp, err = c.Get(ctx, "mem://tree/sub/")
	if err != nil || resp.Kind != fetch.KindDirectory || len(resp.Entries) != 2 {
		t.Fatalf("listing: %v %+v", err, resp)
	}
	resp.Body.Close()
	dir := t.TempDir()
	if p, err := c.Download(ctx, "mem://tree/sub/deep/c.txt", dir); err != nil || filepath.Base(p) != "c.txt" {
		t.Errorf("download: %s %v", p, err)
	}

	dst := t.TempDir()
	rep, err := mirror.Run(ctx, c, "mem://tree/", dst, mirror.Options{})
	if err != nil || rep.New != 3 || rep.Failed != 0 {
		t.Fatalf("mirror: %v %+v", err, rep)
	}
	for name, content := range files {
		if b, _ := os.ReadFile(filepath.Join(dst, filepath.FromSlash(name))); string(b) != content {
			t.Errorf("mirrored %s: %q", name, b)
		}
	}
	rep, err = mirror.Run(ctx, c, "mem://tree/", dst, mirror.Options{OnlyNewer: true})
	if err != nil || rep.Unchanged != 3 {
		t.Errorf("second mirror: %v %+v", err, rep)
	}

	fsys, err := fetch.NewFS(ctx, c, "mem://tree/")
	if err != nil {
		t.Fatal(err)
	}
	if err := fstest.TestFS(fsys, "a.txt", "sub/b.txt", "sub/deep/c.txt"); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.ReadFile(fsys, "sub/none"); err == nil {
		t.Error("a missing file was read")
	}
}

// The engine and the command branch on no scheme's name: a comparison of
// a URL's Scheme with a name, or a switch on it, appears only in the
// tables that wire the built-in schemes (fetch/schemes.go,
// cmd/deref/schemes.go).
func TestNoSchemeNamesOutsideTheTables(t *testing.T) {
	names := map[string]bool{}
	for _, s := range fetch.NewClient().Schemes() {
		names[s] = true
	}
	for _, s := range []string{"mailto", "tn3270", "rlogin"} {
		names[s] = true
	}
	var paths []string
	for _, dir := range []string{".", filepath.Join("..", "cmd")} {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() && d.Name() == "testdata" {
				return cmp.Or(err, filepath.SkipDir)
			}
			if strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") && p != "schemes.go" && p != filepath.Join("..", "cmd", "deref", "schemes.go") {
				paths = append(paths, p)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(paths) < 50 {
		t.Fatalf("%d files: the walk missed the packages", len(paths))
	}
	fset := token.NewFileSet()
	for _, p := range paths {
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				if (n.Op == token.EQL || n.Op == token.NEQ) && (isScheme(n.X) && isName(n.Y, names) || isScheme(n.Y) && isName(n.X, names)) {
					t.Errorf("%s: compares a scheme with a name", fset.Position(n.Pos()))
				}
			case *ast.SwitchStmt:
				if n.Tag != nil && isScheme(n.Tag) {
					t.Errorf("%s: switches on a scheme", fset.Position(n.Pos()))
				}
			case *ast.KeyValueExpr: // url.URL{Scheme: "news"}, map[string]bool{"http": true}
				if k, ok := n.Key.(*ast.Ident); ok && k.Name == "Scheme" && isName(n.Value, names) || isName(n.Key, names) {
					t.Errorf("%s: names a scheme in a literal", fset.Position(n.Pos()))
				}
			case *ast.BasicLit: // "news:" + id
				if v, err := strconv.Unquote(n.Value); err == nil && n.Kind == token.STRING {
					if name, ok := strings.CutSuffix(v, ":"); ok && names[name] {
						t.Errorf("%s: makes a URL of scheme %s", fset.Position(n.Pos()), name)
					}
				}
			}
			return true
		})
	}
}

// isScheme says whether e names a scheme: a variable or field whose name
// has "scheme" in it (u.Scheme, scheme, proxyScheme), or a call on one
// (strings.ToLower(u.Scheme)).
func isScheme(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.SelectorExpr:
		return strings.Contains(strings.ToLower(e.Sel.Name), "scheme")
	case *ast.Ident:
		return strings.Contains(strings.ToLower(e.Name), "scheme")
	case *ast.CallExpr: // strings.ToLower(u.Scheme)
		return len(e.Args) == 1 && isScheme(e.Args[0])
	}
	return false
}

func isName(e ast.Expr, names map[string]bool) bool {
	l, ok := e.(*ast.BasicLit)
	if !ok || l.Kind != token.STRING {
		return false
	}
	v, err := strconv.Unquote(l.Value)
	return err == nil && names[v]
}
