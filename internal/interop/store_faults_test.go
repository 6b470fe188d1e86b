//go:build interop

package interop

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch/crawl/shared"
	"github.com/urlderef/deref/internal/testserver"
	"github.com/urlderef/deref/internal/testserver/redisd"
)

// farm is 20 Gopher hosts (each its own port of 127.0.0.1) of 250 URLs
// each, a menu and its 249 texts: 5,000 URLs in all. Each answer takes
// a few milliseconds, so that a crawl lasts past its fault; every
// request is counted.
type farm struct {
	lns   []net.Listener
	mu    sync.Mutex
	asked map[string]int // "gopher://ADDR/TYPE/SEL" -> requests
}

const farmHosts, farmItems = 20, 249

func startFarm(t *testing.T) *farm {
	fm := &farm{asked: map[string]int{}}
	for range farmHosts {
		var ln net.Listener
		if err := testserver.ListenInto(&ln, fm.serve); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		fm.lns = append(fm.lns, ln)
	}
	return fm
}

func (fm *farm) serve(c net.Conn) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Minute))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return
	}
	sel := strings.TrimRight(line, "\r\n")
	addr := c.LocalAddr().String()
	host, port, _ := net.SplitHostPort(addr)
	var b strings.Builder
	key := ""
	switch {
	case sel == "/m":
		key = "gopher://" + addr + "/1/m"
		for i := range farmItems {
			fmt.Fprintf(&b, "0text %d\t/t/%d\t%s\t%s\r\n", i, i, host, port)
		}
	case strings.HasPrefix(sel, "/t/"):
		key = "gopher://" + addr + "/0" + sel
		b.WriteString("the text of " + sel + "\r\n")
	default:
		b.WriteString("3not here\t\terror.host\t1\r\n")
	}
	b.WriteString(".\r\n")
	time.Sleep(4 * time.Millisecond)
	c.Write([]byte(b.String()))
	if key != "" {
		fm.mu.Lock()
		fm.asked[key]++
		fm.mu.Unlock()
	}
}

// starts are the hosts' menus.
func (fm *farm) starts() []string {
	var out []string
	for _, ln := range fm.lns {
		out = append(out, "gopher://"+ln.Addr().String()+"/1/m")
	}
	return out
}

// want is every URL of the farm.
func (fm *farm) want() []string {
	var out []string
	for _, ln := range fm.lns {
		out = append(out, "gopher://"+ln.Addr().String()+"/1/m")
		for i := range farmItems {
			out = append(out, fmt.Sprintf("gopher://%s/0/t/%d", ln.Addr(), i))
		}
	}
	return out
}

// reset forgets the requests counted.
func (fm *farm) reset() {
	fm.mu.Lock()
	fm.asked = map[string]int{}
	fm.mu.Unlock()
}

// fleet runs deref crawl workers of one shared crawl of a farm.
type fleet struct {
	t     *testing.T
	bin   string
	fm    *farm
	dir   string
	store string // the workers' store
	watch string // the test's own way to the store, past any relay
	flags []string
}

// worker is a deref crawl process.
type worker struct {
	name   string
	cmd    *exec.Cmd
	stderr *lockedBuffer
	done   <-chan struct{} // closed once the process has ended
	code   int
}

// lockedBuffer is a process's standard error, written as it runs and
// read at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// start starts the workers named, each with --parallel 4 into its own
// WARC series. A worker still running when the test ends is killed, so
// that a subtest that failed leaves none to ask the farm in the next.
func (fl *fleet) start(names ...string) []*worker {
	var ws []*worker
	for _, n := range names {
		args := append([]string{"crawl", "-s", "--state", fl.store, "--worker", n, "--parallel", "4", "--warc-file", filepath.Join(fl.dir, "crawl")}, fl.flags...)
		w := &worker{name: n, cmd: exec.Command(fl.bin, append(args, fl.fm.starts()...)...), stderr: &lockedBuffer{}}
		w.cmd.Stderr = w.stderr
		if err := w.cmd.Start(); err != nil {
			fl.t.Fatal(err)
		}
		done := make(chan struct{})
		w.done = done
		go func() { w.cmd.Wait(); close(done) }()
		fl.t.Cleanup(func() {
			select {
			case <-done:
			default:
				w.cmd.Process.Kill()
				<-done
			}
		})
		ws = append(ws, w)
	}
	return ws
}

// wait waits for the workers, at most three minutes.
func (fl *fleet) wait(ws []*worker) {
	for _, w := range ws {
		select {
		case <-w.done:
		case <-time.After(3 * time.Minute):
			w.cmd.Process.Kill()
			<-w.done
			fl.t.Errorf("worker %s ran past three minutes: %s", w.name, w.stderr)
		}
		w.code = w.cmd.ProcessState.ExitCode()
	}
}

// settled waits until the crawl has settled n URLs.
func (fl *fleet) settled(n int64) {
	f, err := shared.Open(context.Background(), fl.watch, shared.Options{Watch: true})
	if err != nil {
		fl.t.Fatal(err)
	}
	defer f.Close()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(5 * time.Millisecond) {
		st, err := f.Status(context.Background())
		if err == nil && st.Settled >= n {
			return
		}
		if time.Now().After(deadline) {
			fl.t.Fatalf("the crawl settled %+v in a minute, waiting for %d (%v)", st, n, err)
		}
	}
}

// leased is how many leases the crawl holds: the URLs under way, some
// fetched and waiting for their records to be written.
func (fl *fleet) leased() int64 {
	f, err := shared.Open(context.Background(), fl.watch, shared.Options{Watch: true})
	if err != nil {
		fl.t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Status(context.Background())
	if err != nil {
		fl.t.Fatal(err)
	}
	return st.Leased
}

// crawl runs four workers; fault is called once they settled 1,000
// URLs, and the workers are waited for. held is how many leases the
// crawl held as the fault came.
func (fl *fleet) crawl(fault func()) (ws []*worker, held int64) {
	ws = fl.start("w1", "w2", "w3", "w4")
	fl.settled(1000)
	held = fl.leased()
	fault()
	fl.wait(ws)
	return ws, held
}

// exits checks each worker's exit code and that its stderr holds want.
func (fl *fleet) exits(ws []*worker, code int, want string) {
	fl.t.Helper()
	for _, w := range ws {
		if w.code != code || !strings.Contains(w.stderr.String(), want) {
			fl.t.Errorf("worker %s: exit %d, want %d with %q: %s", w.name, w.code, code, want, w.stderr)
		}
	}
}

// saidOnce checks that no worker said the store's absence, or its
// return, more than once a fault (faults many).
func (fl *fleet) saidOnce(ws []*worker, faults int) {
	fl.t.Helper()
	for _, w := range ws {
		s := w.stderr.String()
		if n := strings.Count(s, "does not answer"); n > faults || strings.Count(s, "answers again") > n {
			fl.t.Errorf("worker %s said the store's absence %d times for %d faults: %s", w.name, n, faults, s)
		}
	}
}

// check reads the end of the crawl: the store's status (every URL
// settled once: 5,000 settled, none queued or leased), the farm's count
// of requests (every URL asked for; those asked for again at most
// maxExtra), and the WARC files, read by warcio.js (every file whole,
// none left open; a response record for every URL, more only for URLs
// fetched again). It returns the requests beyond one a URL.
func (fl *fleet) check(maxExtra int64) int64 {
	t := fl.t
	t.Helper()
	out, err := exec.Command(fl.bin, "crawl", "--state", fl.watch, "--status").CombinedOutput()
	if err != nil {
		t.Fatalf("--status: %v: %s", err, out)
	}
	fields := strings.Fields(string(out[bytes.LastIndex(out, []byte("\nall")):]))
	if len(fields) != 6 || fields[1] != "0" || fields[2] != "0" || fields[3] != fmt.Sprint(farmHosts*(farmItems+1)) {
		t.Errorf("--status totals %q, want 0 queued, 0 leased, %d settled", fields, farmHosts*(farmItems+1))
	}
	fl.fm.mu.Lock()
	extra := int64(0)
	for _, u := range fl.fm.want() {
		switch n := fl.fm.asked[u]; {
		case n == 0:
			t.Errorf("%s never asked for", u)
		case n > 1:
			extra += int64(n - 1)
		}
	}
	fl.fm.mu.Unlock()
	if extra > maxExtra {
		t.Errorf("%d requests beyond one a URL, want at most %d", extra, maxExtra)
	}
	files, _ := filepath.Glob(filepath.Join(fl.dir, "crawl-*.warc.gz"))
	if open, _ := filepath.Glob(filepath.Join(fl.dir, "*.open")); len(open) > 0 {
		t.Errorf("WARC files left open: %v", open)
	}
	recs := map[string]int{}
	all := int64(0)
	for _, r := range readWithWarcio(t, files...) {
		if (r.Type == "resource" || r.Type == "revisit") && !strings.HasSuffix(r.URI, "robots.txt") { // a text of another host's bytes is a revisit
			recs[r.URI]++
			all++
		}
	}
	for _, u := range fl.fm.want() {
		if recs[u] == 0 {
			t.Errorf("%s in no WARC file", u)
		}
	}
	if all-int64(len(fl.fm.want())) > extra {
		t.Errorf("%d records for %d URLs: more than the %d requests beyond one a URL", all, len(fl.fm.want()), extra)
	}
	return extra
}

// newFleet is a fleet of a new crawl (its own prefix and folder) at
// store, the store's URL up to its query.
func newFleet(t *testing.T, bin string, fm *farm, store string, flags ...string) *fleet {
	fm.reset()
	sep := "?"
	if strings.Contains(store, "?") {
		sep = "&"
	}
	url := store + sep + "prefix=" + strings.ReplaceAll(t.Name(), "/", "-")
	return &fleet{t: t, bin: bin, fm: fm, dir: t.TempDir(), store: url, watch: url, flags: flags}
}

// through makes the workers reach the store at relay, a host:port that
// relays to it; the test itself still reads the store directly.
func (fl *fleet) through(relay string) {
	u, err := neturl.Parse(fl.store)
	if err != nil {
		fl.t.Fatal(err)
	}
	u.Host = relay
	fl.store = u.String()
}

// cutRelay is a relay to a store that cuts one reply in every, halfway:
// the step reached the store, and its worker does not know it. Most cuts
// close the connection; one in 40 leaves it open with the rest of the
// reply never coming, until the worker's read gives up (3 s).
type cutRelay struct {
	ln    net.Listener
	every int64
	n     atomic.Int64
	cuts  atomic.Int64
}

func startCutRelay(t *testing.T, target string, every int64) *cutRelay {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &cutRelay{ln: ln, every: every}
	var mu sync.Mutex
	open := map[net.Conn]bool{}
	t.Cleanup(func() { // the listener and every connection relayed
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for c := range open {
			c.Close()
		}
	})
	go testserver.Serve(ln, func(c net.Conn) {
		s, err := net.Dial("tcp", target)
		if err != nil {
			c.Close()
			return
		}
		mu.Lock()
		open[c], open[s] = true, true
		mu.Unlock()
		defer func() {
			mu.Lock()
			delete(open, c)
			delete(open, s)
			mu.Unlock()
			s.Close()
		}()
		go io.Copy(s, c)
		buf := make([]byte, 64<<10)
		for {
			n, err := s.Read(buf)
			if n > 0 && r.n.Add(1)%r.every == 0 {
				c.Write(buf[:max(n/2, 1)])
				if r.cuts.Add(1)%40 != 0 {
					c.Close()
				}
				return
			}
			if n > 0 {
				if _, err := c.Write(buf[:n]); err != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	})
	return r
}

// TestSharedStoreFaults: four deref crawl processes share a crawl of
// 5,000 URLs on 20 Gopher hosts through Debian's redis-server, and the
// store fails during each crawl, a fault a subtest: restarted with its
// data after 30 s away, stopped (SIGSTOP), busy (DEBUG SLEEP) and paused
// (CLIENT PAUSE) in one crawl, its replies cut halfway by a relay, away past
// --state-timeout (the workers stop, exit 6, and the same command
// resumes), full (maxmemory; exit 8, and the same command resumes once
// it has room), and emptied (restarted without its data: every worker
// stops, exit 7, rather than end as if the crawl were done). In each the
// crawl ends with every URL settled once, every file whole, a record for
// every URL, and no URL asked for twice but those under way: leased as
// the fault came (16 transfers, four workers of four, and the URLs
// fetched whose records wait to be written), or, where the workers
// stopped, the leases they left.
func TestSharedStoreFaults(t *testing.T) {
	bin := buildDeref(t)
	fm := startFarm(t)
	s := redisd.Start(t, "enable-debug-command local")
	store := "redis://" + s.Addr + "/0"
	const transfers = 16
	underWay := func(held int64) int64 { return max(held, transfers) }

	t.Run("restart after 30 s", func(t *testing.T) {
		fl := newFleet(t, bin, fm, store)
		ws, held := fl.crawl(func() {
			s.Stop()
			time.Sleep(30 * time.Second)
			s.Restart()
		})
		fl.exits(ws, 0, "")
		fl.saidOnce(ws, 1)
		t.Logf("restart after 30 s: %d requests beyond one a URL (%d leases held)", fl.check(underWay(held)), held)
	})
	t.Run("SIGSTOP, DEBUG SLEEP, CLIENT PAUSE", func(t *testing.T) {
		// Three pauses of 5 s in one crawl, at 1,000, 2,000 and 3,000
		// settled: longer than a read waits (3 s), so that steps under
		// way time out and are asked again.
		fl := newFleet(t, bin, fm, store)
		most := int64(0)
		ws, held := fl.crawl(func() {
			s.Pause()
			time.Sleep(5 * time.Second)
			s.Resume()
			fl.settled(2000)
			most = max(most, fl.leased())
			s.CLI("DEBUG", "SLEEP", "5")
			fl.settled(3000)
			most = max(most, fl.leased())
			s.CLI("CLIENT", "PAUSE", "5000", "ALL")
		})
		fl.exits(ws, 0, "")
		fl.saidOnce(ws, 3)
		most = max(most, held)
		t.Logf("SIGSTOP, DEBUG SLEEP and CLIENT PAUSE, 5 s each: %d requests beyond one a URL (at most %d leases held)", fl.check(underWay(most)), most)
	})
	t.Run("replies cut", func(t *testing.T) {
		relay := startCutRelay(t, s.Addr, 100)
		fl := newFleet(t, bin, fm, store)
		fl.through(relay.ln.Addr().String())
		ws, held := fl.crawl(func() {})
		fl.exits(ws, 0, "")
		extra := fl.check(underWay(held))
		if relay.cuts.Load() < 100 {
			t.Errorf("the relay cut %d replies: too few to show anything", relay.cuts.Load())
		}
		t.Logf("one reply in 100 cut halfway (%d cuts): %d requests beyond one a URL", relay.cuts.Load(), extra)
	})
	t.Run("past --state-timeout", func(t *testing.T) {
		fl := newFleet(t, bin, fm, store, "--state-timeout", "3", "--lease", "5")
		begin := time.Now()
		ws, _ := fl.crawl(func() { s.Stop() })
		stopped := time.Since(begin)
		fl.exits(ws, 6, "--state-timeout")
		if open, _ := filepath.Glob(filepath.Join(fl.dir, "*.open")); len(open) > 0 {
			t.Errorf("WARC files left open by the workers that stopped: %v", open)
		}
		s.Restart()
		left := fl.leased()
		ws = fl.start("w1", "w2", "w3", "w4") // the same command again
		fl.wait(ws)
		fl.exits(ws, 0, "")
		t.Logf("away past --state-timeout 3: the workers stopped in %v, exit 6, leaving %d leases; resumed: %d requests beyond one a URL", stopped.Round(100*time.Millisecond), left, fl.check(left))
	})
	t.Run("full", func(t *testing.T) {
		fl := newFleet(t, bin, fm, store)
		ws, _ := fl.crawl(func() { s.CLI("CONFIG", "SET", "maxmemory", fmt.Sprint(s.Info("used_memory")/2)) })
		fl.exits(ws, 8, "is full")
		fl.exits(ws, 8, "maxmemory")
		left := fl.leased()
		s.CLI("CONFIG", "SET", "maxmemory", "0")
		ws = fl.start("w1", "w2", "w3", "w4")
		fl.wait(ws)
		fl.exits(ws, 0, "")
		t.Logf("full, then room again: the workers left %d leases; resumed: %d requests beyond one a URL", left, fl.check(left))
	})
	t.Run("emptied", func(t *testing.T) {
		fl := newFleet(t, bin, fm, store)
		ws, _ := fl.crawl(func() { s.Stop(); s.Wipe(); s.Restart() })
		fl.exits(ws, 7, "no longer holds the crawl")
		if open, _ := filepath.Glob(filepath.Join(fl.dir, "*.open")); len(open) > 0 {
			t.Errorf("WARC files left open: %v", open)
		}
		files, _ := filepath.Glob(filepath.Join(fl.dir, "crawl-*.warc.gz"))
		if n := len(readWithWarcio(t, files...)); n < 1000 {
			t.Errorf("the workers' WARC files hold %d records, want at least the 1,000 settled before", n)
		}
		out, _ := exec.Command(bin, "crawl", "--state", fl.watch, "--status").CombinedOutput()
		if !strings.Contains(string(out), "holds no crawl") {
			t.Errorf("--status of the emptied store: %s", out)
		}
	})
}

// TestSharedSentinelCluster: the same crawl of 5,000 URLs by four deref
// crawl processes through Sentinel (Debian's redis-server and
// redis-sentinel: a master, two replicas, three sentinels), its master
// killed mid-crawl, with and without --state-replicas 1; and through a
// Redis Cluster of three masters with a replica each (redis-cli
// --cluster create), a master killed mid-crawl. Each crawl ends with
// every URL settled, every file whole, and --status reads it.
func TestSharedSentinelCluster(t *testing.T) {
	bin := buildDeref(t)
	fm := startFarm(t)
	underWay := func(held int64) int64 { return max(held, 16) }
	for _, replicas := range []string{"0", "1"} {
		t.Run("sentinel, --state-replicas "+replicas, func(t *testing.T) {
			m := redisd.Start(t, "repl-diskless-sync-delay 0")
			redisd.StartReplica(t, m)
			redisd.StartReplica(t, m)
			ss := redisd.StartSentinels(t, m, 3, 2)
			fl := newFleet(t, bin, fm, strings.TrimSuffix(ss.URL(""), "?prefix="))
			if replicas != "0" {
				fl.flags = []string{"--state-replicas", replicas}
			}
			ws, held := fl.crawl(func() { m.Kill() })
			fl.exits(ws, 0, "")
			if addr := ss.MasterAddr(); addr == m.Addr {
				t.Errorf("no failover: the master is still %s", addr)
			}
			// Without a replica's acknowledgement, the settles the master
			// took and did not pass on are fetched again; with it, only
			// the URLs under way.
			bound := int64(200)
			if replicas != "0" {
				bound = underWay(held)
			}
			t.Logf("sentinel, master killed, --state-replicas %s: %d requests beyond one a URL (%d leases held)", replicas, fl.check(bound), held)
		})
	}
	t.Run("cluster", func(t *testing.T) {
		c := redisd.StartCluster(t, 3)
		fl := newFleet(t, bin, fm, strings.TrimSuffix(c.URL(""), "?prefix="))
		var killed string
		ws, _ := fl.crawl(func() { m := c.Masters()[0]; killed = m.Addr; m.Kill() })
		fl.exits(ws, 0, "")
		t.Logf("cluster, master %s killed: %d requests beyond one a URL", killed, fl.check(200))
	})
	if _, err := os.Stat(bin); err != nil {
		t.Fatal(err)
	}
}
