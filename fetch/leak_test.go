package fetch_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/internal/testserver/faults"
	"github.com/urlderef/deref/url"
)

// openFiles counts this process's open descriptors (Linux), or -1.
func openFiles() int {
	des, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(des)
}

// TestNoLeaks makes 10,000 failing retrievals through one Client, every
// protocol and every fault that fails at once (reset, a size that lies, a
// line or reply without end, a drop), and checks that the goroutines and
// open descriptors come back to where they started.
func TestNoLeaks(t *testing.T) {
	type row struct {
		table faults.Table
		fault string
	}
	var rows []row
	for _, table := range faults.Tables {
		for _, f := range []string{faults.Reset, faults.LieAboutSize, faults.EndlessLine, faults.EndlessReply, faults.DropMidBody, faults.DropBeforeFinal} {
			if _, ok := table.Faults[f]; ok {
				rows = append(rows, row{table, f})
			}
		}
	}
	var servers []*faults.Server
	for _, r := range rows {
		s, err := r.table.Start(r.fault)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		servers = append(servers, s)
	}
	c := fetch.NewClient()
	c.NetrcFile = ""
	c.Proxy = func(*url.URL) (*url.URL, error) { return nil, nil }
	c.ConnectTimeout, c.IdleTimeout = time.Second, 2*time.Second
	c.MaxLineLength, c.MaxListing, c.MaxBytes = 4<<10, 64<<10, 64<<10
	dir := t.TempDir()
	once := func(i int) {
		s := servers[i%len(servers)]
		_, err := c.DownloadWith(context.Background(), s.URL, dir, fetch.DownloadOptions{Name: fmt.Sprintf("obj%d", i%16)})
		if err == nil {
			t.Errorf("%s: no error", s.URL)
		}
	}
	for i := range len(servers) {
		once(i) // warm up: pools, timers, lazily started goroutines
	}
	runtime.GC()
	g0, f0 := runtime.NumGoroutine(), openFiles()
	const n, workers = 10000, 8
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				once(i)
			}
		}()
	}
	wg.Wait()
	// Connections closed by the servers' side finish asynchronously.
	var g1, f1 int
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		runtime.GC()
		if g1, f1 = runtime.NumGoroutine(), openFiles(); g1 <= g0+2 && f1 <= f0+2 {
			break
		}
	}
	if g1 > g0+2 {
		t.Errorf("goroutines %d before %d failing retrievals, %d after", g0, n, g1)
	}
	if f0 >= 0 && f1 > f0+2 {
		t.Errorf("open descriptors %d before %d failing retrievals, %d after", f0, n, f1)
	}
	t.Logf("%d failing retrievals over %d faults: goroutines %d -> %d, descriptors %d -> %d", n, len(servers), g0, g1, f0, f1)
}
