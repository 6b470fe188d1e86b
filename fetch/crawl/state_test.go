package crawl_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nlnwa/gowarc"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/crawl"
	"github.com/urlderef/deref/fetch/warc"
	"github.com/urlderef/deref/url"
)

// bigHole is a generated Gopher hole: menus /m/0 ... /m/N-1, each
// listing its own text item, the next menu, a menu further on, the root
// and an item every menu lists; each answer comes after a short pause,
// so that a crawl of it takes long enough to be killed in the middle.
type bigHole struct {
	*menuServer
	menus int
}

func startBigHole(t *testing.T, menus int) *bigHole {
	h := &bigHole{menus: menus}
	h.menuServer = startMenuServer(t, h.answer)
	return h
}

func (h *bigHole) answer(c net.Conn, sel string, item itemFunc) {
	time.Sleep(2 * time.Millisecond)
	i := -1
	if n, _ := fmt.Sscanf(sel, "/m/%d", &i); n != 1 || sel != fmt.Sprintf("/m/%d", i) || i >= h.menus {
		i = -1
	}
	switch {
	case sel == "":
		io.WriteString(c, item('1', "First", "/m/0")+item('0', "Shared", "/shared.txt")+".\r\n")
	case strings.HasSuffix(sel, ".txt"):
		io.WriteString(c, "the text of "+sel+"\r\n.\r\n")
	case i >= 0:
		io.WriteString(c, item('0', "Own", fmt.Sprintf("/m/%d/own.txt", i))+item('1', "Next", fmt.Sprintf("/m/%d", (i+1)%h.menus))+
			item('1', "Far", fmt.Sprintf("/m/%d", (i*7+3)%h.menus))+item('1', "Top", "")+item('0', "Shared", "/shared.txt")+".\r\n")
	default:
		io.WriteString(c, "3not here\t\terror.host\t1\r\n.\r\n")
	}
}

// want is every selector of the hole.
func (h *bigHole) want() []string {
	out := []string{"", "/shared.txt"}
	for i := range h.menus {
		out = append(out, fmt.Sprintf("/m/%d", i), fmt.Sprintf("/m/%d/own.txt", i))
	}
	return out
}

// TestCrawlChild is the crawl a killed process runs; it does nothing
// unless started by TestResumeAfterKill.
func TestCrawlChild(t *testing.T) {
	start, dir := os.Getenv("DEREF_CRAWL_CHILD_START"), os.Getenv("DEREF_CRAWL_CHILD_DIR")
	if start == "" {
		t.Skip("run by TestResumeAfterKill")
	}
	if err := crawlWithState(start, dir); err != nil {
		t.Fatal(err)
	}
}

// crawlWithState crawls from start into dir/state and dir/hole-NNNNN.warc.gz.
func crawlWithState(start, dir string) error {
	w, err := warc.Create(filepath.Join(dir, "hole"), warc.Options{Numbered: true, CDX: true})
	if err != nil {
		return err
	}
	c := client()
	rec := &warc.Recorder{W: w}
	c.Recorder = rec
	_, err = crawl.Run(context.Background(), c, []string{start}, crawl.Options{State: filepath.Join(dir, "state"), Parallel: 2})
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = rec.Err()
	}
	return err
}

// A crawl killed (SIGKILL, at two points) and run again with its state
// ends with every item of the hole fetched, nothing settled fetched again
// (only what was under way at the kill), and the WARC files of the runs
// together holding each URL once, every one of them readable and indexed.
func TestResumeAfterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	for _, killAfter := range []int{1, 60} {
		t.Run(fmt.Sprint("after ", killAfter), func(t *testing.T) {
			h := startBigHole(t, 60)
			dir := t.TempDir()
			start := "gopher://" + h.ln.Addr().String() + "/1"
			cmd := exec.Command(os.Args[0], "-test.run=^TestCrawlChild$")
			cmd.Env = append(os.Environ(), "DEREF_CRAWL_CHILD_START="+start, "DEREF_CRAWL_CHILD_DIR="+dir)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			for settled(t, filepath.Join(dir, "state")) < killAfter {
				time.Sleep(time.Millisecond)
			}
			cmd.Process.Kill()
			cmd.Wait()
			// The server may not have read yet the request the process
			// sent just before it died: it is under way too.
			time.Sleep(100 * time.Millisecond)
			killedAt := settled(t, filepath.Join(dir, "state"))
			done := settledSelectors(t, filepath.Join(dir, "state"))
			h.mu.Lock()
			underWay := 0 // asked for, not settled: their records may not be whole
			for s := range h.asked {
				if !done[s] && s != "robots.txt" {
					underWay++
				}
			}
			h.mu.Unlock()
			if err := crawlWithState(start, dir); err != nil {
				t.Fatal(err)
			}
			h.mu.Lock()
			twice := 0
			for _, s := range h.want() {
				switch n := h.asked[s]; {
				case n == 0:
					t.Errorf("%q never asked for", s)
				case n > 1 && done[s]:
					t.Errorf("%q asked for again, settled before the kill", s)
				case n > 1:
					twice++
				}
			}
			if twice > underWay { // only what was under way at the kill
				t.Errorf("%d selectors asked for twice, %d under way at the kill: %v", twice, underWay, h.asked)
			}
			h.mu.Unlock()
			files, _ := filepath.Glob(filepath.Join(dir, "hole-*.warc.gz*"))
			if len(files) != 2 {
				t.Fatalf("files %v (killed after %d settled)", files, killedAt)
			}
			uris, dup := archivedURIs(t, files)
			if len(dup) > 0 || len(uris) != len(h.want())+1 { // and robots.txt
				t.Errorf("%d URLs in the WARC files, want %d; %v", len(uris), len(h.want())+1, dup)
			}
		})
	}
}

// archivedURIs counts the resource records of each URI in the WARC
// files, and lists the URIs found more than once; each file's index must
// have a line a resource record.
func archivedURIs(t *testing.T, files []string) (uris map[string]int, dup []string) {
	t.Helper()
	uris = map[string]int{}
	for _, f := range files {
		resources := 0
		for _, r := range readWARC(t, f) {
			if r.Type() == gowarc.Resource {
				uris[r.WarcHeader().Get(gowarc.WarcTargetURI)]++
				resources++
			}
		}
		cdx, err := os.ReadFile(warc.IndexName(f))
		if n := strings.Count(string(cdx), "\n"); err != nil || n != resources {
			t.Errorf("%s: %d resource records, %d index lines (%v)", f, resources, n, err)
		}
	}
	for u, n := range uris {
		if n != 1 {
			dup = append(dup, fmt.Sprintf("%s %d times", u, n))
		}
	}
	sort.Strings(dup)
	return uris, dup
}

// settled counts the URLs a state file says are settled.
func settled(t *testing.T, path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return strings.Count(string(b), `{"url":`)
}

// settledSelectors are the selectors of the URLs a state file holds as
// settled, in whole lines.
func settledSelectors(t *testing.T, path string) map[string]bool {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		var l struct{ URL string }
		if json.Unmarshal([]byte(line), &l) != nil || l.URL == "" {
			continue
		}
		_, rest, _ := strings.Cut(strings.TrimPrefix(l.URL, "gopher://"), "/")
		if rest != "" {
			rest = rest[1:] // the item type
		}
		out[rest] = true
	}
	return out
}

// readWARC reads every record of a finished WARC file.
func readWARC(t *testing.T, path string) []gowarc.WarcRecord {
	t.Helper()
	r, err := gowarc.NewWarcFileReader(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var out []gowarc.WarcRecord
	for {
		rec, _, _, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, rec)
	}
}

// A resumed run mends what a killed one left: the last WARC file cut
// after the records its state names (a record half written past them is
// dropped), finished and indexed; a file begun with nothing committed is
// removed; a state line cut short is dropped. Nothing settled is fetched
// again.
func TestResumeMendsWARC(t *testing.T) {
	h := startBigHole(t, 5)
	dir := t.TempDir()
	start := "gopher://" + h.ln.Addr().String() + "/1"
	if err := crawlWithState(start, dir); err != nil {
		t.Fatal(err)
	}
	first := filepath.Join(dir, "hole-00000.warc.gz")
	whole, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	// What a kill leaves: the file still open with a record half written,
	// no index, a file begun after it, a state line cut short.
	os.Remove(first)
	os.Remove(warc.IndexName(first))
	if err := os.WriteFile(first+".open", append(whole, whole[len(whole)/2:]...), 0o644); err != nil {
		t.Fatal(err)
	}
	begun := filepath.Join(dir, "hole-00001.warc.gz")
	os.WriteFile(begun+".open", whole[:100], 0o644)
	st, _ := os.OpenFile(filepath.Join(dir, "state"), os.O_APPEND|os.O_WRONLY, 0)
	fmt.Fprintf(st, "{\"file\":%q}\n{\"url\":\"gopher://", begun)
	st.Close()
	h.mu.Lock()
	before := len(h.asked)
	h.asked = map[string]int{}
	h.mu.Unlock()

	if err := crawlWithState(start, dir); err != nil {
		t.Fatal(err)
	}
	mended, err := os.ReadFile(first)
	if err != nil || string(mended) != string(whole) {
		t.Errorf("the first file: %d bytes, was %d (%v)", len(mended), len(whole), err)
	}
	if _, err := os.Stat(warc.IndexName(first)); err != nil {
		t.Errorf("no index: %v", err)
	}
	if _, err := os.Stat(begun + ".open"); err == nil {
		t.Errorf("%s.open is left", begun)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if before != len(h.want())+1 || len(h.asked) != 0 {
		t.Errorf("the first run asked %d selectors; the second asked %v", before, h.asked)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "state"))
	if strings.Contains(string(b), "{\"url\":\"gopher://\n") || !strings.HasSuffix(string(b), "\n") {
		t.Errorf("the state's cut line is kept:\n%s", b)
	}
}

// A link to a host that refuses connections is tried once, as wget does,
// unless RetryRefused says otherwise, and so is its robots.txt; neither is
// settled in the state, so that a resumed crawl tries them again (the
// server may be back by then), while what was fetched is not fetched
// again.
func TestCrawlRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close() // nothing listens there now
	deadHost, deadPort, _ := net.SplitHostPort(dead)
	s := startMenuServer(t, func(c net.Conn, sel string, item itemFunc) {
		io.WriteString(c, item('0', "Here", "/here.txt")+"0Gone\t/gone.txt\t"+deadHost+"\t"+deadPort+"\r\n.\r\n")
	})
	state := filepath.Join(t.TempDir(), "state")
	crawlOnce := func(refused bool) (dials int, rep *crawl.Report) {
		c := client()
		c.Trace = func(u *url.URL, ev fetch.TraceEvent) {
			if ev.Text == "connecting to "+dead {
				dials++
			}
		}
		rep, err := crawl.Run(context.Background(), c, []string{"gopher://" + s.ln.Addr().String() + "/1/"},
			crawl.Options{SpanHosts: true, Retries: 2, RetryWait: time.Millisecond, RetryRefused: refused, State: state})
		if err != nil {
			t.Fatal(err)
		}
		return dials, rep
	}
	dials, rep := crawlOnce(false)
	// Each run asks the dead host for robots.txt, then for the item.
	if dials != 2 || rep.Fetched != 2 || rep.Failed != 1 || len(rep.Failures) != 1 || !strings.Contains(rep.Failures[0], dead+"/0/gone.txt") {
		t.Errorf("first run: %d connections to %s (want 2), report %+v", dials, dead, rep)
	}
	dials, rep = crawlOnce(false)
	if dials != 2 || rep.Fetched != 0 || rep.Resumed != 2 || rep.Failed != 1 {
		t.Errorf("resumed: %d connections to %s (want 2: both tried again), report %+v (want the other two resumed)", dials, dead, rep)
	}
	if dials, rep = crawlOnce(true); dials != 6 || rep.Failed != 1 {
		t.Errorf("RetryRefused: %d connections to %s, want 6; report %+v", dials, dead, rep)
	}
}
