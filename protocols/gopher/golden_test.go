package gopher

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urlderef/deref/internal/golden"
	"github.com/urlderef/deref/protocols"
)

// TestGolden parses menus and attribute replies captured from pygopherd
// and gophernicus (testdata/gopher/*.menu, *.attrs at the top) and compares the rendering
// with the .golden files beside them; -update rewrites them.
func TestGolden(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/gopher/*.menu")
	attrs, _ := filepath.Glob("../../testdata/gopher/*.attrs")
	if len(files) == 0 || len(attrs) == 0 {
		t.Fatal("no captures in testdata")
	}
	for _, in := range append(files, attrs...) {
		raw, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if strings.HasSuffix(in, ".menu") {
			for _, e := range ParseMenu(string(raw)) {
				b.WriteString(protocols.FormatEntry(e) + "\t" + e.Type + "\n")
			}
		} else {
			for _, a := range ParseAttributes(string(raw)) {
				b.WriteString("+" + a.Name + ": " + a.Value + "\t(" + a.Item + ")\n")
				for _, l := range a.Lines {
					b.WriteString("  " + l + "\n")
				}
			}
		}
		golden.Check(t, in+".golden", b.String())
	}
}

func FuzzParseMenu(f *testing.F) {
	for _, name := range []string{"../../testdata/gopher/pygopherd-pub.menu", "../../testdata/gopher/gophernicus-pub.menu"} {
		b, _ := os.ReadFile(name)
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, s string) {
		ParseMenu(s)
		ParseAttributes(s)
	})
}
