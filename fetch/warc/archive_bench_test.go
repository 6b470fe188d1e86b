package warc_test

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch/warc"
)

// BenchmarkArchiveLookup opens a collection of 1,000,000 captures (a
// generated CDXJ index beside its WARC file, as --warc-cdx and deref
// index write it) and looks up captures at random: the time Open takes,
// each lookup's (with its 99th percentile) and the heap held after.
//
//	go test -run '^$' -bench ArchiveLookup -benchtime 20000x ./fetch/warc
func BenchmarkArchiveLookup(b *testing.B) {
	const n = 1_000_000
	dir := b.TempDir()
	warcPath := filepath.Join(dir, "big.warc.gz")
	os.WriteFile(warcPath, nil, 0o644)
	f, err := os.Create(warc.IndexName(warcPath))
	if err != nil {
		b.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	for i := range n {
		fmt.Fprintf(bw, "gopher://(org,example,)/0/item%07d 20260101000000 {\"url\":\"gopher://example.org/0/item%07d\",\"mime\":\"text/plain\",\"status\":\"-\",\"digest\":\"AAAA%07d\",\"length\":\"512\",\"offset\":\"%d\",\"filename\":\"big.warc.gz\"}\n", i, i, i, int64(i)*512)
	}
	if err := bw.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	runtime.GC()
	start := time.Now()
	a, err := warc.Open(warcPath)
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	open := time.Since(start)
	var took []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		k := rand.IntN(n)
		t0 := time.Now()
		caps := a.Captures(fmt.Sprintf("gopher://example.org/0/item%07d", k))
		took = append(took, time.Since(t0))
		if len(caps) != 1 {
			b.Fatalf("item %d: %d captures", k, len(caps))
		}
	}
	b.StopTimer()
	slices.Sort(took)
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	b.ReportMetric(open.Seconds(), "open-s")
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MiB")
}
