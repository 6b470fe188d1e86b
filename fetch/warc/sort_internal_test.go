package warc

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// An index made at start in runs, written aside and merged, finds every
// capture as one sorted in memory does.
func TestIndexInRuns(t *testing.T) {
	old := sortRun
	sortRun = 3
	defer func() { sortRun = old }()
	dir := t.TempDir()
	w, err := Create(filepath.Join(dir, "r"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	when := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range 20 {
		w.Write(Record{Type: "resource", URI: fmt.Sprintf("gopher://h/0/%02d", 19-i), Date: when, MediaType: "text/plain", Body: strings.NewReader(fmt.Sprint(i))})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	a, err := Open(filepath.Join(dir, "r.warc.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var urls []string
	a.URLs(func(u string, n int) bool { urls = append(urls, u); return true })
	if len(urls) != 20 || urls[0] != "gopher://h/0/00" || urls[19] != "gopher://h/0/19" {
		t.Errorf("URLs %q", urls)
	}
	for i := range 20 {
		if caps := a.Captures(fmt.Sprintf("gopher://h/0/%02d", i)); len(caps) != 1 {
			t.Errorf("%02d: %d captures", i, len(caps))
		}
	}
}
