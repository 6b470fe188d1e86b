package crawl

import (
	"path"
	"strings"

	"github.com/urlderef/deref/url"
)

// acceptable says whether a file's name passes Accept and Reject, as
// wget's -A and -R judge it: an entry with *, ? or [ is a shell pattern
// the whole name must match (path.Match), any other a suffix it must end
// with; the name must match an entry of Accept, when Accept has any, and
// none of Reject.
func (o *Options) acceptable(name string) bool {
	if len(o.Accept) > 0 && !matchesAny(o.Accept, name) {
		return false
	}
	return !matchesAny(o.Reject, name)
}

func matchesAny(list []string, name string) bool {
	for _, p := range list {
		if strings.ContainsAny(p, "*?[") {
			if ok, _ := path.Match(p, name); ok {
				return true
			}
		} else if strings.HasSuffix(name, p) {
			return true
		}
	}
	return false
}

// fileName is the name of u's file, as Accept and Reject judge it: the
// last element of its path (a Gopher URL's selector), decoded; "" for a
// folder's URL, which they do not judge.
func fileName(u *url.URL) string {
	var segs []string
	if g, err := u.Gopher(); err == nil && (u.Scheme == "gopher" || u.Scheme == "gophers") {
		segs = strings.Split(g.Selector, "/")
	} else if s, err := u.Segments(); err == nil {
		segs = s
	}
	if len(segs) == 0 {
		return ""
	}
	return segs[len(segs)-1]
}

// htmlName says a file's name ends as a page's does (.html, .htm, and
// .shtml or .xhtml), for which wget's -A and -R make an exception.
func htmlName(name string) bool {
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		return false
	}
	suf := strings.ToLower(name[i+1:])
	return suf == "htm" || strings.HasSuffix(suf, "html") && len(suf) <= 5
}

// fetchable says whether a link to u, at depth, is to be fetched as
// Accept and Reject have it: a folder's URL is, and a page's (htmlName)
// whose links may be followed in turn (it is not at MaxDepth, or
// PageRequisites), for those links, as wget has it; any other only when
// its file is acceptable.
func (o *Options) fetchable(u *url.URL, depth int) bool {
	if len(o.Accept) == 0 && len(o.Reject) == 0 {
		return true
	}
	name := fileName(u)
	if name == "" {
		return true
	}
	if htmlName(name) && (o.MaxDepth == 0 || depth < o.MaxDepth || o.PageRequisites) {
		return true
	}
	return o.acceptable(name)
}
