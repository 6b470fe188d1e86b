package shared_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
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

// BenchmarkClaimSettle is the store alone: 32 workers claim and settle
// URLs of 1,000 hosts as fast as the store lets them, each settle
// adding one new link; pairs/s is claims plus settles per second. One
// redis-server; through Sentinel (a master, a replica, three sentinels;
// with replicas=1 each settle waits for the replica); and a cluster of
// three masters, without replicas and with one each (the crawl in three
// shards). On two cores the cluster's six processes share them: compare
// one with the cluster without replicas, Sentinel with the cluster with.
func BenchmarkClaimSettle(b *testing.B) {
	// Each settle's link is of another host (as --span-hosts finds them:
	// in a cluster, of another shard two times in three), or of the
	// URL's own host (as a crawl of the default scope finds them).
	links := func(b *testing.B, raw func(string) string, o shared.Options) {
		// A prefix of its own for each run: a crawl of the same store
		// done already would have nothing to claim.
		b.Run("links=other-host", func(b *testing.B) { claimSettle(b, raw(fmt.Sprint("other-", o.Replicas, "-", b.N)), o, false, nil) })
		b.Run("links=same-host", func(b *testing.B) { claimSettle(b, raw(fmt.Sprint("same-", o.Replicas, "-", b.N)), o, true, nil) })
	}
	b.Run("one", func(b *testing.B) {
		s := redisd.Start(b)
		links(b, s.URL, shared.Options{PerHost: 4})
	})
	// One Redis with a replica, as Sentinel's master has: what its
	// replication costs the master, beside what Sentinel adds.
	// It reports the bytes of the replication stream a pair, which each
	// replica receives and applies and the append-only file takes.
	b.Run("one-with-replica", func(b *testing.B) {
		s := redisd.Start(b, "repl-diskless-sync-delay 0")
		redisd.StartReplica(b, s)
		b.Run("links=other-host", func(b *testing.B) {
			claimSettle(b, s.URL(fmt.Sprint("other-", b.N)), shared.Options{PerHost: 4}, false, s)
		})
		b.Run("links=same-host", func(b *testing.B) {
			claimSettle(b, s.URL(fmt.Sprint("same-", b.N)), shared.Options{PerHost: 4}, true, s)
		})
	})
	b.Run("sentinel", func(b *testing.B) {
		m := redisd.Start(b, "repl-diskless-sync-delay 0")
		redisd.StartReplica(b, m)
		ss := redisd.StartSentinels(b, m, 3, 1)
		b.Run("replicas=0", func(b *testing.B) { links(b, ss.URL, shared.Options{PerHost: 4}) })
		b.Run("replicas=1", func(b *testing.B) { links(b, ss.URL, shared.Options{PerHost: 4, Replicas: 1}) })
	})
	for _, replicas := range []int{0, 1} {
		b.Run(fmt.Sprint("cluster/replicas=", replicas), func(b *testing.B) {
			c := redisd.StartClusterOf(b, 3, replicas)
			links(b, c.URL, shared.Options{PerHost: 4})
		})
	}
}

// claimSettle measures claim-settle pairs a second, and where master is
// given, the bytes of its replication stream a pair.
func claimSettle(b *testing.B, raw string, o shared.Options, sameHost bool, master *redisd.Server) {
	shared.QuietClient()
	ctx := context.Background()
	const workers = 32
	f := open(b, raw, o)
	var seed []crawl.Item
	for h := range 1000 {
		seed = append(seed, crawl.Item{URL: fmt.Sprintf("gopher://h%d.test:70/1/0", h)})
	}
	if _, err := f.Add(ctx, seed); err != nil {
		b.Fatal(err)
	}
	var left atomic.Int64
	left.Store(int64(b.N))
	var next atomic.Int64
	var offset int64
	if master != nil {
		offset = master.Info("master_repl_offset")
	}
	cpu := busyCPU()
	b.ResetTimer()
	begin := time.Now()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for left.Add(-1) >= 0 {
				l, err := f.Claim(ctx)
				if err != nil {
					b.Error(err)
					return
				}
				n := next.Add(1)
				link := []crawl.Item{{URL: fmt.Sprintf("gopher://h%d.test:70/1/%d", n%1000, n)}}
				if sameHost {
					link[0].URL = fmt.Sprintf("gopher://%s/1/%d", strings.TrimPrefix(l.Host, "gopher://"), n)
				}
				if _, err := f.Settle(ctx, l, crawl.Result{Bytes: 1}, link); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(begin).Seconds(), "pairs/s")
	if cpu >= 0 {
		b.ReportMetric((busyCPU()-cpu)/float64(b.N)*1e6, "cpu-µs/pair")
	}
	if master != nil {
		b.ReportMetric(float64(master.Info("master_repl_offset")-offset)/float64(b.N), "repl-B/pair")
	}
}

// BenchmarkFullStore adds URLs (about 60 bytes each, on 300 hosts) to a
// crawl until its store is full: one redis-server of maxmemory 32 MB,
// and a cluster of three masters of 32 MB each, the crawl spread over
// them in three shards; URLs is how many each held when it refused.
func BenchmarkFullStore(b *testing.B) {
	fill := func(b *testing.B, raw string) int {
		f := open(b, raw, shared.Options{})
		ctx := context.Background()
		n := 0
		for {
			batch := make([]crawl.Item, 1000)
			for k := range batch {
				batch[k] = crawl.Item{URL: fmt.Sprintf("gopher://host-%03d.example.test:70/0/archive/item-%08d.txt", (n+k)%300, n+k)}
			}
			if _, err := f.Add(ctx, batch); err != nil {
				if !strings.Contains(err.Error(), "is full") {
					b.Fatal(err)
				}
				return n
			}
			n += len(batch)
		}
	}
	for range b.N {
		s := redisd.Start(b, "maxmemory 32mb")
		one := fill(b, s.URL("full"))
		c := redisd.StartCluster(b, 3)
		for _, node := range c.Nodes {
			node.CLI("CONFIG", "SET", "maxmemory", "32mb")
		}
		three := fill(b, c.URL("full"))
		b.ReportMetric(float64(one), "URLs-one")
		b.ReportMetric(float64(three), "URLs-cluster3")
		b.ReportMetric(float64(three)/float64(one), "ratio")
	}
}

// BenchmarkStoreMemory adds 1,000,000 URLs (about 60 bytes each, on 100
// hosts) and reads the store's used_memory: seen-B/URL is what the seen
// set costs once the queues are gone, queued-B/URL what a queued URL
// costs besides.
func BenchmarkStoreMemory(b *testing.B) {
	const n = 1_000_000
	for range b.N {
		s := redisd.Start(b)
		ctx := context.Background()
		rdb := redis.NewClient(&redis.Options{Addr: s.Addr})
		defer rdb.Close()
		base := s.Info("used_memory")
		f := open(b, s.URL("mem"), shared.Options{})
		batch := make([]crawl.Item, 0, 1000)
		for i := range n {
			batch = append(batch, crawl.Item{URL: fmt.Sprintf("gopher://host-%03d.example.test:70/0/archive/item-%07d.txt", i%100, i)})
			if len(batch) == cap(batch) {
				if _, err := f.Add(ctx, batch); err != nil {
					b.Fatal(err)
				}
				batch = batch[:0]
			}
		}
		all := s.Info("used_memory")
		keys, err := rdb.Keys(ctx, "mem:q:*").Result()
		if err != nil || len(keys) != 100 {
			b.Fatalf("%d queues: %v", len(keys), err)
		}
		if err := rdb.Del(ctx, keys...).Err(); err != nil {
			b.Fatal(err)
		}
		seen := s.Info("used_memory")
		b.ReportMetric(float64(seen-base)/n, "seen-B/URL")
		b.ReportMetric(float64(all-seen)/n, "queued-B/URL")
	}
}

// busyCPU is the seconds of processor time the machine has spent, on
// every process (this one, the stores, the sentinels), from Linux's
// /proc/stat: user, nice, system, irq and softirq, not idle, iowait nor
// steal. A pair's share of it is what the pairs a second would be on a
// machine of its own, whatever its neighbours take; -1 elsewhere.
func busyCPU() float64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return -1
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return -1
	}
	var busy float64
	for _, i := range []int{1, 2, 3, 6, 7} { // user nice system irq softirq
		n, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return -1
		}
		busy += n
	}
	return busy / 100 // USER_HZ
}
