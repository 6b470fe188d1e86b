package fetch_test

import (
	"context"
	"errors"
	"io"
	nethttp "net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/protocols/mail"
)

func body(t *testing.T, c *fetch.Client, u string) (string, error) {
	t.Helper()
	resp, err := c.Get(context.Background(), u)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// urn: names go to the RFC 2169 resolver, whose answer (a redirect or a
// text/uri-list) is then fetched.
func TestURN(t *testing.T) {
	origin := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) { io.WriteString(w, "the book "+r.URL.Path) }))
	defer origin.Close()
	var asked []string
	res := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		asked = append(asked, r.URL.RequestURI())
		switch r.URL.RawQuery {
		case "urn:isbn:0451450523":
			nethttp.Redirect(w, r, origin.URL+"/0451450523", nethttp.StatusFound)
		case "urn:isbn:2":
			w.Header().Set("Content-Type", "text/uri-list")
			io.WriteString(w, "# two copies\n"+origin.URL+"/second\nhttp://mirror.example/second\n")
		default:
			nethttp.NotFound(w, r)
		}
	}))
	defer res.Close()
	c := newClient()
	if _, err := body(t, c, "urn:isbn:0451450523"); !errors.Is(err, fetch.ErrUnsupportedScheme) || !strings.Contains(err.Error(), "resolver") {
		t.Errorf("without a resolver: %v", err)
	}
	c.URNResolver = res.URL
	if b, err := body(t, c, "urn:isbn:0451450523"); err != nil || b != "the book /0451450523" {
		t.Errorf("redirect: %q %v", b, err)
	}
	if b, err := body(t, c, "urn:isbn:2"); err != nil || b != "the book /second" {
		t.Errorf("uri-list: %q %v", b, err)
	}
	if _, err := body(t, c, "urn:isbn:3"); !errors.Is(err, fetch.ErrNotFound) {
		t.Errorf("unknown: %v", err)
	}
	if asked[0] != "/uri-res/N2L?urn:isbn:0451450523" {
		t.Errorf("resolver asked %q", asked)
	}
}

func TestReservedSchemes(t *testing.T) {
	c := newClient()
	for u, want := range map[string]error{
		"prospero://127.0.0.1/a/b;type=dir": fetch.ErrBadURL, // a field deref does not honour
		"x-private:thing":                   fetch.ErrUnsupportedScheme,
		"mailto:bob@example.org":            fetch.ErrNotRetrievable,
		"tn3270://mainframe.example/":       fetch.ErrNotRetrievable,
		"mid:a@b":                           fetch.ErrUnsupportedScheme,
	} {
		if _, err := c.Get(context.Background(), u); !errors.Is(err, want) {
			t.Errorf("%s: %v", u, err)
		}
	}
	// Through a gateway configured for the scheme.
	gw := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) { io.WriteString(w, "gateway: "+r.RequestURI) }))
	defer gw.Close()
	c.Gateways = map[string]string{"prospero": gw.URL + "/", "x-private": gw.URL + "/"}
	for _, u := range []string{"prospero://p.example/a/b;type=dir", "x-private:thing"} {
		if b, err := body(t, c, u); err != nil || b != "gateway: "+u {
			t.Errorf("%s: %q %v", u, b, err)
		}
	}
}

func TestMailbox(t *testing.T) {
	mbox := filepath.Join(t.TempDir(), "mbox")
	os.WriteFile(mbox, []byte(mail.Sample), 0o600)
	c := newClient()
	c.Mail.Dir = mbox
	if b, err := body(t, c, "mid:reply.2@example.org/map@example.org"); err != nil || b != "The usual place is on the corner.\n" {
		t.Errorf("%q %v", b, err)
	}
}

// TestNearScheme: a slip of the keyboard finds the scheme meant; a name
// far from every scheme finds none.
func TestNearScheme(t *testing.T) {
	names := fetch.NewClient().Schemes()
	for in, want := range map[string]string{"gohper": "gopher", "htp": "http", "htpps": "https", "gopehr": "gopher", "nntpp": "nntp", "xyz": "", "gopher": "", "wiki": "", "f": ""} {
		if got := fetch.NearScheme(in, names); got != want {
			t.Errorf("NearScheme(%q) = %q, want %q", in, got, want)
		}
	}
	_, err := fetch.NewClient().Get(context.Background(), "gohper://127.0.0.1/1/")
	if !errors.Is(err, fetch.ErrUnsupportedScheme) || !strings.Contains(err.Error(), "did you mean gopher:?") {
		t.Errorf("gohper: %v", err)
	}
}
