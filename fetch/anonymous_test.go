package fetch_test

import (
	"context"
	"crypto/tls"
	"io"
	nethttp "net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	neturl "net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/url"
)

// TestAnonymous: FetchOptions.Anonymous sends none of what the Client
// holds for its user (Client.User, the netrc file, Header's Authorization
// and Cookie, the Jar's cookies, a client certificate) and asks no
// prompt; the URL's own user and password still go. Without it, each of
// them goes.
func TestAnonymous(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	s := httptest.NewUnstartedServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		mu.Lock()
		defer mu.Unlock()
		seen = seen[:0]
		if u, p, ok := r.BasicAuth(); ok {
			seen = append(seen, "login "+u+":"+p)
		} else if a := r.Header.Get("Authorization"); a != "" {
			seen = append(seen, "Authorization "+a)
		}
		if c := r.Header.Get("Cookie"); c != "" {
			seen = append(seen, "Cookie "+c)
		}
		if len(r.TLS.PeerCertificates) > 0 {
			seen = append(seen, "certificate")
		}
		w.Write([]byte("ok"))
	}))
	s.TLS = &tls.Config{ClientAuth: tls.RequestClientCert}
	s.StartTLS()
	defer s.Close()
	netrcFile := filepath.Join(t.TempDir(), "netrc")
	os.WriteFile(netrcFile, []byte("machine 127.0.0.1 login joe password fromnetrc\n"), 0o600)
	jar, _ := cookiejar.New(nil)
	su, _ := neturl.Parse(s.URL)
	jar.SetCookies(su, []*nethttp.Cookie{{Name: "session", Value: "jar"}})
	cert := s.TLS.Certificates[0] // any certificate will do as the client's
	asked := 0
	setups := []struct {
		name string
		set  func(c *fetch.Client)
		url  string
		want string // what goes without Anonymous
	}{
		{"netrc", func(c *fetch.Client) { c.NetrcFile = netrcFile }, s.URL + "/", "login joe:fromnetrc"},
		{"Client.User", func(c *fetch.Client) { c.User, c.Password, c.HasPassword = "joe", "fromuser", true }, s.URL + "/", "login joe:fromuser"},
		{"Header", func(c *fetch.Client) { c.Header = [][2]string{{"Authorization", "Bearer operator"}} }, s.URL + "/", "Authorization Bearer operator"},
		{"Jar", func(c *fetch.Client) { c.Jar = jar }, s.URL + "/", "Cookie session=jar"},
		{"Header Cookie", func(c *fetch.Client) { c.Header = [][2]string{{"Cookie", "session=header"}} }, s.URL + "/", "Cookie session=header"},
		{"certificate", func(c *fetch.Client) { c.TLSConfig.Certificates = []tls.Certificate{cert} }, s.URL + "/", "certificate"},
		{"prompt", func(c *fetch.Client) {
			c.Prompt = func(context.Context, *url.URL, string) (string, error) { asked++; return "fromprompt", nil }
		}, "https://joe@" + su.Host + "/", "login joe:fromprompt"},
	}
	for _, tc := range setups {
		for _, anon := range []bool{false, true} {
			c := fetch.NewClient()
			c.NetrcFile = ""
			c.Proxy = func(*url.URL) (*url.URL, error) { return nil, nil }
			c.TLSConfig = s.Client().Transport.(*nethttp.Transport).TLSClientConfig.Clone()
			tc.set(c)
			asked = 0
			resp, err := c.FetchWith(context.Background(), url.MustParse(tc.url), fetch.FetchOptions{Anonymous: anon})
			if err != nil {
				t.Fatalf("%s, anonymous %v: %v", tc.name, anon, err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			mu.Lock()
			got := append([]string(nil), seen...)
			mu.Unlock()
			switch {
			case !anon && (len(got) != 1 || got[0] != tc.want):
				t.Errorf("%s: sent %q, want %q", tc.name, got, tc.want)
			case anon && tc.name == "prompt" && (len(got) != 1 || got[0] != "login joe:"):
				t.Errorf("%s, anonymous: sent %q, want the URL's user alone", tc.name, got)
			case anon && tc.name != "prompt" && len(got) != 0:
				t.Errorf("%s, anonymous: sent %q", tc.name, got)
			}
			if anon && asked > 0 {
				t.Errorf("%s, anonymous: the prompt was asked", tc.name)
			}
		}
	}
	// The URL's own password goes, anonymous or not.
	c := fetch.NewClient()
	c.NetrcFile = ""
	c.TLSConfig = s.Client().Transport.(*nethttp.Transport).TLSClientConfig.Clone()
	resp, err := c.FetchWith(context.Background(), url.MustParse("https://ann:own@"+su.Host+"/"), fetch.FetchOptions{Anonymous: true})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(seen) != 1 || seen[0] != "login ann:own" {
		t.Errorf("the URL's own login, anonymous: sent %q", seen)
	}
}
