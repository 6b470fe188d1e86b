package mail

import (
	"github.com/urlderef/deref/protocols"
)

// Schemes describes mid: and cid: for the engine, fetched by f: they
// name messages already on this machine.
func Schemes(f *Fetcher) []protocols.Scheme {
	return []protocols.Scheme{{Name: "mid", Fetcher: f, Local: true}, {Name: "cid", Fetcher: f, Local: true}}
}
