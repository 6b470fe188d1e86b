package http

import (
	"github.com/urlderef/deref/protocols"
)

// Schemes describes http: and https: for the engine, fetched by f.
func Schemes(f *Fetcher) []protocols.Scheme {
	ports := []int{80, 443}
	return []protocols.Scheme{
		{Name: "http", Fetcher: f, Ports: ports, Redirect: true, Ranges: true, Fallback: "index.html", Tree: protocols.TreeIndexPage},
		{Name: "https", Fetcher: f, Ports: ports, Redirect: true, Secure: true, Plain: "http", Ranges: true, Fallback: "index.html", Tree: protocols.TreeIndexPage},
	}
}
