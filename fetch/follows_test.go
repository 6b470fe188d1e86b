package fetch_test

import (
	"strings"
	"testing"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/url"
)

// A crawl follows links to objects: not to mailboxes or sessions, and to
// this machine's files only from them.
func TestFollows(t *testing.T) {
	c := fetch.NewClient()
	for _, tc := range []struct {
		from, to string
		ok       bool
	}{
		{"http://h/a.html", "http://h/b.html", true},
		{"http://h/a.html", "gopher://g/1/", true},
		{"gopher://g/1/", "ftp://f/pub/", true},
		{"gopher://g/1/", "news:comp.misc", true},
		{"file:///srv/site/a.html", "file:///srv/site/b.html", true},
		{"file:///srv/site/a.html", "https://h/", true},
		{"http://h/a.html", "file:///etc/passwd", false},
		{"http://h/a.html", "file://localhost/etc/passwd", false},
		{"gopher://g/1/", "file:///etc/passwd", false},
		{"http://h/a.html", "mailto:a@h", false},
		{"http://h/a.html", "telnet://h/", false},
		{"http://h/a.html", "tn3270://h/", false},
		{"http://h/a.html", "javascript:alert(1)", false},
		{"http://h/a.html", "afs://h/x", false},
	} {
		from, err := url.Parse(tc.from)
		if err != nil {
			t.Fatal(err)
		}
		to, err := url.Parse(tc.to)
		if err != nil {
			to = &url.URL{Scheme: strings.SplitN(tc.to, ":", 2)[0]}
		}
		if got := c.Follows(from, to); got != tc.ok {
			t.Errorf("Follows(%s, %s) = %v", tc.from, tc.to, got)
		}
	}
}
