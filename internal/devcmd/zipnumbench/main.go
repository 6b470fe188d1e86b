// Command zipnumbench measures deref's ZipNum index at the size of a
// large collection: gen writes the flat CDXJ index of N generated
// captures (10,000 hosts, their pages, digests and offsets as a crawl's
// WARC files would have them) and the ZipNum form of it, as deref index
// --zipnum writes it, and says both sizes; measure opens the ZipNum
// index as deref serve --archive does and looks up captures at random
// (a tenth of them not archived), and says the time to open it, the
// lookups' 50th, 99th and 100th percentiles, those of a collection
// page's 100 URLs after and before a URL at random (warc.Archive.Browse),
// and the process's peak resident memory; -flat measures the flat CDXJ
// index instead. Lookups touch the index only: the WARC files named
// are not made.
//
//	go run ./internal/devcmd/zipnumbench gen -n 10000000 DIR
//	go run ./internal/devcmd/zipnumbench measure DIR
package main

import (
	"bufio"
	"encoding/base32"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/urlderef/deref/fetch/warc"
)

const hosts = 10000

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	n := fs.Int("n", 10_000_000, "captures to generate (gen)")
	lookups := fs.Int("lookups", 20000, "lookups to time (measure)")
	flat := fs.Bool("flat", false, "measure the flat CDXJ index instead (measure)")
	fs.Parse(os.Args[2:])
	if fs.NArg() != 1 {
		usage()
	}
	dir := fs.Arg(0)
	var err error
	switch os.Args[1] {
	case "gen":
		err = gen(dir, *n)
	case "measure":
		err = measure(dir, *lookups, *flat)
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "zipnumbench:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: zipnumbench gen [-n N] DIR | zipnumbench measure [-lookups N] DIR")
	os.Exit(2)
}

// perHost is how many pages each host has for n captures.
func perHost(n int) int { return (n + hosts - 1) / hosts }

func pageURL(h, p int) string { return fmt.Sprintf("http://h%05d.example.com/p/%07d.html", h, p) }

// gen writes DIR/flat.cdxj, sorted, then DIR/index.idx and
// DIR/index.cdx.gz from it.
func gen(dir string, n int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	flat := filepath.Join(dir, "flat.cdxj")
	f, err := os.Create(flat)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	r := rand.New(rand.NewPCG(1, 2))
	per := perHost(n)
	var digest [20]byte
	offset, file, written := int64(0), 0, 0
	start := time.Now()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for h := 0; h < hosts && written < n; h++ {
		for p := 0; p < per && written < n; p++ {
			for i := range digest {
				digest[i] = byte(r.Uint32())
			}
			length := 500 + r.IntN(50000)
			ts := at.Add(time.Duration(written) * time.Second).Format("20060102150405")
			fmt.Fprintf(bw, "com,example,h%05d)/p/%07d.html %s {\"digest\":\"%s\",\"filename\":\"crawl-%05d.warc.gz\",\"length\":\"%d\",\"mime\":\"text/html\",\"offset\":\"%d\",\"status\":\"200\",\"url\":\"%s\"}\n",
				h, p, ts, base32.StdEncoding.EncodeToString(digest[:]), file, length, offset, pageURL(h, p))
			offset += int64(length)
			if written++; written%100_000 == 0 {
				file, offset = file+1, 0
			}
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Printf("flat CDXJ: %d captures, %d bytes, written in %.1f s\n", written, size(flat), time.Since(start).Seconds())
	start = time.Now()
	if err := warc.WriteZipNum(filepath.Join(dir, "index"), flat); err != nil {
		return err
	}
	idx, cdx := warc.ZipNumNames(filepath.Join(dir, "index"))
	fmt.Printf("ZipNum: %s %d bytes + %s %d bytes = %.1f%% of the flat index, written in %.1f s\n", filepath.Base(idx), size(idx), filepath.Base(cdx), size(cdx),
		100*float64(size(idx)+size(cdx))/float64(size(flat)), time.Since(start).Seconds())
	return os.WriteFile(filepath.Join(dir, "captures"), []byte(fmt.Sprint(written)), 0o644)
}

func size(p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return st.Size()
}

// measure opens DIR/index.idx and times lookups.
func measure(dir string, lookups int, flat bool) error {
	b, err := os.ReadFile(filepath.Join(dir, "captures"))
	if err != nil {
		return fmt.Errorf("run gen first: %w", err)
	}
	var n int
	fmt.Sscan(string(b), &n)
	start := time.Now()
	index := filepath.Join(dir, "index.idx")
	if flat {
		index = filepath.Join(dir, "flat.cdxj")
	}
	a, err := warc.Open(index)
	if err != nil {
		return err
	}
	defer a.Close()
	opened := time.Since(start)
	r := rand.New(rand.NewPCG(3, 4))
	per := perHost(n)
	times := make([]time.Duration, lookups)
	found, missing := 0, 0
	for i := range lookups {
		k := r.IntN(n)
		u := pageURL(k/per, k%per)
		absent := i%10 == 9
		if absent {
			u = strings.Replace(u, ".html", ".htm", 1)
		}
		t0 := time.Now()
		caps := a.Captures(u)
		times[i] = time.Since(t0)
		switch {
		case absent && len(caps) == 0:
			missing++
		case !absent && len(caps) == 1:
			found++
		default:
			return fmt.Errorf("%s: %d captures", u, len(caps))
		}
	}
	pct := percentiles(times)
	fmt.Printf("%d captures: opened in %.1f ms; %d lookups (%d found, %d not archived): p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
		n, float64(opened.Microseconds())/1000, lookups, found, missing, pct(0.5), pct(0.99), pct(1))
	// The collection's page: 100 URLs after a URL anywhere, and the 100
	// before it, as deref serve --archive lists them.
	pagesTimed := 500
	fwd, back := make([]time.Duration, pagesTimed), make([]time.Duration, pagesTimed)
	for i := range pagesTimed {
		k := r.IntN(n)
		u := pageURL(k/per, k%per)
		t0 := time.Now()
		rows, _ := a.Browse("", u, false, 100)
		fwd[i] = time.Since(t0)
		t0 = time.Now()
		prev, _ := a.Browse("", u, true, 100)
		back[i] = time.Since(t0)
		if len(rows) == 0 || len(prev) == 0 && k >= 100 {
			return fmt.Errorf("a page after %s: %d rows, before it %d", u, len(rows), len(prev))
		}
	}
	pf, pb := percentiles(fwd), percentiles(back)
	fmt.Printf("%d pages of 100 URLs after a URL at random: p50 %.2f ms, p99 %.2f ms; before it: p50 %.2f ms, p99 %.2f ms; peak resident memory %s\n",
		pagesTimed, pf(0.5), pf(0.99), pb(0.5), pb(0.99), peakRSS())
	return nil
}

// percentiles sorts times and returns their percentiles in ms.
func percentiles(times []time.Duration) func(p float64) float64 {
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	return func(p float64) float64 { return float64(times[int(p*float64(len(times)-1))].Microseconds()) / 1000 }
}

// peakRSS is the process's peak resident memory (VmHWM), where the
// system says it (Linux).
func peakRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown on " + runtime.GOOS
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
