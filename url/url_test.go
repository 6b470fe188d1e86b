package url_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/urlderef/deref/url"
)

type parts struct {
	scheme, user, pass, host, port, path, query, frag string
	hasUser, hasPass, hasAuth, hasQuery, hasFrag      bool
}

func partsOf(u *url.URL) parts {
	p := parts{scheme: u.Scheme, host: u.Host, port: u.Port, path: u.Path, query: u.Query,
		frag: u.Fragment, hasAuth: u.HasAuthority, hasQuery: u.HasQuery, hasFrag: u.HasFragment}
	if u.User != nil {
		p.hasUser = true
		p.user = u.User.Username()
		p.pass, p.hasPass = u.User.Password()
	}
	return p
}

// Each case cites the section of RFC 1738 (or RFC 1630) it checks.
var parseTests = []struct {
	ref string
	in  string
	out parts
}{
	{"1738 §3.1 empty user", "ftp://@host.com/", parts{scheme: "ftp", hasUser: true, host: "host.com", path: "/", hasAuth: true}},
	{"1738 §3.1 no user", "ftp://host.com/", parts{scheme: "ftp", host: "host.com", path: "/", hasAuth: true}},
	{"1738 §3.1 empty password", "ftp://foo:@host.com/", parts{scheme: "ftp", user: "foo", hasUser: true, hasPass: true, host: "host.com", path: "/", hasAuth: true}},
	{"1738 §3.1 full", "ftp://u%3Ax:p%40ss@h.example:2121/a/b", parts{scheme: "ftp", user: "u:x", hasUser: true, pass: "p@ss", hasPass: true, host: "h.example", port: "2121", path: "/a/b", hasAuth: true}},
	{"1738 §3.1 url-path omitted", "ftp://h.example", parts{scheme: "ftp", host: "h.example", hasAuth: true}},
	{"1738 §2.1 scheme case", "HTTP://Example.COM/x", parts{scheme: "http", host: "Example.COM", path: "/x", hasAuth: true}},
	{"1738 §3.3 http search", "http://h/p/a?q=1&r", parts{scheme: "http", host: "h", path: "/p/a", query: "q=1&r", hasQuery: true, hasAuth: true}},
	{"1738 §3.3 http no path", "http://h", parts{scheme: "http", host: "h", hasAuth: true}},
	{"1630 fragment", "http://www.myu.edu/org/admin/people#andy", parts{scheme: "http", host: "www.myu.edu", path: "/org/admin/people", frag: "andy", hasFrag: true, hasAuth: true}},
	{"1738 §3.2 ? is part of fsegment", "ftp://h/a?b", parts{scheme: "ftp", host: "h", path: "/a?b", hasAuth: true}},
	{"1738 §3.4 ? is no delimiter in gopher", "gopher://h/7/search?x", parts{scheme: "gopher", host: "h", path: "/7/search?x", hasAuth: true}},
	{"1738 §3.5 mailto", "mailto:joe%25x@example.com", parts{scheme: "mailto", path: "joe%25x@example.com"}},
	{"1738 §3.6 news", "news:comp.infosystems.www.misc", parts{scheme: "news", path: "comp.infosystems.www.misc"}},
	{"1738 §3.9 wais search", "wais://h:210/db?a+b", parts{scheme: "wais", host: "h", port: "210", path: "/db", query: "a+b", hasQuery: true, hasAuth: true}},
	{"1738 §3.10 file empty host", "file:///etc/motd", parts{scheme: "file", path: "/etc/motd", hasAuth: true}},
	{"1738 §3.11 prospero double slash", "prospero://host.dom//pros/name", parts{scheme: "prospero", host: "host.dom", path: "//pros/name", hasAuth: true}},
	{"1738 §4 x- scheme", "x-exp:anything/at;all", parts{scheme: "x-exp", path: "anything/at;all"}},
	{"1738 §4 z39.50", "z39.50s://h/db", parts{scheme: "z39.50s", host: "h", path: "/db", hasAuth: true}},
	{"1630 urn", "urn:/iana/dns/ch/cern/", parts{scheme: "urn", path: "/iana/dns/ch/cern/"}},
	{"1630 mid", "mid:foo4%25foo1@bar.net", parts{scheme: "mid", path: "foo4%25foo1@bar.net"}},
	{"ipv6 literal", "http://[::1]:8080/", parts{scheme: "http", host: "[::1]", port: "8080", path: "/", hasAuth: true}},
}

func TestParse(t *testing.T) {
	for _, tt := range parseTests {
		u, err := url.Parse(tt.in)
		if err != nil {
			t.Errorf("%s: Parse(%q): %v", tt.ref, tt.in, err)
			continue
		}
		if got := partsOf(u); got != tt.out {
			t.Errorf("%s: Parse(%q)\n got %+v\nwant %+v", tt.ref, tt.in, got, tt.out)
		}
		if s := u.String(); s != strings.Replace(tt.in, "HTTP:", "http:", 1) {
			t.Errorf("%s: String() = %q, want %q", tt.ref, s, tt.in)
		}
	}
}

var parseErrors = []struct {
	ref, in, part string
	offset        int // -1: not checked
}{
	{"1630 example 3: %as", "http://h/a%as", "url-path", 10},
	{"1630 example 3: %*", "http://h/a%*b", "url-path", 10},
	{"1630: % near the end", "http://h/ab%4", "url-path", 11},
	{"1738 §2.2 space unsafe", "http://h/a b", "url-path", 10},
	{"1738 §2.2 < unsafe", "ftp://h/a<b", "url-path", 9},
	{"1738 §2.2 \" unsafe", "ftp://h/a\"b", "url-path", 9},
	{"1738 §2.2 { unsafe", "ftp://h/a{", "url-path", 9},
	{"1738 §2.2 ~ unsafe", "http://h/~joe", "url-path", 9},
	{"1738 §2.2 ^ unsafe", "http://h/?a^b", "search", 11},
	{"1738 §2.2 # inside fragment", "http://h/#a#b", "fragment", 11},
	{"1738 §2.2 8-bit octet", "http://h/caf\xc3\xa9", "url-path", 12},
	{"1738 §2.2 control", "http://h/\x01", "url-path", 9},
	{"1738 §2.1 missing scheme", "example.com/a", "scheme", 0},
	{"1738 §3.1 two @", "ftp://a@b@h/", "user", 7},
	{"1738 §3.1 empty port", "ftp://h:/", "port", 8},
	{"1738 §3.1 port letters", "ftp://h:2x/", "port", 9},
	{"1738 §3.1 port range", "ftp://h:70000/", "port", 8},
	{"1738 §3.1 bad host", "ftp://h!x/", "host", 7},
	{"1738 §3.1 ip scheme without host", "ftp:///a", "host", -1},
	{"1738 §3.1 ip scheme without //", "ftp:a/b", "ftp URL", -1},
	{"1738 §3.2.2 typecode", "ftp://h/a;type=x", "ftp typecode", -1},
	{"1738 §3.2.2 stray ;", "ftp://h/a;b/c", "ftp url-path", -1},
	{"1738 §3.2.2 decoded CR", "ftp://h/a%0D%0ADELE%20x", "ftp url-path", -1},
	{"1738 §3.2.2 decoded NUL", "ftp://h/a%00", "ftp url-path", -1},
	{"1738 §3.1 decoded LF in telnet user", "telnet://a%0Ab@h/", "user", -1},
	{"1738 §3.4 selector CRLF", "gopher://h/0a%0D%0Ab", "gopher selector", -1},
	{"1738 §3.4 search NUL", "gopher://h/7a%09b%00", "gopher search", -1},
	{"1738 §3.4 gopher+ CRLF not a form", "gopher://h/0a%09%09+%0D%0AQUIT", "gopher+ string", -1},
	{"1738 §3.6 news bad group", "news:1abc", "newsgroup", -1},
	{"1738 §3.6 news empty", "news:", "news part", -1},
	{"1738 §3.6 news message-id brackets", "news:%3Ca@b%3E", "news message-id", -1},
	{"1738 §3.7 nntp no group", "nntp://h/", "nntp group", -1},
	{"1738 §3.7 nntp article", "nntp://h/g/12x", "nntp article", -1},
	{"1738 §3.8 telnet path", "telnet://h/x", "telnet URL", -1},
	{"1738 §3.9 wais empty db", "wais://h/", "wais database", -1},
	{"1738 §3.9 wais search with path", "wais://h/db/x?y", "wais search", -1},
	{"1738 §3.9 wais no wpath", "wais://h/db/TEXT", "wais wpath", -1},
	{"1738 §3.10 file %2F", "file:///a%2Fb", "file path", -1},
	{"1738 §3.10 file relative", "file:a/b", "file path", -1},
	{"1738 §3.11 prospero user", "prospero://u@h/x", "user", -1},
	{"1738 §3.11 prospero field", "prospero://h/x;novalue", "prospero field", -1},
	{"1738 §3.5 mailto empty", "mailto:", "mailto address", -1},
	{"1738 §3.3 http path", "http:x", "http URL", -1},
}

func TestParseErrors(t *testing.T) {
	for _, tt := range parseErrors {
		_, err := url.Parse(tt.in)
		var pe *url.PartError
		if !errors.As(err, &pe) {
			t.Errorf("%s: Parse(%q) = %v, want a *PartError", tt.ref, tt.in, err)
			continue
		}
		if pe.Part != tt.part || tt.offset >= 0 && pe.Offset != tt.offset {
			t.Errorf("%s: Parse(%q): part %q offset %d (%v), want %q offset %d", tt.ref, tt.in, pe.Part, pe.Offset, err, tt.part, tt.offset)
		}
		var ue *url.Error
		if !errors.As(err, &ue) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: want a one-line *url.Error, got %q", tt.ref, err)
		}
	}
}

func TestErrorRedactsPassword(t *testing.T) {
	for _, in := range []string{"ftp://joe:s3cret@h:99999/", "ftp://joe:s3cret@h/%zz", "ftp://joe:s3cr%zzet@h/", "ftp://joe:s3c ret@h/"} {
		_, err := url.Parse(in)
		if err == nil {
			t.Fatalf("Parse(%q) succeeded", in)
		}
		if strings.Contains(err.Error(), "s3c") {
			t.Errorf("error leaks the password: %v", err)
		}
	}
	u := url.MustParse("ftp://joe:s3cret@h/x")
	if got := u.Redacted(); got != "ftp://joe:xxxxx@h/x" {
		t.Errorf("Redacted = %q", got)
	}
	if got := u.String(); got != "ftp://joe:s3cret@h/x" {
		t.Errorf("String = %q", got)
	}
	if got := u.WithoutPassword(); got != "ftp://joe@h/x" || u.String() != "ftp://joe:s3cret@h/x" {
		t.Errorf("WithoutPassword = %q (and u %q)", got, u.String())
	}
	if got := url.MustParse("ftp://:@h/x").WithoutPassword(); got != "ftp://@h/x" {
		t.Errorf("an empty user and password: %q", got)
	}
}

func TestFTP(t *testing.T) {
	tests := []struct {
		ref, in string
		want    url.FTPPath
	}{
		{"1738 §3.2.2 %2F absolute", "ftp://myname@host.dom/%2Fetc/motd", url.FTPPath{Dirs: []string{"/etc"}, Name: "motd"}},
		{"1738 §3.2.2 relative", "ftp://myname@host.dom/etc/motd", url.FTPPath{Dirs: []string{"etc"}, Name: "motd"}},
		{"1738 §3.2.2 null CWD", "ftp://myname@host.dom//etc/motd", url.FTPPath{Dirs: []string{"", "etc"}, Name: "motd"}},
		{"1738 §3.2.2 typecode d", "ftp://h/pub/www/doc;type=d", url.FTPPath{Dirs: []string{"pub", "www"}, Name: "doc", Type: 'd'}},
		{"1738 §5 typecode upper case", "ftp://h/a.txt;TYPE=A", url.FTPPath{Name: "a.txt", Type: 'a'}},
		{"1738 §3.2.2 %3B is no separator", "ftp://h/a%3Btype=i", url.FTPPath{Name: "a;type=i"}},
		{"1738 §3.2.2 directory", "ftp://h/pub/", url.FTPPath{Dirs: []string{"pub"}}},
		{"1738 §3.2.2 no path", "ftp://h", url.FTPPath{}},
		{"1738 §3.2.2 spaces", "ftp://h/my%20dir/a%20b.txt", url.FTPPath{Dirs: []string{"my dir"}, Name: "a b.txt"}},
	}
	for _, tt := range tests {
		f, err := url.MustParse(tt.in).FTP()
		if err != nil {
			t.Errorf("%s: %v", tt.ref, err)
			continue
		}
		if !reflect.DeepEqual(*f, tt.want) {
			t.Errorf("%s: FTP(%q) = %+v, want %+v", tt.ref, tt.in, *f, tt.want)
		}
	}
}

func TestGopher(t *testing.T) {
	tests := []struct {
		ref, in string
		want    url.GopherPath
	}{
		{"1738 §3.4.1 empty path", "gopher://h", url.GopherPath{Type: '1'}},
		{"1738 §3.4.1 slash only", "gopher://h/", url.GopherPath{Type: '1'}},
		{"1738 §3.4.1 doubled type", "gopher://h/00/file", url.GopherPath{Type: '0', Selector: "0/file"}},
		{"1738 §3.4.1 nothing reserved", "gopher://h/0a;b?c=d@e", url.GopherPath{Type: '0', Selector: "a;b?c=d@e"}},
		{"1738 §3.4.2 search", "gopher://h/7/srch%09gopher%20protocol", url.GopherPath{Type: '7', Selector: "/srch", Search: "gopher protocol", HasSearch: true}},
		{"1738 §3.4.3 plus with empty search", "gopher://h/0/x%09%09+", url.GopherPath{Type: '0', Selector: "/x", HasSearch: true, Plus: "+", HasPlus: true}},
		{"1738 §3.4.7 attributes", "gopher://h/0/x%09%09!+ABSTRACT%20+SMELL", url.GopherPath{Type: '0', Selector: "/x", HasSearch: true, Plus: "!+ABSTRACT +SMELL", HasPlus: true}},
		{"1738 §3.4.8 view", "gopher://h/0/x%09%09+application/postscript%20Es_ES", url.GopherPath{Type: '0', Selector: "/x", HasSearch: true, Plus: "+application/postscript Es_ES", HasPlus: true}},
		{"lynx: ? starts a type 7 search", "gopher://h/7/srch?two+words%2B", url.GopherPath{Type: '7', Selector: "/srch", Search: "two words+", HasSearch: true}},
		{"lynx: only for type 7", "gopher://h/0/srch?x", url.GopherPath{Type: '0', Selector: "/srch?x"}},
		{"lynx: %09 wins", "gopher://h/7/a?b%09c", url.GopherPath{Type: '7', Selector: "/a?b", Search: "c", HasSearch: true}},
		{"1738 §3.4.9 filled form", "gopher://h/1/f%09%09+%091%0D%0A+-1%0D%0Aone%0D%0Atwo%0D%0A.%0D%0A", url.GopherPath{Type: '1', Selector: "/f", HasSearch: true, Plus: "+\t1\r\n+-1\r\none\r\ntwo\r\n.\r\n", HasPlus: true, FilledForm: true}},
	}
	for _, tt := range tests {
		g, err := url.MustParse(tt.in).Gopher()
		if err != nil {
			t.Errorf("%s: %v", tt.ref, err)
			continue
		}
		if *g != tt.want {
			t.Errorf("%s: Gopher(%q) = %+v, want %+v", tt.ref, tt.in, *g, tt.want)
		}
	}
}

func TestNewsNNTP(t *testing.T) {
	n, err := url.MustParse("news:*").News()
	if err != nil || !n.All {
		t.Errorf("1738 §3.6 news:* = %+v, %v", n, err)
	}
	n, _ = url.MustParse("news:comp.infosystems.www.misc").News()
	if n.Group != "comp.infosystems.www.misc" || n.Wildmat || n.MessageID != "" {
		t.Errorf("1738 §3.6 group: %+v", n)
	}
	n, _ = url.MustParse("news:199401011200.AA01@info.cern.ch").News()
	if n.MessageID != "199401011200.AA01@info.cern.ch" {
		t.Errorf("1738 §3.6 message-id: %+v", n)
	}
	n, _ = url.MustParse("news:comp.lang.*").News()
	if !n.Wildmat || n.Group != "comp.lang.*" {
		t.Errorf("wildmat: %+v", n)
	}
	p, err := url.MustParse("nntp://news.example:1119/local.test/3").NNTP()
	if err != nil || p.Group != "local.test" || !p.HasArticle || p.First != 3 || p.Last != 3 {
		t.Errorf("1738 §3.7 nntp article: %+v %v", p, err)
	}
	p, _ = url.MustParse("nntp://h/local.test").NNTP()
	if p.HasArticle {
		t.Errorf("1738 §3.7 nntp group: %+v", p)
	}
	p, _ = url.MustParse("nntp://h/local.test/2-5").NNTP()
	if p.First != 2 || p.Last != 5 {
		t.Errorf("nntp range: %+v", p)
	}
}

func TestWAIS(t *testing.T) {
	w, _ := url.MustParse("wais://h/test").WAIS()
	if w.Database != "test" || w.HasSearch || w.IsDocument() {
		t.Errorf("1738 §3.9 database: %+v", w)
	}
	w, _ = url.MustParse("wais://h/test?gopher+protocol%2B").WAIS()
	if w.Search != "gopher protocol+" || !w.HasSearch {
		t.Errorf("1738 §3.9 search: %+v", w)
	}
	w, _ = url.MustParse("wais://h/test?").WAIS()
	if w.HasSearch {
		t.Errorf("empty search is the database form: %+v", w)
	}
	const wp = "1=localhost%3A2110;2=/srv/wais/idx/test;3=0%20127%20/srv/wais/docs/alpha.txt;7=%00;"
	w, _ = url.MustParse("wais://h/test/TEXT/127/" + wp).WAIS()
	if w.Type != "TEXT" || w.Length != 127 || w.WPath != wp {
		t.Errorf("four-segment document: %+v", w)
	}
	w, _ = url.MustParse("wais://h/test/TEXT/" + wp).WAIS()
	if w.Type != "TEXT" || w.Length != 0 || w.WPath != wp {
		t.Errorf("1738 §3.9 document: %+v", w)
	}
}

func TestFileTelnetMailtoProspero(t *testing.T) {
	f, _ := url.MustParse("file://LocalHost/tmp/a%20b").File()
	if !f.Local || f.Path != "/tmp/a b" {
		t.Errorf("1738 §3.10 localhost: %+v", f)
	}
	f, _ = url.MustParse("file://vms.host.edu/disk$user/my/notes/note12345.txt").File()
	if f.Local || f.Host != "vms.host.edu" || f.Path != "/disk$user/my/notes/note12345.txt" {
		t.Errorf("1738 §3.10 remote host: %+v", f)
	}
	tn, _ := url.MustParse("telnet://joe:pw@h:2323").Telnet()
	if tn.User != "joe" || tn.Password != "pw" || tn.Port != 2323 || tn.Host != "h" {
		t.Errorf("1738 §3.8 telnet: %+v", tn)
	}
	tn, _ = url.MustParse("telnet://h/").Telnet()
	if tn.HasUser || tn.Port != 23 {
		t.Errorf("1738 §3.8 telnet defaults: %+v", tn)
	}
	a, _ := url.MustParse("mailto:joe%25relay@example.com").Mailto()
	if a != "joe%relay@example.com" {
		t.Errorf("1738 §3.5 mailto = %q", a)
	}
	p, _ := url.MustParse("prospero://host.dom//pros/name;OBJECT-VERSION=3;x=y%3Bz").Prospero()
	want := &url.ProsperoPath{HSOName: "/pros/name", Fields: []url.ProsperoField{{"OBJECT-VERSION", "3"}, {"x", "y;z"}}}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("1738 §3.11 prospero = %+v", p)
	}
}

func TestDefaultPorts(t *testing.T) {
	want := map[string]int{"ftp://h/": 21, "http://h/": 80, "https://h/": 443, "gopher://h/": 70,
		"nntp://h/g": 119, "telnet://h/": 23, "wais://h/db": 210, "prospero://h/x": 1525}
	for in, port := range want {
		if got := url.MustParse(in).PortNumber(); got != port {
			t.Errorf("1738 §3: %s default port = %d, want %d", in, got, port)
		}
	}
	if got := url.MustParse("http://h:8080/").PortNumber(); got != 8080 {
		t.Errorf("explicit port = %d", got)
	}
}

func TestEqual(t *testing.T) {
	tests := []struct {
		ref, a, b string
		eq        bool
	}{
		{"1630 example 1", "http://info.cern.ch/albert/bertram/marie-claude", "http://info.cern.ch/albert/bertram/marie%2Dclaude", true},
		{"1630 example 2", "http://info.cern.ch/albert/bertram/marie-claude", "http://info.cern.ch/albert/bertram%2Fmarie-claude", false},
		{"1738 §2.1 scheme case", "HTTP://h/", "http://h/", true},
		{"host case", "http://H.Example/", "http://h.example/", true},
		{"default port", "http://h:80/a", "http://h/a", true},
		{"other port", "http://h:81/a", "http://h/a", false},
		{"hex case", "ftp://h/a%2fb", "ftp://h/a%2Fb", true},
		{"1738 §2.2 reserved ; differs", "ftp://h/a%3Bb", "ftp://h/a;type=a", false},
		{"lynx search is the %09 one", "gopher://h/7/s?a+b", "gopher://h/7/s%09a%20b", true},
		{"a selector ? is not a search", "gopher://h/0/s?a", "gopher://h/0/s%09a", false},
		{"1738 §3.4.1 gopher reserved nothing", "gopher://h/0a%3Bb", "gopher://h/0a;b", true},
		{"1738 §3.4.1 gopher empty path", "gopher://h", "gopher://h/1", true},
		{"http empty path", "http://h", "http://h/", true},
		{"1738 §3.1 empty vs no user", "ftp://@h/", "ftp://h/", false},
		{"1738 §3.1 empty vs no password", "ftp://foo:@h/", "ftp://foo@h/", false},
	}
	for _, tt := range tests {
		a, b := url.MustParse(tt.a), url.MustParse(tt.b)
		if got := a.Equal(b); got != tt.eq {
			t.Errorf("%s: %q Equal %q = %v, want %v", tt.ref, tt.a, tt.b, got, tt.eq)
		}
	}
}

func TestResolveReference(t *testing.T) {
	// RFC 3986 §5.4.1 and §5.4.2.
	base := url.MustParse("http://a/b/c/d;p?q")
	tests := map[string]string{
		"g:h": "g:h", "g": "http://a/b/c/g", "./g": "http://a/b/c/g", "g/": "http://a/b/c/g/",
		"/g": "http://a/g", "//g": "http://g", "?y": "http://a/b/c/d;p?y", "g?y": "http://a/b/c/g?y",
		"#s": "http://a/b/c/d;p?q#s", "g#s": "http://a/b/c/g#s", "g?y#s": "http://a/b/c/g?y#s",
		";x": "http://a/b/c/;x", "g;x": "http://a/b/c/g;x", "g;x?y#s": "http://a/b/c/g;x?y#s",
		"": "http://a/b/c/d;p?q", ".": "http://a/b/c/", "./": "http://a/b/c/", "..": "http://a/b/",
		"../": "http://a/b/", "../g": "http://a/b/g", "../..": "http://a/", "../../": "http://a/",
		"../../g": "http://a/g",
		// abnormal examples
		"../../../g": "http://a/g", "../../../../g": "http://a/g", "/./g": "http://a/g",
		"/../g": "http://a/g", "g.": "http://a/b/c/g.", ".g": "http://a/b/c/.g", "g..": "http://a/b/c/g..",
		"..g": "http://a/b/c/..g", "./../g": "http://a/b/g", "./g/.": "http://a/b/c/g/",
		"g/./h": "http://a/b/c/g/h", "g/../h": "http://a/b/c/h", "g;x=1/./y": "http://a/b/c/g;x=1/y",
		"g;x=1/../y": "http://a/b/c/y", "g?y/./x": "http://a/b/c/g?y/./x", "g?y/../x": "http://a/b/c/g?y/../x",
		"g#s/./x": "http://a/b/c/g#s/./x", "g#s/../x": "http://a/b/c/g#s/../x", "http:g": "http:g",
	}
	for ref, want := range tests {
		r, err := url.ParseReference(ref)
		if err != nil {
			t.Errorf("ParseReference(%q): %v", ref, err)
			continue
		}
		if got := base.ResolveReference(r).String(); got != want {
			t.Errorf("3986 §5.4: resolve %q = %q, want %q", ref, got, want)
		}
	}
	// RFC 1630, partial form: the same results in both contexts.
	for _, ctx := range []string{"magic://a/b/c//d/e/f", "magic://a/b/c//d/e/"} {
		b := url.MustParse(ctx)
		for ref, want := range map[string]string{
			"g": "magic://a/b/c//d/e/g", "/g": "magic://a/g", "//g": "magic://g",
			"../g": "magic://a/b/c//d/g", "g:h": "g:h",
		} {
			if got := b.ResolveReference(mustRef(t, ref)).String(); got != want {
				t.Errorf("1630 partial form in %s: %q = %q, want %q", ctx, ref, got, want)
			}
		}
	}
}

func mustRef(t *testing.T, s string) *url.URL {
	t.Helper()
	r, err := url.ParseReference(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestExtract(t *testing.T) {
	// The examples of RFC 1738's appendix.
	text := "Yes, Jim, I found it under <URL:ftp://info.cern.ch/pub/www/doc;\n" +
		"      type=d> but you can probably pick it up from <URL:ftp://ds.in\n" +
		"      ternic.net/rfc>.  Note the warning in <URL:http://ds.internic.\n" +
		"      net/instructions/overview.html#WARNING>."
	want := []string{"ftp://info.cern.ch/pub/www/doc;type=d", "ftp://ds.internic.net/rfc", "http://ds.internic.net/instructions/overview.html#WARNING"}
	got := url.Extract(text)
	if len(got) != len(want) {
		t.Fatalf("Extract found %d URLs, want %d: %+v", len(got), len(want), got)
	}
	for i, m := range got {
		if m.Raw != want[i] || m.URL == nil {
			t.Errorf("match %d = %q (%v), want %q", i, m.Raw, m.Err, want[i])
		}
		if text[m.Start] != '<' || text[m.End-1] != '>' {
			t.Errorf("match %d range %d-%d is not the bracketed text", i, m.Start, m.End)
		}
	}
	// The hyphen at a line break: both readings are offered.
	h := url.Extract("see <URL:http://www.ex-\n   ample.com/a> and <http://h/x> but not <b> or <a href>")
	if len(h) != 2 || h[0].Raw != "http://www.ex-ample.com/a" || h[0].Alt != "http://www.example.com/a" || h[1].Raw != "http://h/x" {
		t.Errorf("hyphen rule: %+v", h)
	}
	bad := url.Extract("<URL:http://h/%zz>")
	if len(bad) != 1 || bad[0].Err == nil {
		t.Errorf("a wrapped URL that does not parse is reported with its error: %+v", bad)
	}
}

func TestCanonicalize(t *testing.T) {
	tests := map[string]string{
		"  http://h/a b~c  ":      "http://h/a%20b%7Ec",
		"http://h/x#y#z":          "http://h/x#y%23z",
		"ftp://me@corp:p@ss@h/":   "ftp://me%40corp:p%40ss@h/",
		"http://[::1]:80/[a]":     "http://[::1]:80/%5Ba%5D",
		"http://h/caf\xc3\xa9":    "http://h/caf%C3%A9",
		"http://h/already%20done": "http://h/already%20done",
	}
	for in, want := range tests {
		got := url.Canonicalize(in)
		if got != want {
			t.Errorf("Canonicalize(%q) = %q, want %q", in, got, want)
		}
		if _, err := url.Parse(got); err != nil {
			t.Errorf("Parse(Canonicalize(%q)): %v", in, err)
		}
	}
}

func TestSegments(t *testing.T) {
	s, err := url.MustParse("http://h/a%2Fb/c").Segments()
	if err != nil || !reflect.DeepEqual(s, []string{"a/b", "c"}) {
		t.Errorf("Segments = %q, %v", s, err)
	}
}
