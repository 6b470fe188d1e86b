package url_test

import (
	"fmt"

	"github.com/urlderef/deref/url"
)

// An FTP URL's path is a series of CWD arguments and a name; "%2F"
// inside a segment is part of that segment, not a separator.
func ExampleURL_FTP() {
	u := url.MustParse("ftp://ftp.example.org/pub/a%2Fb/file.txt;type=a")
	fp, err := u.FTP()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%q %q %c\n", fp.Dirs, fp.Name, fp.Type)
	// Output: ["pub" "a/b"] "file.txt" a
}

// A Gopher URL names the item type, the selector, a search and a
// Gopher+ string (RFC 1738 §3.4).
func ExampleURL_Gopher() {
	u := url.MustParse("gopher://gopher.example.org:70/7/search%09gopher%20history")
	g, _ := u.Gopher()
	fmt.Printf("%c %q %q\n", g.Type, g.Selector, g.Search)
	// Output: 7 "/search" "gopher history"
}

// URLs in running text, delimited as RFC 1738's appendix suggests.
func ExampleExtract() {
	text := "The archive is at <URL:ftp://ftp.example.org/pub/> and the\nmenu at <gopher://gopher.example.org/1/>."
	for _, m := range url.Extract(text) {
		fmt.Println(m.URL)
	}
	// Output:
	// ftp://ftp.example.org/pub/
	// gopher://gopher.example.org/1/
}

// Canonical comparison: the scheme and host in lower case, the default
// port dropped, escapes of unreserved characters undone.
func ExampleURL_Equal() {
	a := url.MustParse("FTP://FTP.Example.ORG:21/%70ub/notes")
	b := url.MustParse("ftp://ftp.example.org/pub/notes")
	c := url.MustParse("ftp://ftp.example.org/pub%2Fnotes") // one segment, not two
	fmt.Println(a.Equal(b), b.Equal(c))
	// Output: true false
}
