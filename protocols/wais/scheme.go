package wais

import (
	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// Schemes describes wais: for the engine, fetched by f.
func Schemes(f *Fetcher) []protocols.Scheme {
	return []protocols.Scheme{{Name: "wais", Fetcher: f, Ports: []int{210}, Tree: protocols.TreeSearch}}
}

// SuggestedName is the local file name of u: see the package function.
func (f *Fetcher) SuggestedName(u *url.URL) string { return SuggestedName(u) }
