package warc

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nlnwa/gowarc"
)

// Bodies handed over by several retrievals at once, many more than the
// writer queues, are all written, each retrieval's in the order handed
// over, a group's records together; the jobs waiting never outnumber
// maxJobs, their writers waiting instead.
func TestQueuedBodies(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q")
	w, err := Create(path, Options{Numbered: true})
	if err != nil {
		t.Fatal(err)
	}
	const producers, each = 4, 400 // 1,600 jobs: several times maxJobs
	var mu sync.Mutex
	most := 0
	var wg sync.WaitGroup
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var g *Group
			for i := range each {
				if i%10 == 0 {
					g = w.NewGroup()
				}
				uri := fmt.Sprintf("gopher://h/0/%d/%d", p, i)
				grp := g
				if p == 0 {
					grp = nil // one retrieval's records in no group
				}
				w.build(len(uri), func(write func(Record) (string, error)) error {
					w.jobsMu.Lock()
					n := len(w.jobs)
					w.jobsMu.Unlock()
					mu.Lock()
					most = max(most, n)
					mu.Unlock()
					_, err := write(Record{Type: "resource", URI: uri, MediaType: "text/plain", Body: strings.NewReader(uri), Group: grp})
					return err
				})
				if i%10 == 9 && p != 0 {
					g.Commit(func(string, int64) {})
				}
			}
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := gowarc.NewWarcFileReader(path+"-00000.warc.gz", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	next := make([]int, producers)
	var run []string // the producers of the latest records, for the groups
	records := 0
	for {
		rec, _, _, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.Type() != gowarc.Resource {
			continue
		}
		records++
		var p, i int
		if _, err := fmt.Sscanf(rec.WarcHeader().Get(gowarc.WarcTargetURI), "gopher://h/0/%d/%d", &p, &i); err != nil {
			t.Fatal(err)
		}
		if i != next[p] {
			t.Fatalf("producer %d's record %d came where its record %d should", p, i, next[p])
		}
		next[p]++
		if p != 0 {
			run = append(run, fmt.Sprint(p, i/10))
		}
	}
	if records != producers*each {
		t.Errorf("%d records, want %d", records, producers*each)
	}
	for k := 0; k < len(run); k += 10 {
		for _, g := range run[k : k+10] {
			if g != run[k] {
				t.Fatalf("a group's records are not together: %v", run[k:k+10])
			}
		}
	}
	if most > maxJobs {
		t.Errorf("%d jobs waited at once; at most %d may", most, maxJobs)
	}
}
