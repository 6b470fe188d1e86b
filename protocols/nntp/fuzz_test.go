package nntp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// seedLines adds the lines of a capture in testdata as a seed.
func seedLines(f *testing.F, name string) {
	if b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "nntp", name)); err == nil {
		f.Add(string(b))
	}
}

// FuzzOverview parses OVER/XOVER lines, seeded with INN's: no panic, and
// every article entry has a URL.
func FuzzOverview(f *testing.F) {
	seedLines(f, "inn-over.txt")
	f.Add("1\tSubject\tFrom <a@b>\tSun, 22 Nov 2026 10:00:00 +0000\t<id@x>\t\t120\t3\r\n")
	f.Fuzz(func(t *testing.T, s string) {
		for _, e := range ParseOverview(strings.Split(s, "\n"), "news:") {
			if e.Name == "" && e.URL == "" && e.Number == 0 && e.Type == "" && e.Kind != 6 {
				t.Fatalf("empty entry %+v", e)
			}
		}
	})
}

// FuzzActive parses LIST ACTIVE and LIST NEWSGROUPS lines, seeded with
// INN's: no panic.
func FuzzActive(f *testing.F) {
	seedLines(f, "inn-active.txt")
	seedLines(f, "inn-newsgroups.txt")
	f.Add("local.test 0000000002 0000000001 y\r\n")
	f.Fuzz(func(t *testing.T, s string) {
		lines := strings.Split(s, "\n")
		ParseActive(lines, "news:", ParseDescriptions(lines))
	})
}
