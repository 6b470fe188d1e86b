package shared_test

import (
	"context"
	"fmt"
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
// adding one new link; pairs/s is claims plus settles per second.
func BenchmarkClaimSettle(b *testing.B) {
	s := redisd.Start(b)
	ctx := context.Background()
	const workers = 32
	f := open(b, s.URL("bench"), shared.Options{PerHost: 4})
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
				if _, err := f.Settle(ctx, l, crawl.Result{Bytes: 1}, link); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(begin).Seconds(), "pairs/s")
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
