package gateway

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/url"
)

// The guard refuses private, loopback and link-local addresses (IP
// literals as an FTP server's PASV reply gives them, and names that
// resolve to them) before dialling, and dials a public address as it is.
func TestGuard(t *testing.T) {
	var dialled []string
	base := func(_ context.Context, _, addr string) (net.Conn, error) {
		dialled = append(dialled, addr)
		return nil, errors.New("not dialled in this test")
	}
	d := guard(base, false, net.DefaultResolver)
	for _, addr := range []string{"127.0.0.1:21", "10.0.0.1:20", "192.168.1.1:70", "172.16.0.1:119", "[::1]:70", "169.254.169.254:80",
		"[fe80::1]:21", "0.0.0.0:21", "[::ffff:127.0.0.1]:21", "100.64.0.1:21", "[fd00::1]:70", "localhost:70"} {
		if _, err := d(context.Background(), "tcp", addr); !errors.Is(err, ErrRefused) {
			t.Errorf("%s: %v", addr, err)
		}
	}
	if len(dialled) != 0 {
		t.Errorf("dialled %v", dialled)
	}
	d(context.Background(), "tcp", "93.184.216.34:21")
	if len(dialled) != 1 || dialled[0] != "93.184.216.34:21" {
		t.Errorf("a public address: dialled %v", dialled)
	}
	if d := guard(base, true, net.DefaultResolver); d == nil {
		t.Error("no dial with AllowPrivate")
	}
}

// dnsServer answers A queries on 127.0.0.1 with what answer gives for
// the name (nil: no address), AAAA queries with none, and counts the
// queries; resolver is a net.Resolver that asks it alone.
func dnsServer(t *testing.T, answer func(name string) []byte) (resolver *net.Resolver, queries *atomic.Int64) {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	queries = &atomic.Int64{}
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			var p dnsmessage.Parser
			h, err := p.Start(buf[:n])
			if err != nil {
				continue
			}
			q, err := p.Question()
			if err != nil {
				continue
			}
			queries.Add(1)
			b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, RecursionAvailable: true})
			b.StartQuestions()
			b.Question(q)
			b.StartAnswers()
			if ip := []byte(nil); q.Type == dnsmessage.TypeA { // no AAAA record
				if ip = answer(q.Name.String()); ip != nil {
					b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 0}, dnsmessage.AResource{A: [4]byte(ip)})
				}
			}
			msg, _ := b.Finish()
			pc.WriteTo(msg, from)
		}
	}()
	var d net.Dialer
	resolver = &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return d.DialContext(ctx, "udp", pc.LocalAddr().String())
	}}
	return resolver, queries
}

// DNS rebinding cannot pass: a name is resolved once per connection and
// the address checked is the address dialled, so a name that answers a
// public address, then a loopback one, is dialled at the public one and
// then refused; the dial function never sees the name. Addresses in the
// old numeric forms a C resolver reads (decimal, octal, hexadecimal) are
// refused without a lookup.
func TestGuardRebinding(t *testing.T) {
	var flips atomic.Int64
	resolver, queries := dnsServer(t, func(name string) []byte {
		if name != "rebind.example." {
			return nil
		}
		if flips.Add(1)%2 == 1 {
			return []byte{93, 184, 216, 34}
		}
		return []byte{127, 0, 0, 1}
	})
	var dialled []string
	base := func(_ context.Context, _, addr string) (net.Conn, error) {
		dialled = append(dialled, addr)
		return nil, errors.New("not dialled in this test")
	}
	d := guard(base, false, resolver)
	_, err1 := d(context.Background(), "tcp", "rebind.example:70")
	_, err2 := d(context.Background(), "tcp", "rebind.example:70")
	if errors.Is(err1, ErrRefused) || !errors.Is(err2, ErrRefused) || !strings.Contains(err2.Error(), "rebind.example is 127.0.0.1") {
		t.Errorf("rebinding: %v; %v", err1, err2)
	}
	if strings.Join(dialled, " ") != "93.184.216.34:70" {
		t.Errorf("dialled %v", dialled)
	}
	before := queries.Load()
	for _, host := range []string{"2130706433", "0177.0.0.1", "0x7f.0.0.1", "0x7f000001", "127.1", "017700000001", "[::]", "[::ffff:7f00:1]", "[fe80::1%25lo]"} {
		if _, err := d(context.Background(), "tcp", host+":70"); !errors.Is(err, ErrRefused) {
			t.Errorf("%s: %v", host, err)
		}
	}
	if n := queries.Load() - before; n != 0 {
		t.Errorf("%d DNS queries for addresses", n)
	}
	if len(dialled) != 1 {
		t.Errorf("dialled %v", dialled)
	}
}

// A redirect is checked like the first URL: every connection goes
// through the guard, so a server that may be reached (here trusted, as
// the operator's news server is) cannot lead the gateway to a loopback
// address by a redirect.
func TestGuardRedirect(t *testing.T) {
	inside := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "private\n") }))
	defer inside.Close()
	outside := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, inside.URL+"/secret", http.StatusFound)
	}))
	defer outside.Close()
	c := fetch.NewClient()
	c.NetrcFile = ""
	c.Proxy = func(*url.URL) (*url.URL, error) { return nil, nil }
	c.Dial = guard(nil, false, net.DefaultResolver, strings.TrimPrefix(outside.URL, "http://"))
	_, err := c.Get(context.Background(), outside.URL+"/")
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "127.0.0.1") {
		t.Errorf("the redirect to loopback: %v", err)
	}
}
