package mirror_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/crawl/shared"
	"github.com/urlderef/deref/fetch/mirror"
	"github.com/urlderef/deref/internal/testserver/redisd"
)

// Three mirrors sharing a frontier in a real redis-server, each into a
// destination of its own (each at 8 MiB/s, so that one does not take
// every folder before the others ask), mirror the tree once between
// them: every file in exactly one destination, byte for byte.
func TestSharedMirror(t *testing.T) {
	s := redisd.Start(t)
	root := t.TempDir()
	files := map[string]string{}
	for d := range 6 {
		for f := range 5 {
			files[fmt.Sprintf("d%d/sub%d/f%d.txt", d, d%2, f)] = strings.Repeat(fmt.Sprintf("file %d of %d\n", f, d), 10000)
		}
		files[fmt.Sprintf("d%d/top.txt", d)] = fmt.Sprint("top ", d)
	}
	files["readme"] = "the top"
	makeTree(t, root, files)
	src := serveFTP(t, root)
	var dsts [3]string
	var reports [3]*mirror.Report
	var wg sync.WaitGroup
	for i := range dsts {
		dsts[i] = filepath.Join(t.TempDir(), "dst")
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := shared.Open(context.Background(), s.URL("mirror"), shared.Options{Worker: fmt.Sprint("m", i), PerHost: 100})
			if err != nil {
				t.Error(err)
				return
			}
			defer f.Close()
			reports[i], err = mirror.Run(context.Background(), fetch.NewClient(), src, dsts[i], mirror.Options{Parallel: 2, Frontier: f, LimitRate: 8 << 20})
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	union := map[string]string{}
	for i, d := range dsts {
		for p, c := range readTree(t, d) {
			if _, ok := union[p]; ok {
				t.Errorf("%s mirrored by two workers (the last %d)", p, i)
			}
			union[p] = c
		}
	}
	if len(union) != len(files) {
		t.Errorf("%d files mirrored, want %d", len(union), len(files))
	}
	for p, c := range files {
		if union[p] != c {
			t.Errorf("%s: %d bytes, want the %d served", p, len(union[p]), len(c))
		}
	}
	busy := 0
	for i, r := range reports {
		if r != nil && r.Failed > 0 {
			t.Errorf("worker %d: %v", i, r.FirstError())
		}
		if r != nil && r.New > 0 {
			busy++
		}
	}
	if busy < 2 {
		t.Errorf("%d of the 3 workers fetched anything", busy)
	}
}
