package crawl_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch/crawl"
	"github.com/urlderef/deref/fetch/crawl/shared"
	"github.com/urlderef/deref/fetch/warc"
	"github.com/urlderef/deref/internal/testserver/redisd"
)

// sharedWorker crawls from start as the worker name of the shared
// crawl at store, into dir/hole-NAME-NNNNN.warc.gz.
func sharedWorker(ctx context.Context, store, name, start, dir string) error {
	f, err := shared.Open(ctx, store, shared.Options{Worker: name, Lease: 600 * time.Millisecond})
	if err != nil {
		return err
	}
	defer f.Close()
	w, err := warc.Create(filepath.Join(dir, "hole-"+name), warc.Options{Numbered: true, CDX: true})
	if err != nil {
		return err
	}
	c := client()
	rec := &warc.Recorder{W: w}
	c.Recorder = rec
	_, err = crawl.Run(ctx, c, []string{start}, crawl.Options{Frontier: f, Parallel: 2})
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = rec.Err()
	}
	return err
}

// TestSharedCrawlChild is the worker TestSharedCrawlKilled kills; it does
// nothing unless started by it.
func TestSharedCrawlChild(t *testing.T) {
	store := os.Getenv("DEREF_SHARED_CHILD_STORE")
	if store == "" {
		t.Skip("run by TestSharedCrawlKilled")
	}
	if err := sharedWorker(context.Background(), store, "a", os.Getenv("DEREF_SHARED_CHILD_START"), os.Getenv("DEREF_SHARED_CHILD_DIR")); err != nil {
		t.Fatal(err)
	}
}

// Workers of one crawl share its frontier in a real redis-server: worker
// a is killed (SIGKILL) part way, worker b joins, and a is started again
// under its name beside it. Every item of the hole is fetched, only the
// URL under way at the kill twice (one host, one connection at a time),
// robots.txt once; the WARC files of both series hold every URL, at most
// the one under way twice, a's first file cut after the records the store
// acknowledged; each file's index has a line a record, and deref index's
// merge of them all is one sorted index.
func TestSharedCrawlKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	s := redisd.Start(t)
	store := s.URL("killed")
	h := startBigHole(t, 60)
	dir := t.TempDir()
	start := "gopher://" + h.ln.Addr().String() + "/1"
	cmd := exec.Command(os.Args[0], "-test.run=^TestSharedCrawlChild$")
	cmd.Env = append(os.Environ(), "DEREF_SHARED_CHILD_STORE="+store, "DEREF_SHARED_CHILD_START="+start, "DEREF_SHARED_CHILD_DIR="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	watch, err := shared.Open(context.Background(), store, shared.Options{Watch: true})
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := watch.Status(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if st.Settled >= 30 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the first worker settled %d in 30 s", st.Settled)
		}
		time.Sleep(time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, name := range []string{"b", "a"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = sharedWorker(context.Background(), store, name, start, dir)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	h.mu.Lock()
	twice := 0
	for _, sel := range h.want() {
		switch n := h.asked[sel]; {
		case n == 0:
			t.Errorf("%q never asked for", sel)
		case n > 1:
			twice++
		}
	}
	if twice > 1 || h.asked["robots.txt"] != 1 {
		t.Errorf("%d selectors asked for twice (want at most the one under way), robots.txt %d times: %v", twice, h.asked["robots.txt"], h.asked)
	}
	h.mu.Unlock()
	files, _ := filepath.Glob(filepath.Join(dir, "hole-*.warc.gz*"))
	sort.Strings(files)
	// a's first file, mended, and whatever a and b wrote after (the
	// one whose claims wake first may take every URL left: one host).
	if len(files) < 2 || !strings.HasSuffix(files[0], "hole-a-00000.warc.gz") {
		t.Fatalf("files %v", files)
	}
	for _, f := range files[1:] {
		if b := filepath.Base(f); b != "hole-a-00001.warc.gz" && b != "hole-b-00000.warc.gz" {
			t.Errorf("file %s", f)
		}
	}
	uris, dup := archivedURIs(t, files)
	if len(dup) > 1 || len(uris) != len(h.want())+1 { // and robots.txt
		t.Errorf("%d URLs in the WARC files, want %d; %v", len(uris), len(h.want())+1, dup)
	}
	var b strings.Builder
	if err := warc.WriteIndex(&b, files...); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if !sort.StringsAreSorted(lines) || len(lines) < len(uris) {
		t.Errorf("the merged index: %d lines, sorted %v", len(lines), sort.StringsAreSorted(lines))
	}
	st, _ := watch.Status(context.Background())
	if st.Queued != 0 || st.Leased != 0 || st.Settled != int64(len(h.want())) {
		t.Errorf("status at the end %+v, want %d settled", st, len(h.want()))
	}
}
