package warc

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Browse pages through a collection's URLs, forward and back, in a
// CDXJ index and in a ZipNum one across its blocks: every URL once, in
// order, the prefix kept to.
func TestBrowse(t *testing.T) {
	dir := t.TempDir()
	coll := filepath.Join(dir, "coll")
	os.Mkdir(coll, 0o755)
	const files = 7000
	writeSite(t, filepath.Join(coll, "a"), files)
	flat, err := Open(filepath.Join(coll, "a.warc.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer flat.Close()
	if err := WriteZipNum(filepath.Join(coll, "index"), coll); err != nil {
		t.Fatal(err)
	}
	zn, err := Open(coll)
	if err != nil {
		t.Fatal(err)
	}
	defer zn.Close()
	for name, a := range map[string]*Archive{"CDXJ": flat, "ZipNum": zn} {
		t.Run(name, func(t *testing.T) {
			prefix := "gopher://127.0.0.1:7070/0/"
			var pages [][]URLRow
			after := ""
			for {
				rows, more := a.Browse(prefix, after, false, 997)
				pages = append(pages, rows)
				if !more {
					break
				}
				after = rows[len(rows)-1].URL
				if len(pages) > 20 {
					t.Fatal("no end")
				}
			}
			seen := 0
			for _, p := range pages {
				for _, r := range p {
					if want := fmt.Sprintf("%sf%05d", prefix, seen); r.URL != want || r.Captures != 1 || r.Mime != "text/plain" {
						t.Fatalf("row %d: %+v, want %s", seen, r, want)
					}
					seen++
				}
			}
			if seen != files || len(pages) != 8 {
				t.Fatalf("%d URLs in %d pages", seen, len(pages))
			}
			// Back from the last page's first row: the page before it.
			last := pages[len(pages)-1]
			back, more := a.Browse(prefix, last[0].URL, true, 997)
			if !more || len(back) != 997 || back[0].URL != pages[len(pages)-2][0].URL || back[996].URL != pages[len(pages)-2][996].URL {
				t.Errorf("back: %d rows from %s, more %v", len(back), back[0].URL, more)
			}
			back, more = a.Browse(prefix, pages[1][0].URL, true, 997)
			if more || back[0].URL != pages[0][0].URL {
				t.Errorf("back to the first page: %s, more %v", back[0].URL, more)
			}
			all, _ := a.Browse("", "", false, 100)
			hosts := map[string]bool{}
			for _, r := range all {
				hosts[strings.SplitN(r.URL, "/", 4)[2]] = true
			}
			if len(all) != 100 || len(hosts) < 2 {
				t.Errorf("no prefix: %d rows of %v", len(all), hosts)
			}
			if rows, more := a.Browse("http://127.0.0.1:8080", "", false, 10); len(rows) != 3 || more {
				t.Errorf("the web site: %+v", rows)
			}
		})
	}
}
