package url_test

import (
	"strings"
	"testing"

	"github.com/urlderef/deref/url"
)

func noCtl(t *testing.T, in, field string, values ...string) {
	t.Helper()
	for _, v := range values {
		if strings.ContainsAny(v, "\r\n\x00") {
			t.Fatalf("%q: %s holds CR, LF or NUL: %q", in, field, v)
		}
	}
}

// FuzzParse proves that no input panics, that String re-parses to an equal
// URL, and that no decoded CR, LF or NUL reaches a field bound for a
// protocol command line.
func FuzzParse(f *testing.F) {
	for _, tt := range parseTests {
		f.Add(tt.in)
	}
	for _, tt := range parseErrors {
		f.Add(tt.in)
	}
	for _, s := range []string{"gopher://h/1/f%09%09+%091%0D%0A+-1%0D%0Aa%0D%0A.%0D%0A", "news:a@b", "nntp://h/g/1-2",
		"wais://h/db/TEXT/12/1=a;7=%00;", "telnet://u:p@h:1/", "prospero://h/x;a=b", "file://localhost/a/b", "mailto:a@b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		url.Extract(in)
		url.Canonicalize(in)
		if r, err := url.ParseReference(in); err == nil {
			url.MustParse("http://a/b/c/d;p?q").ResolveReference(r)
		}
		u, err := url.Parse(in)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error for %q: %v", in, err)
			}
			return
		}
		s := u.String()
		v, err := url.Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q).String() = %q does not re-parse: %v", in, s, err)
		}
		if !u.Equal(v) || v.String() != s {
			t.Fatalf("round trip of %q: %q then %q", in, s, v.String())
		}
		if ftp, err := u.FTP(); err == nil && (u.Scheme == "ftp" || u.Scheme == "ftps") {
			noCtl(t, in, "ftp path", append(ftp.Dirs, ftp.Name)...)
		}
		if g, err := u.Gopher(); err == nil && u.Scheme == "gopher" {
			noCtl(t, in, "gopher selector", g.Selector, g.Search)
			if !g.FilledForm {
				noCtl(t, in, "gopher+ string", g.Plus)
			}
		}
		if n, err := u.News(); err == nil {
			noCtl(t, in, "news", n.Group, n.MessageID)
		}
		if n, err := u.NNTP(); err == nil {
			noCtl(t, in, "nntp", n.Group)
		}
		if w, err := u.WAIS(); err == nil {
			noCtl(t, in, "wais", w.Database, w.Search, w.Type)
		}
		if tn, err := u.Telnet(); err == nil {
			noCtl(t, in, "telnet", tn.User, tn.Password)
		}
		if m, err := u.Mailto(); err == nil {
			noCtl(t, in, "mailto", m)
		}
		if p, err := u.Prospero(); err == nil {
			noCtl(t, in, "prospero", p.HSOName)
		}
	})
}
