//go:build interop

package interop

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// fdWatch samples the number of open descriptors of process pid every
// 100 ms until stop is called, which returns the most seen.
func fdWatch(pid int) (stop func() int) {
	var peak atomic.Int64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			if fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid)); err == nil && int64(len(fds)) > peak.Load() {
				peak.Store(int64(len(fds)))
			}
			select {
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return func() int { close(done); <-finished; return int(peak.Load()) }
}

// dialFrom dials addr from the loopback address 127.0.X.Y of n.
func dialFrom(n int, addr string) (net.Conn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, byte(10+n/200), byte(1+n%200))}, Timeout: 5 * time.Second}
	return d.Dial("tcp", addr)
}

// TestServeUnderHostileClients holds deref serve under 10,000 slowloris
// connections, then 10,000 idle keep-alive connections, then readers of
// a 1 GiB object at a byte a second, from many loopback addresses, while
// a well-behaved client at its own address gets a pygopherd page every
// 200 ms, and Chromium opens it three times under the slowloris
// connections: each of their requests is answered within 1 s, the gateway's
// descriptors stay under --max-conns and what it needs besides, its
// resident memory under 256 MiB, and every hostile connection is ended
// by the time-out that bounds it. Then ab, Apache's benchmark, makes
// 2,000 requests 50 at a time with none failing.
func TestServeUnderHostileClients(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 connections")
	}
	files := t.TempDir()
	f, err := os.Create(filepath.Join(files, "big.bin"))
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(1 << 30) // sparse: it costs no disk
	f.Close()
	const maxConns = 12000
	base, log := startServe(t, "--max-conns", fmt.Sprint(maxConns), "--header-timeout", "10", "--keepalive-timeout", "10", "--send-timeout", "3", "--allow-file", files)
	addr := strings.TrimPrefix(base, "http://")
	pyg := strings.TrimPrefix(gopherServers(t)["pygopherd"], "gopher://")
	page := base + "/gopher/" + pyg + "/1/"
	stopFDs := fdWatch(log.pid)

	good := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}).DialContext}, Timeout: 5 * time.Second}
	var slowest atomic.Int64
	var goodFailures []string
	var mu sync.Mutex
	goodDone := make(chan struct{})
	goodStopped := make(chan struct{})
	go func() {
		defer close(goodStopped)
		for {
			start := time.Now()
			resp, err := good.Get(page)
			took := time.Since(start)
			if took > time.Duration(slowest.Load()) {
				slowest.Store(int64(took))
			}
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			if err != nil || resp.StatusCode != 200 {
				mu.Lock()
				goodFailures = append(goodFailures, fmt.Sprint(err, resp))
				mu.Unlock()
			}
			select {
			case <-goodDone:
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()

	// Phase 1: slowloris, a header byte every 2 s until the server ends it.
	hold := func(name string, n int, open func(i int) (net.Conn, error), trickle bool, bound time.Duration) {
		conns := make([]net.Conn, 0, n)
		for i := range n {
			c, err := open(i)
			if err != nil {
				t.Fatalf("%s: connection %d: %v", name, i, err)
			}
			conns = append(conns, c)
		}
		start := time.Now()
		var ended atomic.Int64
		var wg sync.WaitGroup
		for _, c := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				c.SetDeadline(time.Now().Add(bound + 10*time.Second))
				stop := make(chan struct{})
				if trickle {
					go func() {
						for {
							select {
							case <-stop:
								return
							case <-time.After(2 * time.Second):
								c.Write([]byte("X"))
							}
						}
					}()
				}
				io.Copy(io.Discard, c) // until the server closes it
				close(stop)
				if time.Since(start) < bound+5*time.Second {
					ended.Add(1)
				}
			}()
		}
		wg.Wait()
		if int(ended.Load()) != n {
			t.Errorf("%s: %d of %d connections ended within %v", name, ended.Load(), n, bound+5*time.Second)
		}
	}
	// Chromium, the other well-behaved client, opens the page three times
	// while the slowloris connections are held.
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("no chromium: the interop start script installs it")
	}
	bctx := browse(t, chromium, base)
	var browserTook []time.Duration
	var browserErr error
	browserDone := make(chan struct{})
	go func() {
		defer close(browserDone)
		for range 3 {
			time.Sleep(2 * time.Second)
			start := time.Now()
			ctx, cancel := context.WithTimeout(bctx, 10*time.Second)
			browserErr = chromedp.Do(ctx, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("main")))
			cancel()
			browserTook = append(browserTook, time.Since(start))
			if browserErr != nil {
				return
			}
		}
	}()
	hold("slowloris", 10000, func(i int) (net.Conn, error) {
		c, err := dialFrom(i, addr)
		if err == nil {
			_, err = io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n")
		}
		return c, err
	}, true, 10*time.Second)

	<-browserDone
	if browserErr != nil {
		t.Errorf("Chromium under slowloris: %v", browserErr)
	}
	for _, d := range browserTook {
		if d > time.Second {
			t.Errorf("Chromium waited %v for the page under slowloris", d)
		}
	}
	t.Logf("Chromium's pages under slowloris: %v", browserTook)

	// Phase 2: idle keep-alive connections, each after one request.
	hold("idle keep-alive", 10000, func(i int) (net.Conn, error) {
		c, err := dialFrom(i, addr)
		if err != nil {
			return nil, err
		}
		io.WriteString(c, "GET /style.css HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return nil, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return c, nil
	}, false, 10*time.Second)

	// Phase 3: readers of 1 GiB at a byte a second. Each holds two
	// descriptors of the gateway (its connection and the file) until its
	// response is ended.
	count := func() int {
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", log.pid))
		return len(fds)
	}
	before := count()
	var readers []net.Conn
	for i := range 20 {
		c, err := dialFrom(i, addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.(*net.TCPConn).SetReadBuffer(4096)
		io.WriteString(c, "GET /file///"+strings.TrimPrefix(filepath.ToSlash(files), "/")+"/big.bin?raw=1 HTTP/1.1\r\nHost: x\r\n\r\n")
		readers = append(readers, c)
	}
	held := false
	start := time.Now()
	for ; time.Since(start) < 20*time.Second; time.Sleep(time.Second) {
		for _, c := range readers {
			c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
			c.Read(make([]byte, 1))
		}
		n := count()
		held = held || n >= before+20
		if held && n <= before+2 {
			break
		}
	}
	if n := count(); !held || n > before+2 {
		t.Errorf("the readers at a byte a second: held %v, %d descriptors %v on (%d before)", held, n, time.Since(start).Round(time.Second), before)
	} else {
		t.Logf("the readers at a byte a second were ended %v on (--send-timeout 3)", time.Since(start).Round(time.Second))
	}

	close(goodDone)
	<-goodStopped
	peakFDs := stopFDs()
	peak := servePeak(t, log)
	t.Logf("hostile clients: the well-behaved client's slowest answer %v, %d failures; the gateway's peak %d descriptors, resident %.1f MiB",
		time.Duration(slowest.Load()).Round(time.Millisecond), len(goodFailures), peakFDs, float64(peak)/1024)
	if len(goodFailures) > 0 {
		t.Errorf("the well-behaved client failed %d times, the first: %s", len(goodFailures), goodFailures[0])
	}
	if time.Duration(slowest.Load()) > time.Second {
		t.Errorf("the well-behaved client waited %v", time.Duration(slowest.Load()))
	}
	if peakFDs > maxConns+256 {
		t.Errorf("%d descriptors, --max-conns %d", peakFDs, maxConns)
	}
	if peak > 256<<10 {
		t.Errorf("peak resident size %.1f MiB, bound 256 MiB", float64(peak)/1024)
	}

	// ab, a real load client: 2,000 requests of the page, 50 at a time.
	ab, err := exec.LookPath("ab")
	if err != nil {
		t.Fatal("ab is not installed: .ci/interop/start installs apache2-utils")
	}
	out, err := exec.Command(ab, "-q", "-n", "2000", "-c", "50", page).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Failed requests:        0") || !strings.Contains(string(out), "Complete requests:      2000") {
		t.Errorf("ab: %v\n%s", err, out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "Requests per second") || strings.HasPrefix(l, "Time per request") {
			t.Log("ab: " + strings.Join(strings.Fields(l), " "))
		}
	}
}
