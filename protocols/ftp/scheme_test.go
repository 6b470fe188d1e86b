package ftp_test

import (
	"testing"

	"github.com/urlderef/deref/protocols/ftp"
	"github.com/urlderef/deref/url"
)

// An FTP URL's local name is its name without ";type=", an escaped
// semicolon kept, else its last folder's.
func TestSuggestedName(t *testing.T) {
	f := &ftp.Fetcher{}
	for in, want := range map[string]string{
		"ftp://h/a/b.txt;type=i":   "b.txt",
		"ftp://h/semi%3Bcolon.txt": "semi;colon.txt",
		"ftp://h/a%3Bb;type=i":     "a;b",
		"ftp://h/pub/;type=d":      "pub",
		"ftp://h/pub/":             "pub",
		"ftp://h/":                 "index",
		"ftp://h/..%2F..%2Fetc":    ".._.._etc",
	} {
		if got := f.SuggestedName(url.MustParse(in)); got != want {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
	}
}

// Verbatim asks for the bytes as they are where the URL names no type.
func TestVerbatim(t *testing.T) {
	f := &ftp.Fetcher{}
	for in, want := range map[string]string{
		"ftp://h/a.txt":        "ftp://h/a.txt;type=i",
		"ftp://h/a.txt;type=a": "ftp://h/a.txt;type=a",
		"ftp://h/pub/":         "ftp://h/pub/",
	} {
		if got := f.Verbatim(url.MustParse(in)).String(); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}
