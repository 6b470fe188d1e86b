package nntp

import (
	"github.com/urlderef/deref/protocols"
)

// Schemes describes news:, snews:, nntp: and nntps: for the engine,
// fetched by f; news: URLs also take nntp_proxy.
func Schemes(f *Fetcher) []protocols.Scheme {
	ports := []int{119, 563}
	return []protocols.Scheme{
		{Name: "news", Fetcher: f, Ports: ports, ProxyVars: []string{"nntp_proxy"}, Tree: protocols.TreeGroup, WARCProtocol: "nntp"},
		{Name: "snews", Fetcher: f, Ports: ports, Secure: true, Plain: "news", ProxyVars: []string{"nntp_proxy"}, Tree: protocols.TreeGroup, WARCProtocol: "nntp"},
		{Name: "nntp", Fetcher: f, Ports: ports, Tree: protocols.TreeGroup, WARCProtocol: "nntp"},
		{Name: "nntps", Fetcher: f, Ports: ports, Secure: true, Plain: "nntp", Tree: protocols.TreeGroup, WARCProtocol: "nntp"},
	}
}
