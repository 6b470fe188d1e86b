package file

import (
	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// Schemes describes file: for the engine: this machine's files, and FTP's
// for another host (Fetcher.Rewrite).
func Schemes() []protocols.Scheme {
	return []protocols.Scheme{{Name: "file", Fetcher: Fetcher{}, Local: true, Ranges: true, Tree: protocols.TreeListing}}
}

// Rewrite hands a file: URL naming another host to FTP, as the 1993 URL
// draft and lynx do: file://host/path is ftp://host/path.
func (Fetcher) Rewrite(u *url.URL) *url.URL {
	fp, err := u.File()
	if err != nil || fp.Local {
		return nil
	}
	return &url.URL{Scheme: "ftp", HasAuthority: true, User: u.User, Host: u.Host, Port: u.Port, Path: u.Path}
}
