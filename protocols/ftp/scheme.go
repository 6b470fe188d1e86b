package ftp

import (
	"strings"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// Schemes describes ftp: and ftps: for the engine, fetched by f.
func Schemes(f *Fetcher) []protocols.Scheme {
	ports := []int{21, 990}
	return []protocols.Scheme{
		{Name: "ftp", Fetcher: f, Ports: ports, Redirect: true, Ranges: true, Tree: protocols.TreeListing, Conversation: true},
		{Name: "ftps", Fetcher: f, Ports: ports, Secure: true, Plain: "ftp", Ranges: true, Tree: protocols.TreeListing, Conversation: true, WARCProtocol: "ftp"},
	}
}

// ArchiveAs says how a retrieval is archived (protocols.Archiver): a
// file fetched in binary, as every archived one is, is known by its URL
// without ";type=i", as wget and Heritrix record it.
func (f *Fetcher) ArchiveAs(u *url.URL, resp *protocols.Response) protocols.Archived {
	if fp, err := u.FTP(); err == nil && fp.Type == 'i' {
		v := *u
		v.Path = strings.TrimSuffix(strings.TrimSuffix(v.Path, ";type=i"), ";type=I")
		return protocols.Archived{URI: v.Redacted()}
	}
	return protocols.Archived{}
}

// Verbatim returns u asking for binary type (";type=i") when it asks for
// none: the bytes as the server holds them.
func (f *Fetcher) Verbatim(u *url.URL) *url.URL {
	fp, err := u.FTP()
	if err != nil || fp.Type != 0 || fp.Name == "" {
		return u
	}
	v := *u
	v.Path += ";type=i"
	return &v
}

// SuggestedName is the local file name of u: its name without ";type="
// (an escaped %3B belongs to the name, RFC 1738 §3.2.2, so the type is
// cut from the URL, not from the decoded name), else the last folder's.
func (f *Fetcher) SuggestedName(u *url.URL) string { return suggestedName(u) }

// EndsInFolder says whether u names a folder (no name, or ;type=d)
// rather than a file (protocols.Folderer).
func (f *Fetcher) EndsInFolder(u *url.URL) bool {
	fp, err := u.FTP()
	return err == nil && (fp.Name == "" || fp.Type == 'd')
}

func suggestedName(u *url.URL) string {
	if fp, err := u.FTP(); err == nil {
		if fp.Name != "" {
			if s := protocols.SafeName(fp.Name); s != "" {
				return s
			}
		}
		for i := len(fp.Dirs) - 1; i >= 0; i-- {
			if s := protocols.SafeName(fp.Dirs[i]); s != "" {
				return s
			}
		}
		return "index"
	}
	return protocols.NameFromURL(u, "index")
}
