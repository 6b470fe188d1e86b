package gateway

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// limited serves h on 127.0.0.1 with the limits l, as deref serve does;
// it returns the address and the listener (whose count of connections
// the tests read).
func limited(t *testing.T, h http.Handler, l Limits) (string, *limitListener) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	wrapped := l.Listen(ln)
	srv := l.Server(h)
	srv.ErrorLog = nil
	go srv.Serve(wrapped)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String(), wrapped.(*limitListener)
}

var hello = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello\n") })

// open counts the connections the listener holds.
func (ll *limitListener) open() int {
	ll.mu.Lock()
	defer ll.mu.Unlock()
	return ll.total
}

// goodClient gets / from another loopback address, as a well-behaved
// client elsewhere on the network, within a second.
func goodClient(t *testing.T, addr string) {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}, Timeout: time.Second}
	c := &http.Client{Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}, Timeout: time.Second}
	resp, err := c.Get("http://" + addr + "/")
	if err != nil {
		t.Fatalf("a well-behaved client: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "hello\n" {
		t.Fatalf("a well-behaved client: %d %q", resp.StatusCode, b)
	}
}

// waitFor polls cond for up to d.
func waitFor(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// Slowloris: clients that send their head a byte at a time hold a
// connection for HeaderTimeout at most, one address holds PerAddr
// connections at most (the rest are answered 503 at once), and a client
// at another address is served throughout.
func TestSlowloris(t *testing.T) {
	addr, ll := limited(t, hello, Limits{HeaderTimeout: 500 * time.Millisecond, PerAddr: 50})
	var wg sync.WaitGroup
	var mu sync.Mutex
	outcomes := map[string]int{}
	for range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			start := time.Now()
			got := make(chan string, 1)
			go func() {
				b, _ := io.ReadAll(c)
				got <- string(b)
			}()
			head := "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: "
			for i := 0; ; i++ {
				select {
				case b := <-got:
					what := "closed"
					if strings.HasPrefix(b, "HTTP/1.1 503") {
						what = "503"
					} else if b != "" {
						what = "answered " + strings.SplitN(b, "\r\n", 2)[0]
					}
					if time.Since(start) > 3*time.Second {
						what += " late"
					}
					mu.Lock()
					outcomes[what]++
					mu.Unlock()
					return
				case <-time.After(100 * time.Millisecond):
					c.Write([]byte{head[i%len(head)]})
				}
			}
		}()
	}
	time.Sleep(200 * time.Millisecond)
	goodClient(t, addr)
	wg.Wait()
	// net/http answers a head cut short by its time-out 400 (or closes).
	if outcomes["503"] != 150 || outcomes["closed"]+outcomes["answered HTTP/1.1 400 Bad Request"] != 50 {
		t.Errorf("outcomes: %v", outcomes)
	}
	if !waitFor(2*time.Second, func() bool { return ll.open() == 0 }) {
		t.Errorf("%d connections still held", ll.open())
	}
}

// A head or a target too long, and too many fields, are answered 431 or
// 414, and the connection is closed.
func TestOversizedHeads(t *testing.T) {
	addr, _ := limited(t, hello, Limits{})
	fields := strings.Repeat("X-A: b\r\n", 10000)
	for name, req := range map[string]string{
		"a header of 1 MiB":    "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 1<<20) + "\r\n\r\n",
		"10,000 header fields": "GET / HTTP/1.1\r\nHost: x\r\n" + fields + "\r\n",
		"a URL of 1 MiB":       "GET /" + strings.Repeat("a", 1<<20) + " HTTP/1.1\r\nHost: x\r\n\r\n",
		"a URL of 16 KiB":      "GET /" + strings.Repeat("a", 16<<10) + " HTTP/1.1\r\nHost: x\r\n\r\n",
	} {
		status := exchange(t, addr, req)
		want := "431"
		if name == "a URL of 16 KiB" {
			want = "414"
		}
		if !strings.Contains(status, " "+want+" ") {
			t.Errorf("%s: %q", name, status)
		}
	}
}

// exchange writes req on a new connection and returns the status line of
// the answer; the server must close the connection after it.
func exchange(t *testing.T, addr, req string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	go io.WriteString(c, req) // the server may answer before it has read it all
	b, err := io.ReadAll(c)
	if err != nil && !isReset(err) {
		t.Errorf("not closed: %v", err)
	}
	line, _, _ := strings.Cut(string(b), "\r\n")
	return line
}

func isReset(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "reset") || strings.Contains(err.Error(), "broken pipe"))
}

// The shapes of request smuggling are refused: a GET with a body, by
// Content-Length and Transfer-Encoding at once, two Content-Lengths that
// differ, an obsolete folded line. (Two that agree are one, as RFC 9112
// §6.3 lets a server read them.)
func TestSmugglingShapes(t *testing.T) {
	addr, _ := limited(t, hello, Limits{})
	for name, req := range map[string]string{
		"Content-Length and Transfer-Encoding": "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n",
		"two Content-Lengths that differ":      "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: 5\r\n\r\nhello",
		"a body on a GET":                      "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
		"obs-fold":                             "GET / HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n",
	} {
		if status := exchange(t, addr, req); !strings.Contains(status, " 400 ") {
			t.Errorf("%s: %q", name, status)
		}
	}
}

// An obsolete folded line is refused, 400 and closed; in a pipeline, only
// the request whose head has one.
func TestFoldedLine(t *testing.T) {
	addr, _ := limited(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.URL.Path) }), Limits{})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET /first HTTP/1.1\r\nHost: x\r\nX-A: a\r\n\r\nGET /second HTTP/1.1\r\nHost: x\r\nX-A: a\r\n\tb\r\n\r\nGET /third HTTP/1.1\r\nHost: x\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(c)
	for _, want := range []string{"200 /first", "400 "} {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%s: %v", want, err)
		}
		b, _ := io.ReadAll(resp.Body)
		if got := fmt.Sprintf("%d %s", resp.StatusCode, b); !strings.HasPrefix(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	if rest, err := io.ReadAll(br); len(rest) != 0 || err != nil {
		t.Errorf("after the refusal: %q %v (the connection should be closed)", rest, err)
	}
}

// 1,000 requests pipelined on one connection get 1,000 answers, in order.
func TestPipelining(t *testing.T) {
	addr, _ := limited(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.URL.Path) }), Limits{})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var reqs bytes.Buffer
	for i := range 1000 {
		fmt.Fprintf(&reqs, "GET /%d HTTP/1.1\r\nHost: x\r\n\r\n", i)
	}
	go c.Write(reqs.Bytes())
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	for i := range 1000 {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("answer %d: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		if string(b) != fmt.Sprintf("/%d", i) {
			t.Fatalf("answer %d: %q", i, b)
		}
	}
}

// A client that reads its answer at a byte a second, or not at all, has
// the response ended SendTimeout after it stopped taking it; one that
// reads steadily gets all of it.
func TestSlowReader(t *testing.T) {
	const size = 32 << 20
	big := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(size))
		io.Copy(w, io.LimitReader(zeros{}, size))
	})
	addr, ll := limited(t, big, Limits{SendTimeout: 300 * time.Millisecond})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.(*net.TCPConn).SetReadBuffer(4096)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	var got int64
	buf := make([]byte, 1)
	start := time.Now()
	for time.Since(start) < 10*time.Second {
		if ll.open() == 0 {
			break
		}
		n, _ := c.Read(buf)
		got += int64(n)
		time.Sleep(time.Second)
	}
	if ll.open() != 0 {
		t.Fatalf("a client reading a byte a second still held its response after %v", time.Since(start))
	}
	// A client that reads steadily is served the whole object.
	resp, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || n != size {
		t.Errorf("a steady reader: %d bytes, %v", n, err)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// Idle keep-alive connections are closed after IdleTimeout, and past
// MaxConns a connection is answered 503.
func TestIdleAndMaxConns(t *testing.T) {
	addr, ll := limited(t, hello, Limits{IdleTimeout: 300 * time.Millisecond, MaxConns: 10})
	for range 10 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%v %v", resp, err)
		}
	}
	if status := exchange(t, addr, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); !strings.Contains(status, " 503 ") {
		t.Errorf("the eleventh connection: %q", status)
	}
	if !waitFor(3*time.Second, func() bool { return ll.open() == 0 }) {
		t.Errorf("%d idle connections still held", ll.open())
	}
	goodClient(t, addr)
}
