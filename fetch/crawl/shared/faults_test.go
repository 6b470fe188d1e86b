package shared_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/crawl"
	"github.com/urlderef/deref/fetch/crawl/shared"
	"github.com/urlderef/deref/internal/testserver/redisd"
)

// seed is one host's first URL, queued.
func seed(t *testing.T, f *shared.Frontier) {
	t.Helper()
	if _, err := f.Add(context.Background(), []crawl.Item{{URL: "gopher://h0.test:70/1/0"}}); err != nil {
		t.Fatal(err)
	}
}

// A store emptied under a crawl (FLUSHALL, or restarted without its
// data) is not taken for a finished crawl: every call of a worker that
// opened it is refused with ErrCrawlGone (a fetch.ErrProtocol, exit 7),
// in one line naming the store; a worker that opens the empty store
// begins a crawl anew, and the old worker's calls are still refused
// (its crawl's id is not the new one's).
func TestCrawlGone(t *testing.T) {
	s := redisd.Start(t)
	ctx := context.Background()
	f := open(t, s.URL("gone"), shared.Options{Worker: "a"})
	seed(t, f)
	l, err := f.Claim(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.CLI("FLUSHALL")
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, shared.ErrCrawlGone) || !errors.Is(err, fetch.ErrProtocol) || fetch.ExitCode(err) != 7 ||
			!strings.Contains(err.Error(), s.Addr) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s on an emptied store: %v (exit %d), want ErrCrawlGone naming the store, exit 7", what, err, fetch.ExitCode(err))
		}
	}
	_, err = f.Settle(ctx, l, crawl.Result{}, graph(l.URL, 1, 10))
	check("Settle", err)
	_, err = f.Claim(ctx)
	check("Claim", err)
	_, err = f.Add(ctx, []crawl.Item{{URL: "gopher://h0.test:70/1/5"}})
	check("Add", err)
	check("Extend", f.Extend(ctx, l))
	_, err = f.Reap(ctx)
	check("Reap", err)

	g := open(t, s.URL("gone"), shared.Options{Worker: "b"})
	seed(t, g)
	_, err = f.Claim(ctx)
	check("Claim of the crawl begun anew", err)
	if st, _ := g.Status(ctx); st.Queued != 1 {
		t.Errorf("the crawl begun anew: %+v, want its seed queued, untouched by the old worker", st)
	}
	s.Stop()
	s.Wipe()
	s.Restart()
	_, err = g.Claim(ctx)
	check("Claim after a restart without the data", err)
}

// A store past its maxmemory (noeviction) refuses each step whole: the
// adds that filled it are refused once it is past the limit, the error
// naming the limit, a fetch.ErrWrite (exit 8, as a full disk); DEBUG
// DIGEST, a hash of everything the store holds, is the same
// before and after the refused claim, settle and add; with room again
// the same frontier goes on.
func TestFullStore(t *testing.T) {
	s := redisd.Start(t, "enable-debug-command local")
	ctx := context.Background()
	f := open(t, s.URL("full"), shared.Options{})
	seed(t, f)
	l, err := f.Claim(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.CLI("CONFIG", "SET", "maxmemory", fmt.Sprint(s.Info("used_memory")+2<<20))
	var full error
	for i := 0; full == nil; i++ {
		if i > 1000 {
			t.Fatal("the store took 1,000,000 URLs past a limit 2 MB above its use")
		}
		batch := make([]crawl.Item, 1000)
		for k := range batch {
			batch[k] = crawl.Item{URL: fmt.Sprintf("gopher://h%d.test:70/0/item-%d-%d", k%10, i, k)}
		}
		_, full = f.Add(ctx, batch)
	}
	limit := strings.TrimSpace(strings.Split(strings.SplitAfter(s.CLI("INFO", "memory"), "maxmemory_human:")[1], "\n")[0])
	if !errors.Is(full, fetch.ErrWrite) || fetch.ExitCode(full) != 8 || !strings.Contains(full.Error(), "maxmemory of "+limit) || !strings.Contains(full.Error(), "is full") {
		t.Fatalf("past maxmemory: %v (exit %d), want the store full, its limit named, exit 8", full, fetch.ExitCode(full))
	}
	// Firmly past it, for what follows: the store's use moves a little
	// as the refused requests' buffers go.
	s.CLI("CONFIG", "SET", "maxmemory", fmt.Sprint(s.Info("used_memory")/2))
	digest := s.CLI("DEBUG", "DIGEST")
	if _, err := f.Settle(ctx, l, crawl.Result{}, graph(l.URL, 1, 10)); !errors.Is(err, fetch.ErrWrite) {
		t.Errorf("Settle past maxmemory: %v", err)
	}
	if _, err := f.Claim(ctx); !errors.Is(err, fetch.ErrWrite) {
		t.Errorf("Claim past maxmemory: %v", err)
	}
	if _, err := f.Add(ctx, []crawl.Item{{URL: "gopher://h0.test:70/1/new"}}); !errors.Is(err, fetch.ErrWrite) {
		t.Errorf("Add past maxmemory: %v", err)
	}
	if after := s.CLI("DEBUG", "DIGEST"); after != digest {
		t.Errorf("the refused steps changed the store: digest %s, then %s", digest, after)
	}
	s.CLI("CONFIG", "SET", "maxmemory", "0")
	if _, err := f.Settle(ctx, l, crawl.Result{}, nil); err != nil {
		t.Errorf("Settle with room again: %v", err)
	}
	if _, err := f.Claim(ctx); err != nil {
		t.Errorf("Claim with room again: %v", err)
	}
}

// A store that evicts keys when full is refused before anything is
// fetched, the policy named; --status may still read it.
func TestEvictingStoreRefused(t *testing.T) {
	s := redisd.Start(t, "maxmemory 100mb", "maxmemory-policy allkeys-lru")
	_, err := shared.Open(context.Background(), s.URL("evict"), shared.Options{})
	if err == nil || !strings.Contains(err.Error(), "maxmemory-policy allkeys-lru") || !strings.Contains(err.Error(), "noeviction") || fetch.ExitCode(err) != 7 {
		t.Errorf("Open of an evicting store: %v (exit %d)", err, fetch.ExitCode(err))
	}
	if _, err := shared.Open(context.Background(), s.URL("evict"), shared.Options{Watch: true}); err != nil {
		t.Errorf("Open to watch an evicting store: %v", err)
	}
}

// A store that does not answer for longer than StateTimeout fails the
// waiting calls with a fetch.ErrNetwork (exit 6) naming the flag, said
// once before; the store back, the same frontier goes on where it was.
func TestStateTimeout(t *testing.T) {
	s := redisd.Start(t)
	ctx := context.Background()
	var mu sync.Mutex
	var said []string
	f := open(t, s.URL("timeout"), shared.Options{StateTimeout: 1500 * time.Millisecond, Notify: func(m string) { mu.Lock(); said = append(said, m); mu.Unlock() }})
	seed(t, f)
	s.Stop()
	begin := time.Now()
	_, err := f.Claim(ctx)
	took := time.Since(begin)
	if !errors.Is(err, fetch.ErrNetwork) || fetch.ExitCode(err) != 6 || !strings.Contains(err.Error(), "--state-timeout") || !strings.Contains(err.Error(), "resumes") {
		t.Errorf("Claim of a store gone: %v (exit %d)", err, fetch.ExitCode(err))
	}
	if took < 1500*time.Millisecond || took > 10*time.Second {
		t.Errorf("Claim gave up after %v, want the 1.5 s of StateTimeout", took)
	}
	s.Restart()
	l, err := f.Claim(ctx)
	if err != nil || l.URL != "gopher://h0.test:70/1/0" {
		t.Fatalf("Claim with the store back: %v, %v", l, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(said) != 2 || !strings.Contains(said[0], "does not answer") || !strings.Contains(said[1], "answers again") {
		t.Errorf("said %q", said)
	}
}

// cutter is a relay to a store that, while armed, passes a reply's first
// half and cuts the connection: the step reached the store, and its
// worker does not know it.
type cutter struct {
	ln    net.Listener
	armed atomic.Int32
	cuts  atomic.Int32
}

func startCutter(t *testing.T, target string) *cutter {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &cutter{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			cl, err := ln.Accept()
			if err != nil {
				return
			}
			go c.relay(cl, target)
		}
	}()
	return c
}

func (c *cutter) relay(cl net.Conn, target string) {
	sv, err := net.Dial("tcp", target)
	if err != nil {
		cl.Close()
		return
	}
	defer cl.Close()
	defer sv.Close()
	go io.Copy(sv, cl)
	buf := make([]byte, 64<<10)
	for {
		n, err := sv.Read(buf)
		if n > 0 && c.armed.Load() > 0 && c.armed.Add(-1) >= 0 {
			cl.Write(buf[:max(n/2, 1)])
			c.cuts.Add(1)
			return
		}
		if n > 0 {
			if _, err := cl.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// A claim whose reply is cut halfway is asked again and gets the lease
// it made (one leased, not two, nor one left to expire); a settle whose
// reply is cut is asked again and known for the one that settled it:
// the URL is settled once, and another worker's settle of the lease is
// refused as stale; an add repeated admits nothing twice.
func TestRepeatedSteps(t *testing.T) {
	s := redisd.Start(t)
	ctx := context.Background()
	relay := startCutter(t, s.Addr)
	f := open(t, "redis://"+relay.ln.Addr().String()+"/0?prefix=cut", shared.Options{})
	direct := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer direct.Close()
	for i := range 4 {
		if _, err := f.Add(ctx, []crawl.Item{{URL: fmt.Sprintf("gopher://h%d.test:70/1/0", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	// One claim and settle first, so that the store has the scripts
	// (the first EVALSHA of each is answered NOSCRIPT, and sent again).
	warm, err := f.Claim(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Settle(ctx, warm, crawl.Result{}, nil); err != nil {
		t.Fatal(err)
	}
	relay.armed.Store(1)
	if _, err := f.Add(ctx, []crawl.Item{{URL: "gopher://h0.test:70/1/1"}, {URL: "gopher://h0.test:70/1/0"}}); err != nil {
		t.Fatal(err)
	}
	st, _ := f.Status(ctx)
	if relay.cuts.Load() != 1 || st.Queued != 4 {
		t.Errorf("after an add cut once (%d cuts): %+v, want the new URL queued once, 4 in all", relay.cuts.Load(), st)
	}
	relay.armed.Store(1)
	l, err := f.Claim(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if l.Token != warm.Token+1 {
		t.Errorf("the claim asked again has token %d, want %d: the one the first made", l.Token, warm.Token+1)
	}
	st, _ = f.Status(ctx)
	leases, _ := direct.HLen(ctx, "cut:leases").Result()
	if relay.cuts.Load() != 2 || st.Leased != 1 || st.Queued != 3 || leases != 1 {
		t.Errorf("after a claim cut (%d cuts): %+v and %d leases, want the one lease it made", relay.cuts.Load(), st, leases)
	}
	relay.armed.Store(1)
	_, err = f.Settle(ctx, l, crawl.Result{}, nil)
	if err != nil {
		t.Errorf("a settle asked again after its reply was cut: %v, want it known for this worker's, settled once", err)
	}
	st, _ = f.Status(ctx)
	if relay.cuts.Load() != 3 || st.Settled != 2 || st.Leased != 0 {
		t.Errorf("after a settle cut (%d cuts): %+v, want it settled once", relay.cuts.Load(), st)
	}
	other := open(t, s.URL("cut"), shared.Options{Worker: "other"})
	if _, err := other.Settle(ctx, l, crawl.Result{}, nil); !errors.Is(err, crawl.ErrStaleLease) {
		t.Errorf("another worker's settle of the lease: %v, want ErrStaleLease", err)
	}
	if st, _ = f.Status(ctx); st.Settled != 2 {
		t.Errorf("settled twice: %+v", st)
	}
}

// A worker started again under its name gives back at once the leases
// its stopped process held, rather than leave them to expire; another
// worker's leases stay its own.
func TestSameNameGivesBack(t *testing.T) {
	s := redisd.Start(t)
	ctx := context.Background()
	a := open(t, s.URL("again"), shared.Options{Worker: "a", Lease: time.Hour, PerHost: 4})
	b := open(t, s.URL("again"), shared.Options{Worker: "b", Lease: time.Hour, PerHost: 4})
	seed(t, a)
	a.Add(ctx, []crawl.Item{{URL: "gopher://h0.test:70/1/1"}, {URL: "gopher://h0.test:70/1/2"}})
	la, _ := a.Claim(ctx)
	a.Claim(ctx)
	lb, _ := b.Claim(ctx)
	a2 := open(t, s.URL("again"), shared.Options{Worker: "a", Lease: time.Hour, PerHost: 4})
	st, _ := a2.Status(ctx)
	if st.Leased != 1 || st.Queued != 2 {
		t.Fatalf("after a started again: %+v, want a's two leases queued again and b's held", st)
	}
	l, err := a2.Claim(ctx)
	if err != nil || l.URL == lb.URL {
		t.Errorf("a's claim: %v, %v", l, err)
	}
	if _, err := a.Settle(ctx, la, crawl.Result{}, nil); !errors.Is(err, crawl.ErrStaleLease) {
		t.Errorf("the old process's settle: %v, want ErrStaleLease", err)
	}
	if _, err := b.Settle(ctx, lb, crawl.Result{}, nil); err != nil {
		t.Errorf("b's settle: %v", err)
	}
}
