package gopher

import (
	"strings"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// Schemes describes gopher: and gophers: for the engine, fetched by f.
func Schemes(f *Fetcher) []protocols.Scheme {
	return []protocols.Scheme{
		{Name: "gopher", Fetcher: f, Ports: []int{70}, Tree: protocols.TreeMenu, Robots: "/0robots.txt"},
		{Name: "gophers", Fetcher: f, Ports: []int{70}, Secure: true, Plain: "gopher", Tree: protocols.TreeMenu, WARCProtocol: "gopher", Robots: "/0robots.txt"},
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

// ArchiveAs says how a retrieval is archived (protocols.Archiver): an
// item is known by its type and selector, however it was asked for
// (plainly, or in Gopher+ with "+"), in WARC-Protocol gopher+ where
// Gopher+ was spoken; an attribute block ("!", or "$" of a menu's
// items) is metadata of the item asked of; a menu says it is one, by
// Gopher+'s own name for the view (+VIEWS: application/gopher-menu), so
// that replay tells it from a text without the URL.
func (f *Fetcher) ArchiveAs(u *url.URL, resp *protocols.Response) protocols.Archived {
	as := protocols.Archived{Protocol: "gopher"}
	g, err := u.Gopher()
	if err != nil {
		return as
	}
	if g.HasPlus {
		as.Protocol = "gopher+"
	}
	v := *u
	v.Path = "/" + url.EscapeGopher(string(g.Type)+g.Selector)
	item := v.Redacted()
	if g.HasPlus && (strings.HasPrefix(g.Plus, "!") || strings.HasPrefix(g.Plus, "$")) {
		as.URI, as.MediaType, as.Metadata, as.Of = item, "application/gopher+-attributes", true, item
		return as
	}
	if g.Search == "" { // a search's results are not the item its attributes tell of
		as.Item = item
	}
	if resp.Kind == protocols.KindDirectory {
		as.MediaType = menuMediaType
	}
	return as
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
