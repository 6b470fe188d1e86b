package cookiefile

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// set gives the jar the Set-Cookie fields of a response from from.
func set(t *testing.T, j *Jar, from string, fields ...string) {
	t.Helper()
	h := http.Header{}
	for _, f := range fields {
		h.Add("Set-Cookie", f)
	}
	j.SetCookies(mustURL(t, from), (&http.Response{Header: h}).Cookies())
}

// sent is the Cookie field the jar gives a request to u.
func sent(t *testing.T, j *Jar, u string) string {
	t.Helper()
	var parts []string
	for _, c := range j.Cookies(mustURL(t, u)) {
		parts = append(parts, c.Name+"="+c.Value)
	}
	return strings.Join(parts, "; ")
}

// TestRules: which cookies a jar keeps and where it sends them, by RFC 6265.
func TestRules(t *testing.T) {
	now := t0
	j := &Jar{Now: func() time.Time { return now }}
	set(t, j, "http://www.example.com/a/b/page",
		"host=1",                             // host-only, path /a/b
		"dom=2; Domain=.example.com; Path=/", // the domain and its subdomains
		"root=3; Path=/",
		"sec=4; Secure; Path=/",                        // over http: not kept
		"other=5; Domain=example.org",                  // another site's: not kept
		"suffix=6; Domain=com",                         // a public suffix: not kept
		"short=7; Max-Age=60; Path=/",                  // gone in a minute
		"old=8; Expires=Thu, 01 Jan 2015 00:00:00 GMT", // expired already
	)
	set(t, j, "https://www.example.com/", "sec=9; Secure; Path=/")
	cases := []struct{ url, want string }{
		{"http://www.example.com/a/b/c", "host=1; dom=2; root=3; short=7"},
		{"http://www.example.com/a/bc", "dom=2; root=3; short=7"}, // /a/b does not match /a/bc
		{"http://WWW.Example.com:8080/a/b", "host=1; dom=2; root=3; short=7"},
		{"http://sub.www.example.com/a/b/", "dom=2"},
		{"http://example.com/", "dom=2"},
		{"https://www.example.com/", "dom=2; root=3; short=7; sec=9"}, // set later, sent later
		{"http://example.org/", ""},
		{"http://notexample.com/", ""},
		{"ftp://www.example.com/", ""},
	}
	for _, c := range cases {
		if got := sent(t, j, c.url); got != c.want {
			t.Errorf("to %s: sent %q, want %q", c.url, got, c.want)
		}
	}
	now = t0.Add(2 * time.Minute)
	if got := sent(t, j, "http://www.example.com/"); got != "dom=2; root=3" {
		t.Errorf("after Max-Age: sent %q, want %q", got, "dom=2; root=3")
	}
	// A cookie replaced keeps its place; Max-Age=0 removes one.
	set(t, j, "http://www.example.com/", "root=new; Path=/", "dom=x; Domain=example.com; Path=/; Max-Age=0")
	if got := sent(t, j, "http://www.example.com/"); got != "root=new" {
		t.Errorf("after replacing and removing: sent %q, want %q", got, "root=new")
	}
}

// TestIPHost: a cookie set by an address goes back to that address only.
func TestIPHost(t *testing.T) {
	j := &Jar{}
	set(t, j, "http://127.0.0.1:8080/", "a=1", "b=2; Domain=0.0.1")
	if got := sent(t, j, "http://127.0.0.1:9090/x"); got != "a=1" {
		t.Errorf("sent %q, want a=1", got)
	}
}

// TestFile: a cookie file as curl writes it loads, and the jar writes it
// back the same, session cookies as asked.
func TestFile(t *testing.T) {
	in := "# Netscape HTTP Cookie File\n" +
		"# https://curl.se/docs/http-cookies.html\n\n" +
		".example.com\tTRUE\t/\tFALSE\t1893456000\tdom\t2\n" +
		"www.example.com\tFALSE\t/a\tTRUE\t1893456000\tsec\t3\r\n" +
		"#HttpOnly_www.example.com\tFALSE\t/\tFALSE\t0\tsession\t4\n" +
		"www.example.com\tFALSE\t/\tFALSE\t1000\tstale\t5\n" +
		"# wget's, with a port:\n" +
		"127.0.0.1:18555\tFALSE\t/\tFALSE\t0\twget\t6\n"
	j := &Jar{Now: func() time.Time { return t0 }}
	if err := j.Load(strings.NewReader(in), false); err != nil {
		t.Fatal(err)
	}
	if got, want := sent(t, j, "https://www.example.com/a/x"), "sec=3; dom=2; session=4"; got != want {
		t.Errorf("sent %q, want %q", got, want)
	}
	if got := sent(t, j, "http://a.example.com/"); got != "dom=2" {
		t.Errorf("to a subdomain: sent %q, want dom=2", got)
	}
	if got := sent(t, j, "http://127.0.0.1:18555/"); got != "wget=6" {
		t.Errorf("to wget's host and port: sent %q, want wget=6", got)
	}
	var b bytes.Buffer
	if err := j.Save(&b, true); err != nil {
		t.Fatal(err)
	}
	want := "# Netscape HTTP Cookie File\n# Written by deref; edit at your own risk.\n\n" +
		".example.com\tTRUE\t/\tFALSE\t1893456000\tdom\t2\n" +
		"www.example.com\tFALSE\t/a\tTRUE\t1893456000\tsec\t3\n" +
		"#HttpOnly_www.example.com\tFALSE\t/\tFALSE\t0\tsession\t4\n" +
		"127.0.0.1\tFALSE\t/\tFALSE\t0\twget\t6\n"
	if b.String() != want {
		t.Errorf("saved:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	j.Save(&b, false)
	if strings.Contains(b.String(), "session") {
		t.Errorf("without sessions, saved a session cookie:\n%s", b.String())
	}
	// -j: session cookies are not loaded.
	j2 := &Jar{Now: func() time.Time { return t0 }}
	j2.Load(strings.NewReader(in), true)
	if got := sent(t, j2, "https://www.example.com/"); got != "dom=2" {
		t.Errorf("without sessions: sent %q, want dom=2", got)
	}
}

// TestBadFile: a line that is no cookie is an error naming it.
func TestBadFile(t *testing.T) {
	for in, want := range map[string]string{
		"# c\nexample.com\tTRUE\t/\n":                  "line 2: 3 fields",
		"example.com\tTRUE\t/\tFALSE\tsoon\tn\tv\n":    `line 1: the expiry "soon"`,
		"\tTRUE\t/\tFALSE\t0\tn\tv\n":                  "line 1: a cookie without a name or domain",
		"example.com\tTRUE\t/\tFALSE\t0\t\tv\n":        "line 1: a cookie without a name or domain",
		"example.com\tTRUE\t/\tFALSE\t0\tn\tv\rX: y\n": "line 1: the cookie \"n\" holds a control character",
		"example.com\tTRUE\t/\tFALSE\t0\tn\tv;w\n":     "line 1: the cookie \"n\" holds a control character, a ';'",
		"example.com\tTRUE\t/\tFALSE\t0\ta b\tv\n":     "line 1: the cookie \"a b\"",
	} {
		err := (&Jar{}).Load(strings.NewReader(in), false)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want one with %q", in, err, want)
		}
	}
}

// TestBounds: a server cannot grow the jar past its bounds: a cookie too
// large is left out, and past 180 a domain the oldest go.
func TestBounds(t *testing.T) {
	j := &Jar{}
	set(t, j, "http://a.example/", "big="+strings.Repeat("x", 5000))
	if len(j.All()) != 0 {
		t.Errorf("a cookie of 5,000 bytes kept")
	}
	for i := range 1000 {
		set(t, j, "http://a.example/", fmt.Sprintf("c%d=%d", i, i))
	}
	set(t, j, "http://b.example/", "other=1")
	all := j.All()
	if len(all) != maxPerDomain+1 || all[0].Name != fmt.Sprintf("c%d", 1000-maxPerDomain) || all[len(all)-1].Name != "other" {
		t.Errorf("%d cookies kept, first %s", len(all), all[0].Name)
	}
	for i := range 20 {
		for k := range 180 {
			set(t, j, fmt.Sprintf("http://h%d.example/", i), fmt.Sprintf("c%d=%d", k, k))
		}
	}
	if n := len(j.All()); n != maxCookies {
		t.Errorf("%d cookies in all, want %d", n, maxCookies)
	}
}
