package shared_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch/crawl"
	"github.com/urlderef/deref/fetch/crawl/shared"
	"github.com/urlderef/deref/internal/testserver"
	"github.com/urlderef/deref/internal/testserver/redisd"
)

func open(t testing.TB, raw string, o shared.Options) *shared.Frontier {
	t.Helper()
	f, err := shared.Open(context.Background(), raw, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// graph is a made-up site: page i of host h links pages 2i+1 and 2i+2
// of the same host and page i of the next host, below n pages a host.
func graph(u string, hosts, n int) []crawl.Item {
	var h, i int
	fmt.Sscanf(u, "gopher://h%d.test:70/1/%d", &h, &i)
	var out []crawl.Item
	for _, k := range []int{2*i + 1, 2*i + 2} {
		if k < n {
			out = append(out, crawl.Item{URL: fmt.Sprintf("gopher://h%d.test:70/1/%d", h, k)})
		}
	}
	out = append(out, crawl.Item{URL: fmt.Sprintf("gopher://h%d.test:70/1/%d", (h+1)%hosts, i)})
	return out
}

// work claims and settles until the frontier is done, settling each URL
// with its links; it returns the URLs it settled.
func work(t testing.TB, f crawl.Frontier, hosts, n int, during func(*crawl.Lease)) []string {
	var got []string
	for {
		l, err := f.Claim(context.Background())
		if errors.Is(err, crawl.ErrFrontierDone) {
			return got
		}
		if err != nil {
			t.Error(err)
			return got
		}
		if during != nil {
			during(l)
		}
		if _, err := f.Settle(context.Background(), l, crawl.Result{Bytes: 1}, graph(l.URL, hosts, n)); err != nil {
			t.Error(err)
			return got
		}
		got = append(got, l.URL)
	}
}

// Eight workers, each with a frontier of its own on one store, settle
// every URL of a 5-host, 200-page-a-host graph exactly once, and the
// store's counts agree.
func TestEveryURLOnce(t *testing.T) {
	s := redisd.Start(t)
	const hosts, n = 5, 200
	first := open(t, s.URL("once"), shared.Options{PerHost: 2})
	if _, err := first.Add(context.Background(), []crawl.Item{{URL: "gopher://h0.test:70/1/0"}}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	count := map[string]int{}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := open(t, s.URL("once"), shared.Options{PerHost: 2, Worker: fmt.Sprint("w", w)})
			for _, u := range work(t, f, hosts, n, nil) {
				mu.Lock()
				count[u]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(count) != hosts*n {
		t.Errorf("%d URLs settled, want %d", len(count), hosts*n)
	}
	for u, k := range count {
		if k != 1 {
			t.Errorf("%s settled %d times", u, k)
		}
	}
	st, err := first.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Settled != hosts*n || st.Queued != 0 || st.Leased != 0 || len(st.Hosts) != hosts {
		t.Errorf("status %+v", st)
	}
}

// A lease not extended expires and goes to another worker with a new
// fencing token; the first worker's late Settle and Extend are refused
// and count nothing, and the URL is settled once.
func TestLeaseExpiresFenced(t *testing.T) {
	s := redisd.Start(t)
	a := open(t, s.URL("fence"), shared.Options{Lease: 200 * time.Millisecond, Worker: "a"})
	b := open(t, s.URL("fence"), shared.Options{Lease: 200 * time.Millisecond, Worker: "b"})
	ctx := context.Background()
	if _, err := a.Add(ctx, []crawl.Item{{URL: "gopher://h.test:70/1/x"}}); err != nil {
		t.Fatal(err)
	}
	la, err := a.Claim(ctx)
	if err != nil {
		t.Fatal(err)
	}
	begin := time.Now()
	lb, err := b.Claim(ctx) // waits for a's lease to expire
	if err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(begin); waited < 150*time.Millisecond {
		t.Errorf("b claimed after %v, before a's lease expired", waited)
	}
	if lb.URL != la.URL || lb.Token == la.Token {
		t.Errorf("b's lease %+v, a's %+v: want the same URL with a new token", lb, la)
	}
	if err := a.Extend(ctx, la); !errors.Is(err, crawl.ErrStaleLease) {
		t.Errorf("a's late Extend: %v, want ErrStaleLease", err)
	}
	if _, err := a.Settle(ctx, la, crawl.Result{}, []crawl.Item{{URL: "gopher://h.test:70/1/from-a"}}); !errors.Is(err, crawl.ErrStaleLease) {
		t.Errorf("a's late Settle: %v, want ErrStaleLease", err)
	}
	if _, err := b.Settle(ctx, lb, crawl.Result{}, nil); err != nil {
		t.Fatal(err)
	}
	st, _ := b.Status(ctx)
	if st.Settled != 1 || st.Queued != 0 || st.Leased != 0 {
		t.Errorf("status %+v: want one settled, the late settle's link not queued", st)
	}
	if _, err := a.Claim(ctx); !errors.Is(err, crawl.ErrFrontierDone) {
		t.Errorf("claim after the end: %v", err)
	}
}

// A lease extended outlives its first time, and no one else gets its URL.
func TestExtendKeepsLease(t *testing.T) {
	s := redisd.Start(t)
	a := open(t, s.URL("extend"), shared.Options{Lease: 150 * time.Millisecond, Worker: "a"})
	b := open(t, s.URL("extend"), shared.Options{Lease: 150 * time.Millisecond, Worker: "b"})
	ctx := context.Background()
	a.Add(ctx, []crawl.Item{{URL: "gopher://h.test:70/1/x"}})
	la, err := a.Claim(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for range 6 {
		time.Sleep(50 * time.Millisecond)
		if err := a.Extend(ctx, la); err != nil {
			t.Fatal(err)
		}
		if n, _ := b.Reap(ctx); n != 0 {
			t.Fatalf("an extended lease reaped")
		}
	}
	if _, err := a.Settle(ctx, la, crawl.Result{}, nil); err != nil {
		t.Fatal(err)
	}
}

// Politeness is the store's: with PerHost 1 and a 40 ms wait, four
// workers never hold one host at once, and no request starts within
// 40 ms of the last one's end, by the store's clock (checked here on
// the test's, which the store's and the test's calls bracket).
func TestPolitenessAcrossWorkers(t *testing.T) {
	s := redisd.Start(t)
	const wait = 40 * time.Millisecond
	o := shared.Options{PerHost: 1, Wait: wait}
	first := open(t, s.URL("polite"), o)
	first.Add(context.Background(), []crawl.Item{{URL: "gopher://h0.test:70/1/0"}})
	type span struct{ claimed, settled time.Time }
	var mu sync.Mutex
	var spans []span
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := o
			o.Worker = fmt.Sprint("w", w)
			f := open(t, s.URL("polite"), o)
			for {
				l, err := f.Claim(context.Background())
				if err != nil {
					return
				}
				got := time.Now()
				time.Sleep(5 * time.Millisecond) // the request
				mu.Lock()
				spans = append(spans, span{got, time.Now()})
				mu.Unlock()
				f.Settle(context.Background(), l, crawl.Result{}, graph(l.URL, 1, 15))
			}
		}()
	}
	wg.Wait()
	if len(spans) != 15 {
		t.Fatalf("%d URLs, want 15", len(spans))
	}
	for i := 1; i < len(spans); i++ {
		prev, cur := spans[i-1], spans[i]
		if cur.claimed.Before(prev.settled) {
			t.Errorf("request %d began before request %d ended", i, i-1)
		}
		if gap := cur.claimed.Sub(prev.settled); gap < wait-5*time.Millisecond {
			t.Errorf("request %d began %v after the last ended, want %v", i, gap, wait)
		}
	}
}

// A bad store URL, a store that does not answer and one without Lua
// scripting are each one clear error from Open, the password hidden.
func TestOpenErrors(t *testing.T) {
	noLua, err := testserver.Listen(func(c net.Conn) {
		defer c.Close()
		r := bufio.NewReader(c)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			switch u := strings.ToUpper(strings.TrimSpace(line)); {
			case u == "PING":
				c.Write([]byte("+PONG\r\n"))
			case u == "EVAL", u == "EVALSHA":
				c.Write([]byte("-ERR unknown command 'EVAL'\r\n"))
			case u == "HELLO", u == "CLIENT", u == "SELECT":
				c.Write([]byte("-ERR unknown command\r\n"))
			} // the rest ("*2", "$4", arguments) are parts of a command, answered on its name
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer noLua.Close()
	dead, _ := net.Listen("tcp", "127.0.0.1:0")
	deadAddr := dead.Addr().String()
	dead.Close()
	for _, c := range []struct{ raw, want string }{
		{"redis://127.0.0.1:1/0?prefx=a", `unknown option "prefx"`},
		{"redis://u:s3cret@" + deadAddr + "/0", "does not answer"},
		{"valkey://" + noLua.Addr().String() + "/0", "runs no Lua scripts"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := shared.Open(ctx, c.raw, shared.Options{})
		cancel()
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "\n") {
			t.Errorf("Open(%s): %v, want one line with %q and no password", c.raw, err, c.want)
		}
	}
}

// The store stopped and started again (its append-only file kept) pauses
// the workers' calls, said once, and they go on where they were.
func TestStoreRestart(t *testing.T) {
	s := redisd.Start(t)
	var mu sync.Mutex
	var said []string
	f := open(t, s.URL("restart"), shared.Options{Notify: func(m string) { mu.Lock(); said = append(said, m); mu.Unlock() }})
	ctx := context.Background()
	f.Add(ctx, []crawl.Item{{URL: "gopher://h0.test:70/1/0"}})
	done := 0
	for range 10 {
		l, err := f.Claim(ctx)
		if err != nil {
			t.Fatal(err)
		}
		f.Settle(ctx, l, crawl.Result{}, graph(l.URL, 1, 40))
		done++
	}
	s.Stop()
	go func() {
		time.Sleep(time.Second)
		s.Restart()
	}()
	got := work(t, f, 1, 40, nil)
	if done+len(got) != 40 {
		t.Errorf("%d settled before the restart and %d after, want 40 in all", done, len(got))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(said) != 2 || !strings.Contains(said[0], "does not answer") || !strings.Contains(said[1], "answers again") {
		t.Errorf("said %q, want the store's absence once and its return once", said)
	}
}
