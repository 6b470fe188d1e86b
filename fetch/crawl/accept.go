package crawl

import (
	"path"
	"strings"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// acceptable says whether a file's name passes Accept and Reject, as
// wget's -A and -R judge it: an entry with *, ? or [ is a shell pattern
// the whole name must match (path.Match), any other a suffix it must end
// with; the name must match an entry of Accept, when Accept has any, and
// none of Reject.
func (o *Options) acceptable(name string) bool {
	if len(o.Accept) > 0 && !matchesAny(o.Accept, name, o.IgnoreCase) {
		return false
	}
	return !matchesAny(o.Reject, name, o.IgnoreCase)
}

func matchesAny(list []string, name string, fold bool) bool {
	if fold {
		name = strings.ToLower(name)
	}
	for _, p := range list { // lowered already with fold (foldRules)
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

// foldRules lowers Accept, Reject, IncludeDirs and ExcludeDirs once,
// with IgnoreCase, so that each link's name and folder is all that is
// lowered as it is judged.
func (o *Options) foldRules() {
	if !o.IgnoreCase {
		return
	}
	for _, list := range []*[]string{&o.Accept, &o.Reject, &o.IncludeDirs, &o.ExcludeDirs} {
		lowered := make([]string, len(*list))
		for i, p := range *list {
			lowered[i] = strings.ToLower(p)
		}
		*list = lowered // a copy: the caller's Options stay as they were
	}
}

// fileName is the name of u's file, as Accept and Reject judge it: the
// last element of its path (a Gopher URL's selector), decoded; "" for a
// folder's URL, which they do not judge.
func fileName(u *url.URL) string {
	segs := pathSegments(u)
	if len(segs) == 0 {
		return ""
	}
	return segs[len(segs)-1]
}

// folderOf is the folder of u's path as IncludeDirs and ExcludeDirs judge
// it, as wget has it: the elements before the file's name, decoded,
// joined by "/", without a leading one ("" at the top).
func folderOf(u *url.URL) string {
	segs := pathSegments(u)
	if len(segs) == 0 {
		return ""
	}
	return strings.Join(segs[:len(segs)-1], "/")
}

// pathSegments are the elements of u's path (a Gopher URL's selector's),
// decoded.
func pathSegments(u *url.URL) []string {
	if sel, ok := u.Selector(); ok {
		return strings.Split(strings.TrimPrefix(sel, "/"), "/")
	}
	segs, _ := u.Segments()
	return segs
}

// inDirs says whether the folder dir is one of list's or below it (an
// entry without wildcards, its leading "/" dropped), or matches one of
// its patterns whole, as wget's dir_matches_p has it.
func inDirs(list []string, dir string, fold bool) bool {
	if fold {
		dir = strings.ToLower(dir)
	}
	for _, p := range list { // lowered already with fold (foldRules)
		p = strings.TrimPrefix(p, "/")
		if strings.ContainsAny(p, "*?[") {
			if ok, _ := path.Match(p, dir); ok {
				return true
			}
		} else if p == "" || dir == p || strings.HasPrefix(dir, p+"/") {
			return true
		}
	}
	return false
}

// hostIn says whether u's host is one of the domains or below one.
func hostIn(u *url.URL, domains []string) bool {
	h := strings.ToLower(u.Hostname())
	for _, d := range domains {
		d = strings.ToLower(strings.TrimPrefix(d, "."))
		if h == d || strings.HasSuffix(h, "."+d) {
			return true
		}
	}
	return false
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
// ExcludeDomains, IncludeDirs and ExcludeDirs, AcceptRegex and
// RejectRegex, and Accept and Reject have it. For the last two, a
// folder's URL is, and a page's (htmlName) whose links may be followed
// in turn (it is not at MaxDepth, or PageRequisites), for those links, as
// wget has it; any other only when its file is acceptable.
func (o *Options) fetchable(c *fetch.Client, u *url.URL, depth int) bool {
	if sc, _ := c.Scheme(u.Scheme); o.HTTPSOnly && !(sc.Secure && sc.Tree == protocols.TreeIndexPage) { // https only, as wget's
		return false
	}
	if len(o.ExcludeDomains) > 0 && hostIn(u, o.ExcludeDomains) {
		return false
	}
	if len(o.IncludeDirs) > 0 || len(o.ExcludeDirs) > 0 {
		dir := folderOf(u)
		if len(o.IncludeDirs) > 0 && !inDirs(o.IncludeDirs, dir, o.IgnoreCase) || inDirs(o.ExcludeDirs, dir, o.IgnoreCase) {
			return false
		}
	}
	if o.AcceptRegex != nil || o.RejectRegex != nil {
		s := u.String()
		if o.AcceptRegex != nil && !o.AcceptRegex.MatchString(s) || o.RejectRegex != nil && o.RejectRegex.MatchString(s) {
			return false
		}
	}
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
