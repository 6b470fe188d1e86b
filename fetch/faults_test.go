package fetch_test

import (
	"context"
	"errors"
	"io"
	"os"
	"runtime"
	"sort"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/internal/testserver/faults"
	"github.com/urlderef/deref/url"
)

// How each fault must end: its exit codes (fetch.ExitCode) allowed.
var faultEnds = map[string][]int{
	faults.NeverGreet:       {6},    // timed out
	faults.GreetForever:     {7},    // protocol error: past the reply or head bound
	faults.EndlessLine:      {7},    // protocol error: past the line bound
	faults.EndlessReply:     {7},    // protocol error: past the reply bound
	faults.EndlessListing:   {7},    // too large
	faults.EndlessBody:      {7},    // too large (MaxBytes)
	faults.Trickle:          {6},    // --max-time
	faults.LieAboutSize:     {7},    // ended early
	faults.DropMidBody:      {6, 7}, // ended early, or the connection failed
	faults.DropBeforeFinal:  {6, 7}, // no final reply
	faults.Reset:            {6},    // network failure
	faults.StallMidBody:     {6},    // timed out: idle
	faults.StallBeforeFinal: {6},    // timed out: idle
}

// TestFaultCatalogue runs every fault of every protocol's table
// (internal/testserver/faults) through a download and checks how it ends:
// the error's class, within the connect and idle time-outs (or --max-time
// for a trickle), with the heap bounded, and nothing under the final name.
func TestFaultCatalogue(t *testing.T) {
	const connect, idle, maxTime = 300 * time.Millisecond, 700 * time.Millisecond, 2 * time.Second
	for _, table := range faults.Tables {
		names := make([]string, 0, len(table.Faults))
		for n := range table.Faults {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, name := range names {
			t.Run(table.Scheme+"/"+name, func(t *testing.T) {
				s, err := table.Start(name)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				c := fetch.NewClient()
				c.NetrcFile = ""
				c.Proxy = func(*url.URL) (*url.URL, error) { return nil, nil }
				c.ConnectTimeout, c.IdleTimeout = connect, idle
				c.MaxBytes = 1 << 20 // the other bounds keep their defaults
				ctx, cancel := context.WithTimeout(context.Background(), maxTime)
				defer cancel()
				dir := t.TempDir()
				runtime.GC()
				stop := make(chan struct{})
				peak := faults.PeakHeap(stop)
				start := time.Now()
				var got error
				u, _ := url.Parse(s.URL)
				if name == faults.EndlessListing || name == faults.GreetForever && table.Scheme == "http" {
					var resp *fetch.Response
					if resp, got = c.FetchWith(ctx, u, fetch.FetchOptions{}); got == nil {
						_, got = io.Copy(io.Discard, resp.Body)
						if cerr := resp.Body.Close(); got == nil {
							got = cerr
						}
					}
				} else {
					_, got = c.DownloadWith(ctx, s.URL, dir, fetch.DownloadOptions{Name: "obj"})
				}
				elapsed := time.Since(start)
				close(stop)
				heap := <-peak
				code := fetch.ExitCode(got)
				ok := false
				for _, want := range faultEnds[name] {
					ok = ok || code == want
				}
				if got == nil || !ok {
					t.Errorf("ended with %v (exit %d), want exit %v", got, code, faultEnds[name])
				}
				bound := connect + idle
				if name == faults.Trickle {
					bound = maxTime
				}
				if elapsed > bound+time.Second {
					t.Errorf("took %v, bound %v", elapsed, bound)
				}
				if heap > 64<<20 {
					t.Errorf("peak heap %d MiB", heap>>20)
				}
				if _, err := os.Stat(dir + "/obj"); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("a file under the final name: %v", err)
				}
				t.Logf("%v after %v, peak heap %.1f MiB, server sent %d bytes", got, elapsed.Round(time.Millisecond), float64(heap)/(1<<20), s.Sent.Load())
			})
		}
	}
}
