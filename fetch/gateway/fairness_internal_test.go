package gateway

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch"
)

// stallingGopher is a Gopher server on loopback: /fast answers a text,
// anything else is read and never answered; open counts the connections
// it holds.
func stallingGopher(t *testing.T) (addr string, open *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	open = &atomic.Int64{}
	done := make(chan struct{})
	var wg sync.WaitGroup
	t.Cleanup(func() { close(done); ln.Close(); wg.Wait() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				open.Add(1)
				defer open.Add(-1)
				sel, _ := bufio.NewReader(c).ReadString('\n')
				if sel == "/fast\r\n" {
					io.WriteString(c, "hello\r\n.\r\n")
					return
				}
				<-done
			}()
		}
	}()
	return ln.Addr().String(), open
}

// from is an HTTP client whose connections come from the loopback
// address ip.
func from(ip net.IP) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: ip}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext, MaxConnsPerHost: 0}, Timeout: 5 * time.Second}
}

// One client opening many slow upstream retrievals holds PerClient of
// them, and at most MaxUpstream are open in all; a client at another
// address is served meanwhile.
func TestUpstreamFairness(t *testing.T) {
	for _, tt := range []struct {
		perClient, maxUpstream int
		want                   int64
	}{{8, 0, 8}, {8, 4, 4}} {
		addr, open := stallingGopher(t)
		c := fetch.NewClient()
		c.NetrcFile = ""
		s := httptest.NewServer(Handler(c, Options{AllowPrivate: true, PerClient: tt.perClient, MaxUpstream: tt.maxUpstream, PerHost: 100}))
		ctx, cancel := context.WithCancel(context.Background())
		hog := from(net.IPv4(127, 0, 0, 1))
		var wg sync.WaitGroup
		for range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+"/gopher/"+addr+"/0/slow", nil)
				if resp, err := hog.Do(req); err == nil {
					resp.Body.Close()
				}
			}()
		}
		if !waitFor(3*time.Second, func() bool { return open.Load() == tt.want }) {
			t.Errorf("PerClient %d, MaxUpstream %d: %d upstream connections", tt.perClient, tt.maxUpstream, open.Load())
		}
		time.Sleep(100 * time.Millisecond)
		if n := open.Load(); n != tt.want {
			t.Errorf("PerClient %d, MaxUpstream %d: then %d upstream connections", tt.perClient, tt.maxUpstream, n)
		}
		if tt.maxUpstream == 0 {
			resp, err := from(net.IPv4(127, 0, 0, 2)).Get(s.URL + "/gopher/" + addr + "/0/fast?raw=1")
			if err != nil {
				t.Fatalf("another client: %v", err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || string(b) != "hello\n" {
				t.Errorf("another client: %d %q", resp.StatusCode, b)
			}
		}
		cancel()
		wg.Wait()
		s.Close()
	}
}

// Past Rate (in bursts of Burst) one client address is answered 429 with
// Retry-After; another address is not.
func TestRate(t *testing.T) {
	s := httptest.NewServer(Handler(fetch.NewClient(), Options{Rate: 1, Burst: 3}))
	defer s.Close()
	one := from(net.IPv4(127, 0, 0, 1))
	var codes []int
	for range 5 {
		resp, err := one.Get(s.URL + "/style.css")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		codes = append(codes, resp.StatusCode)
		if resp.StatusCode == 429 && resp.Header.Get("Retry-After") != "1" {
			t.Errorf("Retry-After: %q", resp.Header.Get("Retry-After"))
		}
	}
	if codes[0] != 200 || codes[2] != 200 || codes[3] != 429 || codes[4] != 429 {
		t.Errorf("statuses %v", codes)
	}
	resp, err := from(net.IPv4(127, 0, 0, 2)).Get(s.URL + "/style.css")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("another address: %d", resp.StatusCode)
	}
}
