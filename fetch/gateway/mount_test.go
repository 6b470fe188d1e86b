package gateway_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/gateway"
	"github.com/urlderef/deref/fetch/warc"
	"github.com/urlderef/deref/url"
)

// TestBasePath: mounted at /gw/ behind a reverse proxy, the gateway
// serves the paths below it, and every link, form and redirect of its
// pages begins with it; a path outside it is a 404.
func TestBasePath(t *testing.T) {
	addr := gopherServer(t, map[string]string{
		"/":      "0About\t/about\tHOST\tPORT\r\n1Docs\t/docs\tHOST\tPORT\r\n.\r\n",
		"/docs":  "0One\t/docs/one\tHOST\tPORT\r\n.\r\n",
		"/about": "about\r\n.\r\n",
	})
	s := start(t, gateway.Options{AllowPrivate: true, BasePath: "/gw/"})
	resp, page := get(t, s.URL+"/gw/gopher/"+addr+"/1/docs")
	if resp.StatusCode != 200 {
		t.Fatalf("a menu below the base: %d %s", resp.StatusCode, page)
	}
	links := regexp.MustCompile(`(?:href|action)="([^"#]*)"`).FindAllStringSubmatch(page, -1)
	if len(links) < 5 {
		t.Fatalf("too few links: %q", links)
	}
	for _, l := range links {
		if !strings.HasPrefix(l[1], "/gw/") {
			t.Errorf("a link outside the base: %q", l[1])
		}
	}
	for _, want := range []string{`href="/gw/style.css"`, `href="/gw/gopher/` + addr + `/0/docs/one"`} {
		if !strings.Contains(page, want) {
			t.Errorf("no %s in:\n%s", want, page)
		}
	}
	resp, _ = get(t, s.URL+"/gw/?url=gopher://"+addr+"/1/")
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/gw/gopher/"+addr+"/1/" {
		t.Errorf("the form's redirect: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp, _ := get(t, s.URL+"/gopher/"+addr+"/1/"); resp.StatusCode != 404 {
		t.Errorf("a path outside the base: %d", resp.StatusCode)
	}
	if resp, _ := get(t, s.URL+"/gw"); resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != "/gw/" {
		t.Errorf("the base without its slash: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp, body := get(t, s.URL+"/gw/gopher/"+addr+"/0/about?raw=1"); resp.StatusCode != 200 || body != "about\n" {
		t.Errorf("a text below the base: %d %q", resp.StatusCode, body)
	}
}

// TestTrustedProxies: the log names the client X-Forwarded-For gives
// when the request came from a trusted proxy, and the peer's own address
// when it came from anyone else, whatever the field says.
func TestTrustedProxies(t *testing.T) {
	for _, tc := range []struct {
		trusted []string
		xff     string
		want    string
	}{
		{[]string{"127.0.0.1"}, "192.0.2.7", "192.0.2.7 "},
		{[]string{"127.0.0.0/8"}, "198.51.100.1, 192.0.2.7", "192.0.2.7 "},                    // the last hop the proxy added
		{[]string{"127.0.0.0/8", "192.0.2.0/24"}, "198.51.100.1, 192.0.2.7", "198.51.100.1 "}, // a chain of trusted proxies
		{nil, "192.0.2.7", "127.0.0.1 "},                                                      // no proxy is trusted
		{[]string{"10.0.0.0/8"}, "192.0.2.7", "127.0.0.1 "},                                   // the peer is not the trusted one
		{[]string{"127.0.0.1"}, "not an address", "127.0.0.1 "},
	} {
		var mu sync.Mutex
		var log bytes.Buffer
		c := fetch.NewClient()
		c.NetrcFile = ""
		c.Proxy = func(*url.URL) (*url.URL, error) { return nil, nil }
		s := httptest.NewServer(gateway.Handler(c, gateway.Options{TrustedProxies: tc.trusted, Log: writerFunc(func(p []byte) (int, error) {
			mu.Lock()
			defer mu.Unlock()
			return log.Write(p)
		})}))
		req, _ := http.NewRequest("GET", s.URL+"/", nil)
		req.Header.Set("X-Forwarded-For", tc.xff)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		s.Close()
		mu.Lock()
		if !strings.HasPrefix(log.String(), tc.want) {
			t.Errorf("trusted %q, X-Forwarded-For %q: logged %q, want it to begin %q", tc.trusted, tc.xff, log.String(), tc.want)
		}
		mu.Unlock()
	}
}

// TestBasePathReplay: a replay mounted at /gw/ links its collections,
// captures and calendars below it.
func TestBasePathReplay(t *testing.T) {
	addr := gopherServer(t, map[string]string{"/": "0About\t/about\tHOST\tPORT\r\n.\r\n", "/about": "about\r\n.\r\n"})
	a := archiveOf(t, t.TempDir(), "gopher://"+addr+"/1/", "gopher://"+addr+"/0/about")
	s := httptest.NewServer(gateway.Archive(map[string]*warc.Archive{"hole": a}, gateway.Options{BasePath: "/gw"}))
	defer s.Close()
	for _, p := range []string{"/gw/", "/gw/hole/", "/gw/hole/*/gopher://" + addr + "/1/"} {
		resp, page := get(t, s.URL+p)
		if resp.StatusCode != 200 {
			t.Errorf("%s: %d %s", p, resp.StatusCode, page)
			continue
		}
		for _, l := range regexp.MustCompile(`(?:href|action)="([^"#]*)"`).FindAllStringSubmatch(page, -1) {
			if !strings.HasPrefix(l[1], "/gw/") && !strings.HasPrefix(l[1], "gopher://") {
				t.Errorf("%s: a link outside the base: %q", p, l[1])
			}
		}
	}
	resp, _ := get(t, s.URL+"/gw/hole/gopher://"+addr+"/1/")
	if loc := resp.Header.Get("Location"); resp.StatusCode != http.StatusFound || !strings.HasPrefix(loc, "/gw/hole/") {
		t.Errorf("the TimeGate: %d %q", resp.StatusCode, loc)
	}
}
