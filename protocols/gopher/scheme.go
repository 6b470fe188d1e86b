package gopher

import (
	"strings"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// Schemes describes gopher: and gophers: for the engine, fetched by f.
func Schemes(f *Fetcher) []protocols.Scheme {
	return []protocols.Scheme{
		{Name: "gopher", Fetcher: f, Ports: []int{70}, Tree: protocols.TreeMenu},
		{Name: "gophers", Fetcher: f, Ports: []int{70}, Secure: true, Plain: "gopher", Tree: protocols.TreeMenu},
	}
}

// SuggestedName is the local file name of u: the last part of its
// selector between "/"s, else "index" (a server's root menu). The item
// type, which comes first in the URL's path, is no part of it:
// gopher://h/0about.txt names about.txt, and gopher://h/1/ the root.
func (f *Fetcher) SuggestedName(u *url.URL) string { return suggestedName(u) }

// EndsInFolder says whether u's selector ends in no name (empty, or a
// closing "/"), as gopher://h/ and gopher://h/1/pub/ do
// (protocols.Folderer).
func (f *Fetcher) EndsInFolder(u *url.URL) bool {
	g, err := u.Gopher()
	return err == nil && (g.Selector == "" || strings.HasSuffix(g.Selector, "/"))
}

func suggestedName(u *url.URL) string {
	g, err := u.Gopher()
	if err != nil {
		return protocols.NameFromURL(u, "index")
	}
	parts := strings.Split(g.Selector, "/")
	for i := len(parts) - 1; i >= 0; i-- {
		if s := protocols.SafeName(parts[i]); s != "" {
			return s
		}
	}
	return "index"
}
