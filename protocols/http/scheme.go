package http

import (
	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// ArchiveAs says how a retrieval is archived (protocols.Archiver): from
// its heads as they went over the wire (protocols.Exchange), or not at
// all (through a proxy, which keeps them): never as a resource record.
func (f *Fetcher) ArchiveAs(*url.URL, *protocols.Response) protocols.Archived {
	return protocols.Archived{Skip: true}
}

// Schemes describes http: and https: for the engine, fetched by f.
func Schemes(f *Fetcher) []protocols.Scheme {
	ports := []int{80, 443}
	return []protocols.Scheme{
		{Name: "http", Fetcher: f, Ports: ports, Redirect: true, Ranges: true, Fallback: "index.html", Tree: protocols.TreeIndexPage, Robots: "/robots.txt", Linked: true},
		{Name: "https", Fetcher: f, Ports: ports, Redirect: true, Secure: true, Plain: "http", Ranges: true, Fallback: "index.html", Tree: protocols.TreeIndexPage, Robots: "/robots.txt", Linked: true},
	}
}
