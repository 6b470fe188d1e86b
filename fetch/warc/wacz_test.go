package warc

import (
	"archive/zip"
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A WACZ of deref's WARC files: every file listed with its digest and
// size, the WARC files stored, the index pointing at whole records, the
// pages a person would open; a byte changed in it is found.
func TestWACZ(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(filepath.Join(dir, "c"), Options{Software: "deref/test", CDX: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []Record{
		{Type: "resource", URI: "gopher://h.example/1/", MediaType: "application/gopher-menu", Protocol: "gopher", Body: strings.NewReader("iA menu\tfake\t(NULL)\t0\r\n.\r\n"), Status: "-"},
		{Type: "resource", URI: "gopher://h.example/0/a.txt", MediaType: "text/plain", Protocol: "gopher", Body: strings.NewReader("alpha\n"), Status: "-"},
	} {
		r.Date = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
		if _, err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "c.wacz")
	if err := CreateWACZ(out, []string{filepath.Join(dir, "c.warc.gz")}, WACZOptions{Software: "deref/test"}); err != nil {
		t.Fatal(err)
	}
	problems, err := ValidateWACZ(out)
	if err != nil || len(problems) != 0 {
		t.Fatalf("%v %q", err, problems)
	}
	zr, err := zip.OpenReader(out)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var pages string
	var dataAt int64
	for _, f := range zr.File {
		names = append(names, f.Name)
		if f.Name == "pages/pages.jsonl" {
			rc, _ := f.Open()
			sc := bufio.NewScanner(rc)
			for sc.Scan() {
				pages += sc.Text() + "\n"
			}
			rc.Close()
		}
		if f.Name == "archive/c.warc.gz" {
			dataAt, _ = f.DataOffset()
		}
	}
	zr.Close()
	if strings.Join(names, " ") != "archive/c.warc.gz indexes/index.cdxj pages/pages.jsonl datapackage.json datapackage-digest.json" {
		t.Errorf("files: %v", names)
	}
	if !strings.Contains(pages, `"url":"gopher://h.example/1/"`) || strings.Contains(pages, "a.txt") {
		t.Errorf("pages:\n%s", pages)
	}
	if _, err := os.Stat(out + ".tmp"); err == nil {
		t.Error("a temporary file was left")
	}
	// A byte of the stored WARC file changed.
	f, err := os.OpenFile(out, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	f.ReadAt(b, dataAt+40)
	f.WriteAt([]byte{b[0] ^ 0xff}, dataAt+40)
	f.Close()
	problems, _ = ValidateWACZ(out)
	if !strings.Contains(strings.Join(problems, "\n"), "archive/c.warc.gz: ") { // its CRC, or its sha256

		t.Errorf("the changed byte was not found: %q", problems)
	}
}
