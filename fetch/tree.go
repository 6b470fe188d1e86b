package fetch

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/urlderef/deref/fetch/links"
	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/protocols/gopher"
	"github.com/urlderef/deref/url"
)

// Tree is a remote folder tree seen through its listings: FTP and file:
// folders, HTTP index pages (the links of each page to the files and
// folders directly below it), Gopher menus (the items on the same server
// whose selector is the menu's plus one path element) and newsgroups (one
// file per article, named by its number). It is what the mirror copies
// and [NewFS] shows.
type Tree struct{ src source }

// TreeEntry is one entry of a Tree's folder.
type TreeEntry struct {
	// Name is the entry's name within its folder, as the tree gives it:
	// one path element, not yet checked to be a safe local name.
	Name string
	Dir  bool
	URL  *url.URL // where it is fetched (a file in binary mode)
	Size int64    // -1 when unknown
	// ModTime is zero when unknown.
	ModTime time.Time
	// Link marks a symbolic link; Target is where it points, when known.
	Link   bool
	Target string
	// Refuse says why the entry cannot be fetched, when its listing line
	// already tells (a line not understood).
	Refuse string
	// Article marks a news article, which never changes once posted.
	Article bool
	// Selector is a Gopher item's selector.
	Selector string
}

// Tree views the tree whose top folder is u, as its scheme lists folders
// (protocols.Scheme.Tree): an FTP or file: folder, an HTTP index page, a
// Gopher menu, a newsgroup, or a WAIS search (its hits as files).
func (c *Client) Tree(u *url.URL) (*Tree, error) {
	src, err := c.newSource(u)
	if err != nil {
		return nil, err
	}
	return &Tree{src: src}, nil
}

// Root is the top folder.
func (t *Tree) Root() TreeEntry { return t.src.root() }

// List returns the entries of dir, a folder of the tree (Root or an entry
// with Dir set), fetched with c.
func (t *Tree) List(ctx context.Context, c *Client, dir TreeEntry) ([]TreeEntry, error) {
	return t.src.list(ctx, c, dir)
}

// FileURL is the URL of the file at rel, a slash-separated path below the
// top, for links followed inside the tree; trees without such paths
// (Gopher menus, newsgroups) return an error.
func (t *Tree) FileURL(rel string) (*url.URL, error) { return t.src.fileURL(rel) }

// Conditional says whether the tree's files can be fetched on condition
// that they changed ([FetchOptions].IfModifiedSince): HTTP.
func (t *Tree) Conditional() bool { return t.src.conditional() }

// source lists the folders of one kind of remote tree.
type source interface {
	// root is the start folder.
	root() TreeEntry
	// list returns the entries of a folder.
	list(ctx context.Context, c *Client, d TreeEntry) ([]TreeEntry, error)
	// fileURL is the URL of the file at rel below the start, for links
	// followed inside the tree.
	fileURL(rel string) (*url.URL, error)
	// conditional says whether fetching can ask "changed since?" (HTTP).
	conditional() bool
}

func (c *Client) newSource(u *url.URL) (source, error) {
	s, _ := c.scheme(u.Scheme)
	verbatim := func(u *url.URL) *url.URL { return u }
	if v, ok := s.Fetcher.(protocols.Verbatimer); ok {
		verbatim = v.Verbatim // a mirror copies bytes: no newline conversion
	}
	switch s.Tree {
	case protocols.TreeListing:
		if s.Opaque { // a name never taken apart: listed as given
			v := *u
			v.HasFragment, v.Fragment = false, ""
			return &listSource{top: &v, verbatim: verbatim, opaque: true}, nil
		}
		return &listSource{top: dirURL(u), verbatim: verbatim}, nil
	case protocols.TreeIndexPage:
		v := dirURL(u)
		v.HasQuery, v.Query = false, ""
		return &webSource{listSource{top: v, verbatim: verbatim}}, nil
	case protocols.TreeMenu:
		g, err := u.Gopher()
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadURL, err)
		}
		if g.Type != '1' || g.HasSearch {
			return nil, fmt.Errorf("%w: a Gopher tree starts at a menu (type 1), not type %q", ErrBadURL, g.Type)
		}
		return &gopherSource{top: u, sel: g.Selector}, nil
	case protocols.TreeGroup:
		return &newsSource{top: u}, nil
	case protocols.TreeSearch:
		if !u.HasQuery {
			return nil, fmt.Errorf("%w: a WAIS tree is a search (wais://host/database?words), whose hits are its files", ErrBadURL)
		}
		return &waisSource{top: u}, nil
	}
	return nil, fmt.Errorf("%w: %s: has no tree of listings", ErrUnsupportedScheme, u.Scheme)
}

// dirURL is u naming a folder: with a final "/".
func dirURL(u *url.URL) *url.URL {
	v := *u
	v.HasFragment, v.Fragment = false, ""
	if !strings.HasSuffix(v.Path, "/") {
		v.Path += "/"
	}
	return &v
}

// listSource mirrors FTP and file: folders from their listings; verbatim
// makes a file's URL ask for its bytes as they are.
type listSource struct {
	top      *url.URL
	verbatim func(*url.URL) *url.URL
	opaque   bool // the scheme's paths are names (protocols.Scheme.Opaque)
}

func (s *listSource) root() TreeEntry   { return TreeEntry{Dir: true, URL: s.top, Size: -1} }
func (s *listSource) conditional() bool { return false }

func (s *listSource) fileURL(rel string) (*url.URL, error) {
	if s.opaque {
		return nil, fmt.Errorf("%s: URLs are names, not paths below a folder", s.top.Scheme)
	}
	segs := strings.Split(rel, "/")
	for i, seg := range segs {
		segs[i] = url.EscapeSegment(seg)
	}
	u, err := url.Parse(s.top.String() + strings.Join(segs, "/"))
	if err != nil {
		return nil, err
	}
	return s.verbatim(u), nil
}

func (s *listSource) list(ctx context.Context, c *Client, d TreeEntry) ([]TreeEntry, error) {
	resp, err := fetchListing(ctx, c, d.URL, KindDirectory, "a folder")
	if err != nil {
		return nil, err
	}
	out := make([]TreeEntry, 0, len(resp.Entries))
	for _, e := range resp.Entries {
		k := TreeEntry{Name: e.Name, Size: e.Size, ModTime: e.ModTime, Link: e.Kind == KindLink, Target: e.Target}
		switch {
		case e.URL == "" || e.Type == "unparsed":
			k.Refuse = "listing line not understood"
		case e.Kind == KindDirectory:
			k.Dir = true
		case e.Kind != KindFile && e.Kind != KindLink:
			continue
		}
		if e.URL != "" {
			if k.URL, err = url.Parse(e.URL); err != nil && k.Refuse == "" {
				k.Refuse = "bad URL in the listing"
			} else if err == nil && !k.Dir {
				k.URL = s.verbatim(k.URL)
			}
		}
		out = append(out, k)
	}
	return out, nil
}

// webSource mirrors index pages: the links of each page to the files
// and folders directly below it, on the same host: an HTTP page's
// anchors, or the links a protocol read from its own kind of page
// (gemtext's, a KindDirectory's entries).
type webSource struct{ listSource }

func (s *webSource) conditional() bool { return true }

func (s *webSource) list(ctx context.Context, c *Client, d TreeEntry) ([]TreeEntry, error) {
	resp, err := c.Fetch(ctx, d.URL, 0)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var hrefs []string
	switch {
	case resp.Kind == KindDirectory: // a page the protocol read into links (gemtext)
		for _, e := range resp.Entries {
			if e.URL != "" && (e.Kind == KindFile || e.Kind == KindDirectory) {
				hrefs = append(hrefs, e.URL)
			}
		}
	case resp.MediaType != "text/html" && resp.MediaType != "application/xhtml+xml":
		return nil, fmt.Errorf("%w: %s is %s, not an index page", ErrNotRetrievable, d.URL.Redacted(), orUnknown(resp.MediaType))
	default:
		if hrefs, err = links.Anchors(resp.Body); err != nil {
			return nil, err
		}
	}
	var out []TreeEntry
	seen := map[string]bool{}
	for _, h := range hrefs {
		k, ok := s.below(d.URL, h)
		if !ok || seen[k.Name] {
			continue
		}
		seen[k.Name] = true
		out = append(out, k)
	}
	return out, nil
}

// below resolves a link and keeps it when it names a file or folder
// directly below the page's folder on the same server.
func (s *webSource) below(base *url.URL, href string) (TreeEntry, bool) {
	ref, err := url.ParseReference(url.Canonicalize(strings.TrimSpace(href)))
	if err != nil || ref.HasQuery {
		return TreeEntry{}, false
	}
	u := base.ResolveReference(ref)
	u.HasFragment, u.Fragment = false, ""
	if u.Scheme != base.Scheme || !strings.EqualFold(u.Hostname(), base.Hostname()) || u.PortNumber() != base.PortNumber() {
		return TreeEntry{}, false
	}
	rest, ok := strings.CutPrefix(u.Path, base.Path)
	if !ok || rest == "" {
		return TreeEntry{}, false
	}
	k := TreeEntry{Size: -1, URL: u}
	if seg, ok := strings.CutSuffix(rest, "/"); ok {
		k.Dir, rest = true, seg
	}
	if rest == "" || strings.Contains(rest, "/") {
		return TreeEntry{}, false // deeper: reached through its own folder's page
	}
	name, err := url.Unescape(rest)
	if err != nil {
		return TreeEntry{}, false
	}
	k.Name = name
	return k, true
}

func orUnknown(s string) string {
	if s == "" {
		return "of unknown type"
	}
	return s
}

// gopherSource mirrors a Gopher menu: items on the same host and port
// whose selector is the menu's selector plus one path element.
type gopherSource struct {
	top *url.URL
	sel string
}

func (s *gopherSource) root() TreeEntry {
	return TreeEntry{Dir: true, URL: s.top, Selector: s.sel, Size: -1}
}
func (s *gopherSource) conditional() bool { return false }

func (s *gopherSource) fileURL(rel string) (*url.URL, error) {
	return nil, fmt.Errorf("gopher menus have no links")
}

func (s *gopherSource) list(ctx context.Context, c *Client, d TreeEntry) ([]TreeEntry, error) {
	resp, err := fetchListing(ctx, c, d.URL, KindDirectory, "a menu")
	if err != nil {
		return nil, err
	}
	prefix := strings.TrimSuffix(d.Selector, "/") + "/"
	unhashed := unhash(prefix)
	var out []TreeEntry
	plus := false
	for _, e := range resp.Entries {
		switch e.Kind {
		case KindFile, KindDirectory:
		default:
			continue // info lines, searches, sessions: nothing to copy
		}
		if e.URL == "" || !strings.EqualFold(e.Host, s.top.Hostname()) || e.Port != s.top.PortNumber() {
			continue // another server
		}
		sel := strings.TrimSuffix(e.Selector, "/")
		name, ok := strings.CutPrefix(sel, prefix)
		if !ok && unhashed != prefix {
			name, ok = strings.CutPrefix(sel, unhashed)
		}
		if !ok || strings.HasPrefix(e.Type, "h") && strings.HasPrefix(e.Selector, "URL:") {
			continue // not below this menu
		}
		if u := unhash(name); u != name && shownAs(e.Name, u) {
			name = u
		}
		k := TreeEntry{Name: name, Size: -1, Selector: e.Selector, Dir: e.Kind == KindDirectory}
		if k.URL, err = url.Parse(e.URL); err != nil {
			continue
		}
		plus = plus || strings.HasSuffix(e.Type, "+")
		out = append(out, k)
	}
	if plus {
		s.modDates(ctx, c, d, out)
	}
	return out, nil
}

// unhash undoes the escapes gophernicus writes into selectors: '#' and
// three octal digits for a byte ("with#040space.txt" for "with space.txt",
// "percent#045sign.txt" for "percent%sign.txt"). The items of a folder so
// escaped have selectors below its unescaped path, and a file's local name
// is the unescaped one where the menu shows that name (shownAs): another
// server's "#040" is kept as it is.
func unhash(s string) string {
	if !strings.Contains(s, "#") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '#' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) && s[i+1] <= '3' {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return '0' <= c && c <= '7' }

// shownAs says whether a menu's display string shows name: the whole
// string, or as its first column (before a run of spaces and the date and
// size some servers add), cut short where a long name did not fit.
func shownAs(display, name string) bool {
	col, _, _ := strings.Cut(display, "  ")
	return col == name || len(col) >= 16 && strings.HasPrefix(name, col)
}

// modDates asks a Gopher+ server for the attributes of every item of a
// menu at once ("$") and takes each item's Mod-Date. Without them the
// items are fetched as plain Gopher items are.
func (s *gopherSource) modDates(ctx context.Context, c *Client, d TreeEntry, kids []TreeEntry) {
	u, err := gopher.WithPlus(d.URL, "$")
	if err != nil {
		return
	}
	resp, err := c.Fetch(ctx, u, 0)
	if err != nil {
		return
	}
	resp.Body.Close()
	bySel := map[string][]int{}
	for i, k := range kids {
		bySel[k.Selector] = append(bySel[k.Selector], i)
	}
	attrs := resp.Attributes
	for i := 0; i < len(attrs); {
		j := i + 1
		for j < len(attrs) && attrs[j].Item == attrs[i].Item {
			j++
		}
		if f := strings.Split(attrs[i].Item, "\t"); len(f) >= 2 {
			if t, ok := gopher.ModDate(attrs[i:j]); ok {
				for _, n := range bySel[f[1]] {
					kids[n].ModTime = t
				}
			}
		}
		i = j
	}
}

// newsSource mirrors a newsgroup: one file per article, named by its
// number in the group.
type newsSource struct{ top *url.URL }

func (s *newsSource) root() TreeEntry   { return TreeEntry{Dir: true, URL: s.top, Size: -1} }
func (s *newsSource) conditional() bool { return false }
func (s *newsSource) fileURL(rel string) (*url.URL, error) {
	return nil, fmt.Errorf("newsgroups have no links")
}

func (s *newsSource) list(ctx context.Context, c *Client, d TreeEntry) ([]TreeEntry, error) {
	resp, err := fetchListing(ctx, c, d.URL, KindArticleList, "a newsgroup")
	if err != nil {
		return nil, err
	}
	var out []TreeEntry
	for _, e := range resp.Entries {
		if e.Kind != KindFile || e.Number <= 0 || e.URL == "" {
			continue
		}
		u, err := url.Parse(e.URL)
		if err != nil {
			continue
		}
		out = append(out, TreeEntry{Name: strconv.FormatInt(e.Number, 10), URL: u, Size: e.Size, ModTime: e.ModTime, Article: true})
	}
	return out, nil
}

// waisSource views a WAIS search as one folder: a file per document hit,
// named by the file name in its docid (wais.SuggestedName).
type waisSource struct{ top *url.URL }

func (s *waisSource) root() TreeEntry   { return TreeEntry{Dir: true, URL: s.top, Size: -1} }
func (s *waisSource) conditional() bool { return false }
func (s *waisSource) fileURL(rel string) (*url.URL, error) {
	return nil, fmt.Errorf("WAIS searches have no links")
}

func (s *waisSource) list(ctx context.Context, c *Client, d TreeEntry) ([]TreeEntry, error) {
	resp, err := fetchListing(ctx, c, d.URL, KindDirectory, "a WAIS search")
	if err != nil {
		return nil, err
	}
	var out []TreeEntry
	for _, e := range resp.Entries {
		if e.Kind != KindFile || e.URL == "" {
			continue
		}
		u, err := url.Parse(e.URL)
		if err != nil {
			continue
		}
		out = append(out, TreeEntry{Name: c.suggestedName(u), URL: u, Size: e.Size, ModTime: e.ModTime})
	}
	return out, nil
}

// fetchListing fetches u, which must be a listing of kind (what names it
// in the error otherwise), and returns its entries in the response.
func fetchListing(ctx context.Context, c *Client, u *url.URL, kind Kind, what string) (*Response, error) {
	resp, err := c.Fetch(ctx, u, 0)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	if resp.Kind != kind {
		return nil, fmt.Errorf("%w: %s is not %s", ErrNotRetrievable, u.Redacted(), what)
	}
	return resp, nil
}
