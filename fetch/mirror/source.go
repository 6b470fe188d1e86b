package mirror

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"golang.org/x/net/html"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/protocols/gopher"
	"github.com/urlderef/deref/url"
)

// source lists the folders of one kind of remote tree.
type source interface {
	// root is the start folder.
	root() *dirNode
	// list returns the entries of a folder.
	list(ctx context.Context, c *fetch.Client, d *dirNode) ([]child, error)
	// fileURL is the URL of the file at rel below the start, for links
	// followed inside the tree.
	fileURL(rel string) (*url.URL, error)
	// conditional says whether fetching can ask "changed since?" (HTTP).
	conditional() bool
}

func newSource(u *url.URL) (source, error) {
	switch u.Scheme {
	case "ftp", "ftps", "file":
		return &listSource{top: dirURL(u)}, nil
	case "http", "https":
		v := dirURL(u)
		v.HasQuery, v.Query = false, ""
		return &webSource{listSource{top: v}}, nil
	case "gopher", "gophers":
		g, err := u.Gopher()
		if err != nil {
			return nil, fmt.Errorf("%w: %w", fetch.ErrBadURL, err)
		}
		if g.Type != '1' || g.HasSearch {
			return nil, fmt.Errorf("%w: a Gopher mirror starts at a menu (type 1), not type %q", fetch.ErrBadURL, g.Type)
		}
		return &gopherSource{top: u, sel: g.Selector}, nil
	case "news", "snews", "nntp", "nntps":
		return &newsSource{top: u}, nil
	}
	return nil, fmt.Errorf("%w: %s: cannot be mirrored", fetch.ErrUnsupportedScheme, u.Scheme)
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

// listSource mirrors FTP and file: folders from their listings.
type listSource struct{ top *url.URL }

func (s *listSource) root() *dirNode    { return &dirNode{u: s.top, depth: 1} }
func (s *listSource) conditional() bool { return false }

func (s *listSource) fileURL(rel string) (*url.URL, error) {
	segs := strings.Split(rel, "/")
	for i, seg := range segs {
		segs[i] = url.EscapeSegment(seg)
	}
	raw := s.top.String() + strings.Join(segs, "/")
	if s.top.Scheme == "ftp" || s.top.Scheme == "ftps" {
		raw += ";type=i"
	}
	return url.Parse(raw)
}

func (s *listSource) list(ctx context.Context, c *fetch.Client, d *dirNode) ([]child, error) {
	resp, err := fetchListing(ctx, c, d.u, fetch.KindDirectory, "a folder")
	if err != nil {
		return nil, err
	}
	out := make([]child, 0, len(resp.Entries))
	for _, e := range resp.Entries {
		k := child{name: e.Name, size: e.Size, mod: e.ModTime, link: e.Kind == fetch.KindLink, target: e.Target}
		switch {
		case e.URL == "" || e.Type == "unparsed":
			k.refuse = "listing line not understood"
		case e.Kind == fetch.KindDirectory:
			k.dir = true
		case e.Kind != fetch.KindFile && e.Kind != fetch.KindLink:
			continue
		}
		if e.URL != "" {
			raw := e.URL
			if !k.dir && (d.u.Scheme == "ftp" || d.u.Scheme == "ftps") {
				raw += ";type=i" // a mirror copies bytes: no newline conversion
			}
			if k.u, err = url.Parse(raw); err != nil && k.refuse == "" {
				k.refuse = "bad URL in the listing"
			}
		}
		out = append(out, k)
	}
	return out, nil
}

// webSource mirrors HTTP index pages: the links of each page to the
// files and folders directly below it, on the same host.
type webSource struct{ listSource }

func (s *webSource) conditional() bool { return true }

func (s *webSource) list(ctx context.Context, c *fetch.Client, d *dirNode) ([]child, error) {
	resp, err := c.Fetch(ctx, d.u, 0)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.MediaType != "text/html" && resp.MediaType != "application/xhtml+xml" {
		return nil, fmt.Errorf("%w: %s is %s, not an HTML index page", fetch.ErrNotRetrievable, d.u.Redacted(), orUnknown(resp.MediaType))
	}
	hrefs, err := links(resp.Body)
	if err != nil {
		return nil, err
	}
	var out []child
	seen := map[string]bool{}
	for _, h := range hrefs {
		k, ok := s.below(d.u, h)
		if !ok || seen[k.name] {
			continue
		}
		seen[k.name] = true
		out = append(out, k)
	}
	return out, nil
}

// below resolves a link and keeps it when it names a file or folder
// directly below the page's folder on the same server.
func (s *webSource) below(base *url.URL, href string) (child, bool) {
	ref, err := url.ParseReference(url.Canonicalize(strings.TrimSpace(href)))
	if err != nil || ref.HasQuery {
		return child{}, false
	}
	u := base.ResolveReference(ref)
	u.HasFragment, u.Fragment = false, ""
	if u.Scheme != base.Scheme || !strings.EqualFold(u.Hostname(), base.Hostname()) || u.PortNumber() != base.PortNumber() {
		return child{}, false
	}
	rest, ok := strings.CutPrefix(u.Path, base.Path)
	if !ok || rest == "" {
		return child{}, false
	}
	k := child{size: -1, u: u}
	if seg, ok := strings.CutSuffix(rest, "/"); ok {
		k.dir, rest = true, seg
	}
	if rest == "" || strings.Contains(rest, "/") {
		return child{}, false // deeper: reached through its own folder's page
	}
	name, err := url.Unescape(rest)
	if err != nil {
		return child{}, false
	}
	k.name = name
	return k, true
}

// links returns the href of every <a> element, reading the page as a
// stream of tokens.
func links(r io.Reader) ([]string, error) {
	z := html.NewTokenizer(r)
	z.SetMaxBuf(1 << 20)
	var out []string
	for {
		switch z.Next() {
		case html.ErrorToken:
			if z.Err() == io.EOF {
				return out, nil
			}
			return nil, z.Err()
		case html.StartTagToken, html.SelfClosingTagToken:
			name, attr := z.TagName()
			if string(name) != "a" || !attr {
				continue
			}
			for {
				k, v, more := z.TagAttr()
				if string(k) == "href" {
					out = append(out, string(v))
				}
				if !more {
					break
				}
			}
		}
	}
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

func (s *gopherSource) root() *dirNode    { return &dirNode{u: s.top, depth: 1, sel: s.sel} }
func (s *gopherSource) conditional() bool { return false }

func (s *gopherSource) fileURL(rel string) (*url.URL, error) {
	return nil, fmt.Errorf("gopher menus have no links")
}

func (s *gopherSource) list(ctx context.Context, c *fetch.Client, d *dirNode) ([]child, error) {
	resp, err := fetchListing(ctx, c, d.u, fetch.KindDirectory, "a menu")
	if err != nil {
		return nil, err
	}
	prefix := strings.TrimSuffix(d.sel, "/") + "/"
	unhashed := unhash(prefix)
	var out []child
	plus := false
	for _, e := range resp.Entries {
		switch e.Kind {
		case fetch.KindFile, fetch.KindDirectory:
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
		k := child{name: name, size: -1, sel: e.Selector, dir: e.Kind == fetch.KindDirectory}
		if k.u, err = url.Parse(e.URL); err != nil {
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
func (s *gopherSource) modDates(ctx context.Context, c *fetch.Client, d *dirNode, kids []child) {
	u, err := gopher.WithPlus(d.u, "$")
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
		bySel[k.sel] = append(bySel[k.sel], i)
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
					kids[n].mod = t
				}
			}
		}
		i = j
	}
}

// newsSource mirrors a newsgroup: one file per article, named by its
// number in the group.
type newsSource struct{ top *url.URL }

func (s *newsSource) root() *dirNode    { return &dirNode{u: s.top, depth: 1} }
func (s *newsSource) conditional() bool { return false }
func (s *newsSource) fileURL(rel string) (*url.URL, error) {
	return nil, fmt.Errorf("newsgroups have no links")
}

func (s *newsSource) list(ctx context.Context, c *fetch.Client, d *dirNode) ([]child, error) {
	resp, err := fetchListing(ctx, c, d.u, fetch.KindArticleList, "a newsgroup")
	if err != nil {
		return nil, err
	}
	var out []child
	for _, e := range resp.Entries {
		if e.Kind != fetch.KindFile || e.Number <= 0 || e.URL == "" {
			continue
		}
		u, err := url.Parse(e.URL)
		if err != nil {
			continue
		}
		out = append(out, child{name: strconv.FormatInt(e.Number, 10), u: u, size: -1, mod: e.ModTime, article: true})
	}
	return out, nil
}

// fetchListing fetches u, which must be a listing of kind (what names it
// in the error otherwise), and returns its entries in the response.
func fetchListing(ctx context.Context, c *fetch.Client, u *url.URL, kind fetch.Kind, what string) (*fetch.Response, error) {
	resp, err := c.Fetch(ctx, u, 0)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	if resp.Kind != kind {
		return nil, fmt.Errorf("%w: %s is not %s", fetch.ErrNotRetrievable, u.Redacted(), what)
	}
	return resp, nil
}
