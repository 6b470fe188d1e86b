package telnet

import (
	"github.com/urlderef/deref/protocols"
)

// Schemes describes telnet: for the engine, fetched by f (a session).
func Schemes(f *Fetcher) []protocols.Scheme {
	return []protocols.Scheme{{Name: "telnet", Fetcher: f, Ports: []int{23}, Session: true, Linked: true}}
}
