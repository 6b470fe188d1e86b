package wais

import (
	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// Schemes describes wais: for the engine, fetched by f.
func Schemes(f *Fetcher) []protocols.Scheme {
	return []protocols.Scheme{{Name: "wais", Fetcher: f, Ports: []int{210}, Tree: protocols.TreeSearch}}
}

// ArchiveAs says how a retrieval is archived (protocols.Archiver): a
// search's result list is a metadata record (protocols.ResultListType,
// the list as Render writes it), the index's capture of the search all
// the same; a document is a resource record.
func (f *Fetcher) ArchiveAs(u *url.URL, resp *protocols.Response) protocols.Archived {
	if resp.Kind == protocols.KindDirectory || resp.Kind == protocols.KindArticleList {
		return protocols.Archived{Metadata: true, MediaType: protocols.ResultListType}
	}
	return protocols.Archived{}
}

// SuggestedName is the local file name of u: see the package function.
func (f *Fetcher) SuggestedName(u *url.URL) string { return SuggestedName(u) }
