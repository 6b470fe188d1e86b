package warc_test

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
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

// BenchmarkArchiveIndexAtStart opens a collection of WARC records that
// has no index (as wget writes it without --warc-cdx): the time Open
// takes to read it through and index it, per record.
//
//	go test -run '^$' -bench ArchiveIndexAtStart -benchtime 1x ./fetch/warc
func BenchmarkArchiveIndexAtStart(b *testing.B) {
	const n = 200_000
	dir := b.TempDir()
	w, err := warc.Create(filepath.Join(dir, "many"), warc.Options{Uncompressed: true, NoDigests: true})
	if err != nil {
		b.Fatal(err)
	}
	when := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		w.Write(warc.Record{Type: "resource", URI: fmt.Sprintf("gopher://example.org/0/item%07d", i), Date: when, MediaType: "text/plain", Body: strings.NewReader("x")})
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		a, err := warc.Open(filepath.Join(dir, "many.warc"))
		if err != nil {
			b.Fatal(err)
		}
		if caps := a.Captures("gopher://example.org/0/item0123456"); n > 123456 && len(caps) != 1 {
			b.Fatalf("%d captures", len(caps))
		}
		a.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/n, "µs/record")
}
