package crawl_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/crawl"
	"github.com/urlderef/deref/fetch/warc"
)

// A crawl of a tree into a WARC file, as deref crawl --warc-file does it:
// here a file: folder, the same for a Gopher hole, an FTP archive or a
// site. Each URL reached is fetched once; Events says what became of it.
func ExampleRun() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	os.MkdirAll(filepath.Join(dir, "hole", "docs"), 0o755)
	os.WriteFile(filepath.Join(dir, "hole", "about.txt"), []byte("about\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "hole", "docs", "guide.txt"), []byte("a guide\n"), 0o644)

	w, err := warc.Create(filepath.Join(dir, "hole"), warc.Options{Software: "example/1.0"})
	if err != nil {
		fmt.Println(err)
		return
	}
	c := fetch.NewClient()
	c.Recorder = &warc.Recorder{W: w}
	start := "file://" + filepath.ToSlash(dir) + "/hole/"
	var mu sync.Mutex
	var fetched []string
	rep, err := crawl.Run(context.Background(), c, []string{start}, crawl.Options{
		Prefix: true, // below the start only
		Events: func(ev crawl.Event) {
			mu.Lock()
			defer mu.Unlock()
			if ev.Err == nil {
				fetched = append(fetched, strings.TrimPrefix(ev.URL, start))
			}
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := w.Close(); err != nil {
		fmt.Println(err)
		return
	}
	sort.Strings(fetched)
	fmt.Printf("%q\n", fetched)
	fmt.Println(rep.Fetched, "fetched,", rep.Failed, "failed")
	// Output:
	// ["" "about.txt" "docs/" "docs/guide.txt"]
	// 4 fetched, 0 failed
}
