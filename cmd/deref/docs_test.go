package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestDocumentedOnce: every flag the parser takes has its entry in the
// man page, and no entry is written twice (a flag that means the same in
// two commands is described once and named "as above" after); every exit
// code is described once in the man page's EXIT STATUS, and the README's
// table has the same codes, each once.
func TestDocumentedOnce(t *testing.T) {
	man := manPage()
	entries := map[string]int{}
	lines := strings.Split(man, "\n")
	for i := 0; i+2 < len(lines); i++ {
		if lines[i] == ".TP" {
			entries[lines[i+1]+"\n"+lines[i+2]]++
		}
	}
	for e, n := range entries {
		if n > 1 {
			t.Errorf("written %d times in the man page:\n%s", n, e)
		}
	}
	for _, f := range flagTable {
		if isRefused(f) || f.long == "" {
			continue
		}
		if !strings.Contains(man, `\fB\-\-`+manEsc.Replace(f.long)+`\fR`) {
			t.Errorf("--%s is not in the man page", f.long)
		}
	}

	var codes []string
	for _, l := range strings.Split(strings.TrimSpace(exitText), "\n")[1:] {
		codes = append(codes, strings.Fields(l)[0])
	}
	_, status, ok := strings.Cut(man, ".SH EXIT STATUS\n")
	if !ok {
		t.Fatal("no EXIT STATUS")
	}
	status, _, _ = strings.Cut(status, ".SH ")
	for _, c := range codes {
		if n := strings.Count(status, ".TP\n.B "+c+"\n"); n != 1 {
			t.Errorf("exit code %s is described %d times in the man page", c, n)
		}
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var table []string
	for _, m := range regexp.MustCompile(`(?m)^\| (\d+) \| `).FindAllStringSubmatch(string(readme), -1) {
		table = append(table, m[1])
	}
	if !slices.Equal(table, codes) {
		t.Errorf("the README's exit codes %v, deref -h's %v", table, codes)
	}
}

// TestIndexInHelp: deref index is among -h's usage lines, and deref help
// index is a topic.
func TestIndexInHelp(t *testing.T) {
	if r := runDeref(t, "", "-h"); !strings.Contains(r.stdout, "deref index WARC|CDXJ...") {
		t.Errorf("deref -h names no deref index:\n%s", r.stdout)
	}
	if r := runDeref(t, "", "help", "index"); r.code != 0 || !strings.Contains(r.stdout, "CDXJ") {
		t.Errorf("deref help index: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
}

// TestHelpGroupsSorted: each group of -h lists its flags by long name,
// and deref mirror -h has no Crawl group.
func TestHelpGroupsSorted(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"mirror", "-h"}, {"crawl", "-h"}, {"serve", "-h"}} {
		r := runDeref(t, "", args...)
		group, last := "", ""
		for _, l := range strings.Split(r.stdout, "\n") {
			switch {
			case strings.HasSuffix(l, ":") && !strings.HasPrefix(l, " "):
				group, last = l, ""
			case group != "" && strings.HasPrefix(strings.TrimLeft(l, " "), "-") && len(l)-len(strings.TrimLeft(l, " ")) <= 6:
				// A flag's own line (its help's lines are indented further).
				f := strings.Fields(l[strings.Index(l, "--"):])[0]
				if f < last {
					t.Errorf("%q %s %s after %s", args, group, f, last)
				}
				last = f
			}
		}
		if args[0] == "mirror" && strings.Contains(r.stdout, "\nCrawl:\n") {
			t.Error("deref mirror -h has a Crawl group")
		}
	}
}
