package http_test

import (
	"context"
	"crypto/md5"
	"fmt"
	"io"
	nethttp "net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/url"
)

// digestServer asks for Digest logins (RFC 7616, MD5, qop auth) of
// joe:se:cret and checks them as a server keeping nonce counts must: a
// count not above the last one accepted for its nonce is refused. Each
// nonce serves uses requests; the next one is then refused with
// stale=true. With next, a reply names the next nonce in an
// Authentication-Info field instead.
type digestServer struct {
	uses int
	next bool

	mu      sync.Mutex
	nonces  int
	last    map[string]int // the last count accepted, by nonce
	served  map[string]int
	asked   int // 401 replies
	answers int // requests that came with an Authorization
}

func (d *digestServer) newNonce() string {
	d.nonces++
	n := "n" + strconv.Itoa(d.nonces)
	d.last[n] = 0
	return n
}

func (d *digestServer) ServeHTTP(w nethttp.ResponseWriter, r *nethttp.Request) {
	const realm = "kept"
	h := func(s string) string { return fmt.Sprintf("%x", md5.Sum([]byte(s))) }
	d.mu.Lock()
	defer d.mu.Unlock()
	stale := false
	if scheme, params, _ := strings.Cut(r.Header.Get("Authorization"), " "); scheme == "Digest" {
		d.answers++
		f := map[string]string{}
		for _, kv := range strings.Split(params, ", ") {
			k, v, _ := strings.Cut(kv, "=")
			f[k] = strings.Trim(v, `"`)
		}
		nc, _ := strconv.ParseInt(f["nc"], 16, 64)
		nonce := f["nonce"]
		last, known := d.last[nonce]
		want := h(h("joe:"+realm+":se:cret") + ":" + nonce + ":" + f["nc"] + ":" + f["cnonce"] + ":auth:" + h(r.Method+":"+r.URL.RequestURI()))
		switch {
		case !known || f["response"] != want || f["uri"] != r.URL.RequestURI() || f["username"] != "joe":
		case d.served[nonce] >= d.uses:
			stale = true
		case int(nc) > last:
			d.last[nonce] = int(nc)
			d.served[nonce]++
			if d.next {
				w.Header().Set("Authentication-Info", `qop=auth, nextnonce="`+d.newNonce()+`"`)
			}
			io.WriteString(w, "page "+r.URL.Path)
			return
		}
	}
	d.asked++
	w.Header().Set("WWW-Authenticate", `Digest realm="`+realm+`", nonce="`+d.newNonce()+`", qop="auth", stale=`+strconv.FormatBool(stale))
	w.WriteHeader(401)
}

// TestDigestKept: a Digest login a server accepted is answered again
// before the server asks, with the next nonce count, so that fetching n
// pages costs one 401, not n; a stale nonce is answered afresh, and a
// nextnonce is taken.
func TestDigestKept(t *testing.T) {
	for _, tt := range []struct {
		name  string
		d     *digestServer
		mode  fetch.HTTPAuth
		asked int // 401 replies for the 10 pages
	}{
		{"kept", &digestServer{uses: 100}, fetch.AuthDigest, 1},
		{"basic first", &digestServer{uses: 100}, fetch.AuthBasic, 1},
		{"stale every 4", &digestServer{uses: 4}, fetch.AuthAny, 3},
		{"nextnonce", &digestServer{uses: 1, next: true}, fetch.AuthDigest, 1},
	} {
		tt.d.last, tt.d.served = map[string]int{}, map[string]int{}
		s := httptest.NewServer(tt.d)
		c := fetch.NewClient()
		c.NetrcFile = ""
		c.Proxy = func(*url.URL) (*url.URL, error) { return nil, nil }
		c.User, c.Password, c.HasPassword = "joe", "se:cret", true
		c.HTTPAuth = tt.mode
		for i := range 10 {
			resp, err := c.Get(context.Background(), s.URL+"/p"+strconv.Itoa(i))
			if err != nil {
				t.Fatalf("%s: page %d: %v", tt.name, i, err)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || string(b) != "page /p"+strconv.Itoa(i) {
				t.Errorf("%s: page %d: %q, %v", tt.name, i, b, err)
			}
		}
		tt.d.mu.Lock()
		if tt.d.asked != tt.asked || tt.d.answers != 10+tt.asked-1 {
			t.Errorf("%s: %d 401 replies and %d answers for 10 pages (want %d and %d)", tt.name, tt.d.asked, tt.d.answers, tt.asked, 10+tt.asked-1)
		}
		tt.d.mu.Unlock()
		// Another password is not answered with the login kept.
		c.Password = "wrong"
		if _, err := c.Get(context.Background(), s.URL+"/other"); err == nil {
			t.Errorf("%s: the wrong password fetched a page", tt.name)
		}
		s.Close()
	}
}
