package crawl_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch/crawl"
	"github.com/urlderef/deref/internal/testserver"
)

// treeHole is a Gopher hole made on the fly: menu /m/I lists nine text
// items /m/I/K and the menus /m/(2I+1) and /m/(2I+2) below it, menus in
// all: ten URLs a menu, and a breadth-first crawl holds about half the
// last level's items queued at once. It counts the requests, and notes
// when the first one after mark came.
type treeHole struct {
	ln     net.Listener
	menus  int
	asked  atomic.Int64
	mu     sync.Mutex
	mark   time.Time
	firstN time.Time // the first request after mark
}

func startTreeHole(tb testing.TB, menus int) *treeHole {
	h := &treeHole{menus: menus}
	if err := testserver.ListenInto(&h.ln, h.serve); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { h.ln.Close() })
	return h
}

func (h *treeHole) serve(c net.Conn) {
	defer c.Close()
	h.asked.Add(1)
	h.mu.Lock()
	if !h.mark.IsZero() && h.firstN.IsZero() {
		h.firstN = time.Now()
	}
	h.mu.Unlock()
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return
	}
	sel := strings.TrimRight(line, "\r\n")
	w := bufio.NewWriter(c)
	defer w.Flush()
	rest, ok := strings.CutPrefix(sel, "/m/")
	if !ok {
		w.WriteString("3not here\t\terror.host\t1\r\n.\r\n")
		return
	}
	if strings.Contains(rest, "/") {
		w.WriteString("text of " + sel + "\r\n.\r\n")
		return
	}
	i, _ := strconv.Atoi(rest)
	host, port, _ := net.SplitHostPort(h.ln.Addr().String())
	for k := range 9 {
		fmt.Fprintf(w, "0Item %d\t/m/%d/%d\t%s\t%s\r\n", k, i, k, host, port)
	}
	for _, j := range []int{2*i + 1, 2*i + 2} {
		if j < h.menus {
			fmt.Fprintf(w, "1Menu %d\t/m/%d\t%s\t%s\r\n", j, j, host, port)
		}
	}
	w.WriteString(".\r\n")
}

// BenchmarkCrawlMillion crawls a generated hole of 1,000,000 URLs
// (100,000 menus; DEREF_BENCH_MENUS sets another count) with a state
// file, 8 connections to the one server, in a process of its own:
// peak-RSS-B/URL is that process's peak resident memory over the URLs,
// state-B/URL the state file's size over them.
func BenchmarkCrawlMillion(b *testing.B) {
	menus := benchMenus()
	for range b.N {
		h := startTreeHole(b, menus)
		state := filepath.Join(b.TempDir(), "state")
		begin := time.Now()
		cmd := millionChild(b, h, state)
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
		took := time.Since(begin)
		urls := menus * 10
		if n := h.asked.Load(); n != int64(urls)+1 { // and robots.txt
			b.Fatalf("%d requests, want %d", n, urls+1)
		}
		fi, _ := os.Stat(state)
		if rss := testserver.MaxRSS(cmd.ProcessState); rss > 0 {
			b.ReportMetric(float64(rss)/float64(urls), "peak-RSS-B/URL")
		}
		b.ReportMetric(float64(fi.Size())/float64(urls), "state-B/URL")
		b.ReportMetric(float64(urls)/took.Seconds(), "URLs/s")
	}
}

func benchMenus() int {
	if s := os.Getenv("DEREF_BENCH_MENUS"); s != "" {
		if n, err := strconv.Atoi(s); err == nil {
			return n
		}
	}
	return 100_000
}

// millionChild starts TestMillionChild on h with the state file state.
func millionChild(b *testing.B, h *treeHole, state string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestMillionChild$")
	cmd.Env = append(os.Environ(), "DEREF_MILLION_START=gopher://"+h.ln.Addr().String()+"/1/m/0", "DEREF_MILLION_STATE="+state)
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	return cmd
}

// TestMillionChild is the crawl BenchmarkResumeMillion kills and
// resumes; it does nothing unless started by it. It writes a line to
// standard output once its state is read, just before it crawls.
func TestMillionChild(t *testing.T) {
	start, state := os.Getenv("DEREF_MILLION_START"), os.Getenv("DEREF_MILLION_STATE")
	if start == "" {
		t.Skip("run by BenchmarkResumeMillion")
	}
	_, err := crawl.Run(context.Background(), client(), []string{start}, crawl.Options{State: state, Parallel: 8, PerHost: 8})
	if err != nil {
		t.Fatal(err)
	}
}

// settledLines counts the settled URLs of a state file, reading only what
// was added since off (its last call's return).
func settledLines(path string, off int64, n *int) int64 {
	f, err := os.Open(path)
	if err != nil {
		return off
	}
	defer f.Close()
	f.Seek(off, io.SeekStart)
	b, _ := io.ReadAll(f)
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		*n += bytes.Count(b[:i+1], []byte(`{"url":`))
		return off + int64(i+1)
	}
	return off
}

// BenchmarkResumeMillion crawls the 1,000,000-URL hole in a process that
// is SIGKILLed once 500,000 URLs are settled, then resumes it in
// another: first-request-s is how long the resumed process took from
// its start to its first request, refetched-% the share of the hole
// asked for again.
func BenchmarkResumeMillion(b *testing.B) {
	menus := benchMenus()
	for range b.N {
		h := startTreeHole(b, menus)
		state := filepath.Join(b.TempDir(), "state")
		child := func() *exec.Cmd { return millionChild(b, h, state) }
		first := child()
		var off int64
		settled := 0
		for settled < menus*10/2 {
			time.Sleep(50 * time.Millisecond)
			off = settledLines(state, off, &settled)
		}
		first.Process.Kill()
		first.Wait()
		time.Sleep(100 * time.Millisecond)
		before := h.asked.Load()
		h.mu.Lock()
		h.mark = time.Now()
		h.mu.Unlock()
		second := child()
		if err := second.Wait(); err != nil {
			b.Fatal(err)
		}
		h.mu.Lock()
		took := h.firstN.Sub(h.mark)
		h.mu.Unlock()
		total := h.asked.Load() - 1 // robots.txt, asked once by each run
		b.ReportMetric(took.Seconds(), "first-request-s")
		b.ReportMetric(100*float64(total-int64(menus*10))/float64(menus*10), "refetched-%")
		b.ReportMetric(float64(before), "asked-before-kill")
	}
}
