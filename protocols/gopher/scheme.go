package gopher

import (
	"github.com/urlderef/deref/protocols"
)

// Schemes describes gopher: and gophers: for the engine, fetched by f.
func Schemes(f *Fetcher) []protocols.Scheme {
	return []protocols.Scheme{
		{Name: "gopher", Fetcher: f, Ports: []int{70}, Tree: protocols.TreeMenu},
		{Name: "gophers", Fetcher: f, Ports: []int{70}, Secure: true, Plain: "gopher", Tree: protocols.TreeMenu},
	}
}
