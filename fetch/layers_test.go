package fetch_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLayers: the arrows between the project's packages run one way. url
// knows no protocol; protocols and the internal helpers know no engine;
// the engine knows no command; the development commands in
// internal/devcmd may use anything, and nothing uses them.
func TestLayers(t *testing.T) {
	const mod = "github.com/urlderef/deref/"
	below := func(dir string, deny ...string) func(string) string {
		return func(imp string) string {
			for _, d := range deny {
				if imp == mod+d || strings.HasPrefix(imp, mod+d+"/") {
					return dir + " is below " + d
				}
			}
			return ""
		}
	}
	rules := []struct {
		dir  string
		deny func(string) string
	}{
		{"url", below("url", "protocols", "fetch", "cmd", "examples", "internal/devcmd")},
		{"protocols", below("protocols", "fetch", "cmd", "examples", "internal/devcmd")},
		{"internal/devcmd", below("internal/devcmd", "cmd", "examples")},
		{"internal", below("internal", "fetch", "cmd", "examples", "internal/devcmd")},
		{"fetch", below("fetch", "cmd", "examples", "internal/devcmd")},
		{"examples", below("examples", "cmd", "internal/devcmd")},
		{"cmd", below("cmd", "internal/devcmd")},
	}
	checked := 0
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && p != "..") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, ".."+string(filepath.Separator)))
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, r := range rules {
			if !strings.HasPrefix(rel, r.dir+"/") {
				continue
			}
			for _, is := range f.Imports {
				imp, _ := strconv.Unquote(is.Path.Value)
				if why := r.deny(imp); why != "" {
					t.Errorf("%s imports %s: %s", rel, imp, why)
				}
			}
			break
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("only %d files checked: is the walk at the module's root?", checked)
	}
}
