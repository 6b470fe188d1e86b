package shared_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/urlderef/deref/fetch/crawl"
	"github.com/urlderef/deref/fetch/crawl/shared"
	"github.com/urlderef/deref/internal/testserver/redisd"
)

// settleLog is what workers settled: each URL's settles, and whether the
// first came before the fault.
type settleLog struct {
	mu     sync.Mutex
	count  map[string]int
	before map[string]bool // the URL was first settled before the fault
	fault  atomic.Bool
	n      atomic.Int64
	stale  atomic.Int64 // settles refused: their URLs' other fetches
	// fetch is how long each URL's fetch takes, so that the crawl lasts
	// past the fault.
	fetch time.Duration
}

func newSettleLog() *settleLog {
	return &settleLog{count: map[string]int{}, before: map[string]bool{}}
}

// tolerantWork is work for a fault: a settle refused as stale (its lease
// made on a master that failed before it replicated) is the URL's other
// fetch, not an error. at is called after each settle.
func (g *settleLog) work(t *testing.T, f *shared.Frontier, hosts, n int, at func(int64)) {
	ctx := context.Background()
	for {
		l, err := f.Claim(ctx)
		if errors.Is(err, crawl.ErrFrontierDone) {
			return
		}
		if err != nil {
			t.Error(err)
			return
		}
		time.Sleep(g.fetch)
		_, err = f.Settle(ctx, l, crawl.Result{Bytes: 1}, graph(l.URL, hosts, n))
		if errors.Is(err, crawl.ErrStaleLease) {
			g.stale.Add(1)
			continue
		}
		if err != nil {
			t.Error(err)
			return
		}
		g.mu.Lock()
		g.count[l.URL]++
		if g.count[l.URL] == 1 && !g.fault.Load() {
			g.before[l.URL] = true
		}
		g.mu.Unlock()
		if at != nil {
			at(g.n.Add(1))
		}
	}
}

// dups is how many URLs were settled more than once, and how many of
// those were first settled before the fault: settles the store
// acknowledged and lost.
func (g *settleLog) dups() (all, lost int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for u, k := range g.count {
		if k > 1 {
			all++
			if g.before[u] {
				lost++
			}
		}
	}
	return all, lost
}

// freezer is a relay from a replica to its master that, once frozen,
// passes nothing more either way: the replica falls behind, as one on a
// slow link does, and what the master sent it meanwhile is lost with
// the master.
type freezer struct {
	ln     net.Listener
	frozen atomic.Bool
	mu     sync.Mutex
	conns  []net.Conn
}

func startFreezer(t *testing.T, target string) *freezer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fz := &freezer{ln: ln}
	t.Cleanup(func() { ln.Close(); fz.cut() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			fz.mu.Lock()
			fz.conns = append(fz.conns, c, s)
			fz.mu.Unlock()
			go fz.pass(c, s)
			go fz.pass(s, c)
		}
	}()
	return fz
}

func (fz *freezer) pass(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !fz.frozen.Load() {
			if _, err := dst.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// cut closes every connection through the relay.
func (fz *freezer) cut() {
	fz.mu.Lock()
	defer fz.mu.Unlock()
	for _, c := range fz.conns {
		c.Close()
	}
}

// A crawl through Sentinel (a master, two replicas, three sentinels) goes
// on when the master is killed mid-crawl and a replica promoted: every
// URL settled, at least once. The replicas reach the master through
// relays frozen 300 ms before the kill, so that they are behind it, as
// on a slow link. Without --state-replicas the settles the master
// acknowledged in those 300 ms are lost and their URLs settled again;
// with Replicas 1 (WAIT 1 after each settle, until one replica holds
// it) none is: only URLs under way at the kill are settled twice.
func TestSentinelFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts six processes")
	}
	shared.QuietClient()
	const hosts, n = 5, 200
	for _, replicas := range []int{0, 1} {
		t.Run(fmt.Sprint("replicas=", replicas), func(t *testing.T) {
			m := redisd.Start(t, "repl-diskless-sync-delay 0")
			var relays []*freezer
			for range 2 {
				fz := startFreezer(t, m.Addr)
				relays = append(relays, fz)
				redisd.StartReplicaOf(t, fz.ln.Addr().String())
			}
			ss := redisd.StartSentinels(t, m, 3, 2)
			raw := ss.URL("fo")
			o := shared.Options{Lease: 2 * time.Second, PerHost: 2, Replicas: replicas, StateTimeout: time.Minute}
			first := open(t, raw, o)
			if _, err := first.Add(context.Background(), []crawl.Item{{URL: "gopher://h0.test:70/1/0"}}); err != nil {
				t.Fatal(err)
			}
			g := newSettleLog()
			g.fetch = 20 * time.Millisecond
			var once sync.Once
			var wg sync.WaitGroup
			for w := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					o := o
					o.Worker = fmt.Sprint("w", w)
					g.work(t, open(t, raw, o), hosts, n, func(k int64) {
						if k >= 300 {
							once.Do(func() {
								go func() {
									for _, fz := range relays {
										fz.frozen.Store(true)
									}
									time.Sleep(300 * time.Millisecond)
									g.fault.Store(true)
									m.Kill()
									for _, fz := range relays {
										fz.cut()
									}
								}()
							})
						}
					})
				}()
			}
			wg.Wait()
			if addr := ss.MasterAddr(); addr == m.Addr || addr == "" {
				t.Fatalf("the sentinels name %q as the master: no failover", addr)
			}
			if len(g.count) != hosts*n {
				t.Errorf("%d URLs settled, want %d", len(g.count), hosts*n)
			}
			all, lost := g.dups()
			t.Logf("replicas=%d: %d URLs settled twice, %d of them settled before the failover (acknowledged, not replicated); %d settles refused as stale (claims not replicated: fetched, then fetched by another)", replicas, all, lost, g.stale.Load())
			switch {
			case replicas > 0 && lost > 0:
				t.Errorf("%d settles acknowledged after WAIT 1 were lost in the failover", lost)
			case replicas == 0 && lost == 0:
				t.Errorf("no settle lost without WAIT, with the replicas 300 ms behind: the test shows nothing")
			}
			if all > lost+8+hosts*2 {
				t.Errorf("%d URLs settled twice, %d lost: more than those under way (8 workers, %d hosts of 2 leases)", all, lost, hosts)
			}
			st, err := first.Status(context.Background())
			if err != nil || st.Queued != 0 || st.Leased != 0 || st.Settled < int64(hosts*n) {
				t.Errorf("status through the sentinels: %+v, %v", st, err)
			}
		})
	}
}

// A crawl in a Redis Cluster of three masters, each with a replica: its
// hosts are spread over three shards, one a master (each shard's keys in
// one hash tag, each tag's slot on its own master), every URL is settled
// once by eight workers, each master holds a part of the crawl, and the
// crawl goes on when a master is killed and its replica takes its slots,
// and when a replica takes them over from its master alive (CLUSTER
// FAILOVER: the old master, a replica now, answers MOVED to the steps
// sent to it).
func TestClusterShards(t *testing.T) {
	if testing.Short() {
		t.Skip("starts six processes")
	}
	faults := []struct {
		name  string
		fault func(t *testing.T, c *redisd.Cluster) string
	}{
		{"master killed", func(t *testing.T, c *redisd.Cluster) string {
			m := c.Masters()[0]
			m.Kill()
			return "master " + m.Addr + " killed"
		}},
		{"CLUSTER FAILOVER", func(t *testing.T, c *redisd.Cluster) string {
			for _, r := range c.Nodes {
				if !strings.Contains(r.CLI("INFO", "replication"), "role:slave") {
					continue
				}
				// A manual failover waits for the replica to catch up
				// with its master, which a busy master may not let it
				// do in time (cluster-mf-timeout, 5 s): then FORCE.
				for _, how := range [][]string{{"CLUSTER", "FAILOVER"}, {"CLUSTER", "FAILOVER", "FORCE"}} {
					r.CLI(how...)
					for range 300 {
						if strings.Contains(r.CLI("INFO", "replication"), "role:master") {
							return "replica " + r.Addr + " took over from its master (" + strings.Join(how, " ") + ")"
						}
						time.Sleep(25 * time.Millisecond)
					}
				}
				t.Errorf("the replica on %s did not take over", r.Addr)
				return "no failover"
			}
			t.Errorf("no replica")
			return "no replica"
		}},
	}
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) { clusterShards(t, f.fault) })
	}
}

func clusterShards(t *testing.T, fault func(*testing.T, *redisd.Cluster) string) {
	c := redisd.StartCluster(t, 3)
	raw := c.URL("cl")
	const hosts, n = 12, 100
	o := shared.Options{Lease: 2 * time.Second, PerHost: 2}
	first := open(t, raw, o)
	shards := first.Shards()
	if len(shards) != 3 {
		t.Fatalf("shards %q, want one a master", shards)
	}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{c.Nodes[0].Addr}})
	defer cc.Close()
	ctx := context.Background()
	owners := map[string]bool{}
	for _, s := range shards {
		m, err := cc.MasterForKey(ctx, s+":crawl")
		if err != nil {
			t.Fatal(err)
		}
		owners[m.Options().Addr] = true
	}
	if len(owners) != 3 {
		t.Errorf("the shards %q are on %d masters, want 3", shards, len(owners))
	}
	if _, err := first.Add(ctx, []crawl.Item{{URL: "gopher://h0.test:70/1/0"}}); err != nil {
		t.Fatal(err)
	}
	g := newSettleLog()
	var once sync.Once
	var wg sync.WaitGroup
	var what string
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := o
			o.Worker = fmt.Sprint("w", w)
			g.work(t, open(t, raw, o), hosts, n, func(k int64) {
				if k == 400 {
					// Each master holds its shard's queues and seen URLs.
					for _, m := range c.Masters() {
						if keys := m.CLI("DBSIZE"); keys == "0" {
							t.Errorf("master %s holds none of the crawl's keys", m.Addr)
						}
					}
				}
				if k >= 500 {
					once.Do(func() { g.fault.Store(true); what = fault(t, c) })
				}
			})
		}()
	}
	wg.Wait()
	if len(g.count) != hosts*n {
		t.Errorf("%d URLs settled, want %d", len(g.count), hosts*n)
	}
	all, lost := g.dups()
	t.Logf("cluster: %d URLs settled twice, %d of them settled before the fault (%s); %d settles refused as stale", all, lost, what, g.stale.Load())
	st, err := first.Status(ctx)
	if err != nil || st.Queued != 0 || st.Leased != 0 || st.Settled < int64(hosts*n) || len(st.Hosts) != hosts {
		t.Errorf("status over the shards: %+v, %v", st, err)
	}
}
