package fetch

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/urlderef/deref/internal/safedir"
	"github.com/urlderef/deref/url"
)

// FuzzWebLink feeds arbitrary href values to the HTTP index page reader:
// a link is kept only when it names one element directly below the page
// on the same server, and a kept name that is safe stays inside the
// destination when joined to it.
func FuzzWebLink(f *testing.F) {
	for _, s := range []string{"a.txt", "sub/", "../x", "/pub/b", "http://other/pub/c", "%2e%2e/etc", "a%2Fb", "?q=1", "#frag", "./", "%00", "..%2F..%2Fetc", "c:/windows", "//127.0.0.1/pub/d", "a\\b"} {
		f.Add(s)
	}
	base, err := url.Parse("http://127.0.0.1:8080/pub/")
	if err != nil {
		f.Fatal(err)
	}
	s := &webSource{}
	dst := filepath.FromSlash("/dst")
	f.Fuzz(func(t *testing.T, href string) {
		k, ok := s.below(base, href)
		if !ok {
			return
		}
		if k.URL.Host != base.Host || k.URL.Scheme != base.Scheme {
			t.Fatalf("%q: kept a link to %s", href, k.URL.Redacted())
		}
		rest, found := strings.CutPrefix(k.URL.Path, base.Path)
		rest = strings.TrimSuffix(rest, "/")
		if !found || rest == "" || strings.Contains(rest, "/") {
			t.Fatalf("%q: kept %q, not one element below %q", href, k.URL.Path, base.Path)
		}
		if k.Name == "" {
			t.Fatalf("%q: kept with an empty name", href)
		}
		if safedir.LocalName(k.Name) {
			p := filepath.Join(dst, k.Name)
			if filepath.Dir(p) != dst {
				t.Fatalf("%q: safe name %q leads to %s", href, k.Name, p)
			}
		}
	})
}
