package wais_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/urlderef/deref/internal/testserver/waisd"
	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/protocols/wais"
	"github.com/urlderef/deref/url"
)

// TestMain doubles as the benchmark's WAIS server: run with
// DEREF_WAISD_SERVE set, the test binary serves generated documents and
// prints its address, so that the benchmark measures the client's memory
// alone.
func TestMain(m *testing.M) {
	if os.Getenv("DEREF_WAISD_SERVE") != "" {
		s := waisd.New()
		for _, mib := range []int64{1, 10, 100} {
			s.AddDoc(&waisd.Doc{Name: fmt.Sprintf("big%d.bin", mib), Size: mib << 20, Data: pattern{}})
		}
		if err := s.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(s.Addr())
		io.Copy(io.Discard, os.Stdin) // until the benchmark ends
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// pattern is an endless document whose byte i is i mod 251.
type pattern struct{}

func (pattern) ReadAt(p []byte, off int64) (int, error) {
	for i := range p {
		p[i] = byte((off + int64(i)) % 251)
	}
	return len(p), nil
}

func serverProcess(b *testing.B) string {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "DEREF_WAISD_SERVE=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stdin.Close(); cmd.Wait() })
	addr, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	return strings.TrimSpace(addr)
}

// BenchmarkRetrieve fetches documents of 1, 10 and 100 MiB in 10000-byte
// slices from a server in another process. peak-heap-KiB, the most heap
// in use seen after any read, stays the same at every size: one slice is
// held at a time.
func BenchmarkRetrieve(b *testing.B) {
	addr := serverProcess(b)
	for _, mib := range []int64{1, 10, 100} {
		b.Run(fmt.Sprintf("%dMiB", mib), func(b *testing.B) {
			size := mib << 20
			u := url.MustParse(fmt.Sprintf("wais://%s/test/TEXT/%d/2=test;3=0%%20%d%%20/srv/wais/docs/big%d.bin;", addr, size, size, mib))
			sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
			var peak uint64
			buf := make([]byte, 64<<10)
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				r, err := (&wais.Fetcher{}).Fetch(context.Background(), &protocols.Request{URL: u})
				if err != nil {
					b.Fatal(err)
				}
				var n int64
				for reads := 0; ; reads++ {
					k, err := r.Body.Read(buf)
					n += int64(k)
					if reads%64 == 0 {
						metrics.Read(sample)
						peak = max(peak, sample[0].Value.Uint64())
					}
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				r.Body.Close()
				if n != size {
					b.Fatalf("%d bytes of %d", n, size)
				}
			}
			b.ReportMetric(float64(peak>>10), "peak-heap-KiB")
		})
	}
}
