package gateway

import (
	"bufio"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/protocols/gemini"
	"github.com/urlderef/deref/protocols/gopher"
	"github.com/urlderef/deref/url"
)

// styleSheet is the gateway's one stylesheet: readable on a phone, dark
// when the reader's system is.
const styleSheet = `:root { color-scheme: light dark; --fg: #1b1b1b; --bg: #fdfdfb; --dim: #666; --link: #0645ad; --rule: #ddd; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6e6e6; --bg: #161616; --dim: #999; --link: #8ab4f8; --rule: #333; } }
body { margin: 0 auto; max-width: 60rem; padding: 0.5rem 1rem 2rem; font: 16px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--link); }
header { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: center; border-bottom: 1px solid var(--rule); padding-bottom: 0.5rem; }
header .url { flex: 1 1 20rem; font: 14px ui-monospace, monospace; padding: 0.25rem; color: var(--fg); background: var(--bg); border: 1px solid var(--rule); }
pre, .menu { font: 14px/1.35 ui-monospace, monospace; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; }
.menu { list-style: none; padding: 0; }
.menu li { white-space: pre-wrap; overflow-wrap: anywhere; }
.kind { display: inline-block; min-width: 4.5em; color: var(--dim); }
.quote { color: var(--dim); }
table { border-collapse: collapse; width: 100%; }
td, th { text-align: left; padding: 0.15rem 0.5rem; border-bottom: 1px solid var(--rule); vertical-align: top; }
td.n { text-align: right; white-space: nowrap; }
form.search { margin: 1rem 0; display: flex; gap: 0.5rem; }
form.search input[type=text] { flex: 1; font-size: 16px; }
.error { border-left: 4px solid #c33; padding-left: 0.75rem; }
.replay { background: var(--rule); padding: 0.25rem 0.5rem; font-size: 14px; }
dl dt { font-weight: bold; margin-top: 0.5rem; }
dl dd { white-space: pre-wrap; margin-left: 1rem; font-family: ui-monospace, monospace; }
`

// pages are the gateway's page templates, parsed at their first use, so
// that a program that links the gateway and never serves (deref URL)
// does not parse them at start.
var pages = sync.OnceValue(func() *template.Template { return template.Must(template.New("").Parse(pageTemplates)) })

// pageTemplates is the text of pages.
const pageTemplates = `
{{define "head"}}<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title><link rel="stylesheet" href="{{.Base}}/style.css"></head>
<body><header><a href="{{.Base}}/">deref</a>{{if .URL}} <input class="url" readonly value="{{.URL}}" aria-label="the URL shown">
<nav>{{if .Raw}}<a href="{{.Raw}}">raw</a> · <a href="{{.Download}}">download</a>{{end}}{{if .Parent}} · <a href="{{.Parent}}">up</a>{{end}}</nav>{{end}}</header>
{{if .Captured}}<p class="replay">Archived {{.Captured}} · {{if .First}}<a rel="first" href="{{.First}}">first capture</a> · {{end}}{{if .Prev}}<a rel="prev" href="{{.Prev}}">previous capture</a> · {{end}}{{if .Next}}<a rel="next" href="{{.Next}}">next capture</a> · {{end}}{{if .Last}}<a rel="last" href="{{.Last}}">last capture</a> · {{end}}<a class="live" href="{{.Live}}">live</a> · <a href="{{.Calendar}}">every capture</a></p>{{end}}
<main><h1>{{.Title}}</h1>
{{end}}
{{define "foot"}}</main></body></html>
{{end}}
{{define "index"}}{{template "head" .}}<p>{{.Message}}</p>
<form class="search" action="{{.Base}}/" method="get"><input type="text" name="url" aria-label="URL" placeholder="URL" autofocus><button>Go</button></form>
{{template "foot"}}{{end}}
{{define "error"}}{{template "head" .}}<p class="error">{{.Message}}</p>
{{if .Query}}<form class="search" action="{{.Base}}/" method="get"><input type="text" name="url" aria-label="URL" value="{{.Query}}" autofocus><button>Go</button></form>
{{end}}{{template "foot"}}{{end}}
{{define "notarchived"}}{{template "head" .}}<p class="error">{{.Message}} was not archived in the collection {{.Coll}}.</p>
<p>The live URL: <a class="live" href="{{.Live}}">{{.Message}}</a></p>{{template "foot"}}{{end}}
{{define "input"}}{{template "head" .Head}}<form class="search" method="get"><label>{{.Prompt}} <input type="{{if .Sensitive}}password{{else}}text{{end}}" name="input" autofocus></label> <button>Send</button></form>
{{template "foot"}}{{end}}
{{define "search"}}{{template "head" .}}<form class="search" method="get"><input type="text" name="q" aria-label="words to search for" value="{{.Query}}" autofocus><button>Search</button></form>
{{template "foot"}}{{end}}
{{define "item"}}{{if .Info}}<li class="i">{{if .Name}}{{.Name}}{{else}}&#160;{{end}}</li>
{{else if .Link}}<li><span class="kind">{{.Kind}}</span> <a href="{{.Link}}">{{.Name}}</a>{{if .Plus}} <a href="{{.Plus}}" title="Gopher+ attributes and views">+</a>{{end}}</li>
{{else}}<li><span class="kind">{{.Kind}}</span> {{.Name}}</li>
{{end}}{{end}}
{{define "listing"}}<table><thead><tr><th>Name</th><th>Size</th><th>Modified</th></tr></thead><tbody>
{{range .}}<tr><td>{{if .Link}}<a href="{{.Link}}">{{.Name}}</a>{{else}}{{.Name}}{{end}}{{if .Target}} → {{.Target}}{{end}}</td><td class="n">{{.Size}}</td><td>{{.Time}}</td></tr>
{{end}}</tbody></table>
{{end}}
{{define "overview"}}<table><thead><tr><th>#</th><th>Subject</th><th>From</th><th>Date</th></tr></thead><tbody>
{{range .}}<tr><td class="n">{{.Number}}</td><td>{{if .Link}}<a href="{{.Link}}">{{.Name}}</a>{{else}}{{.Name}}{{end}}</td><td>{{.Author}}</td><td>{{.Time}}</td></tr>
{{end}}</tbody></table>
{{end}}
{{define "captures"}}{{if .Months}}<table class="calendar"><thead><tr><th>Month</th><th>Captures</th></tr></thead><tbody>
{{range .Months}}<tr><td><a href="#{{.Anchor}}">{{.Name}}</a></td><td class="n">{{.Count}}</td></tr>
{{end}}</tbody></table>
{{end}}<table><thead><tr><th>Captured</th><th>Status or kind</th><th>Media type</th><th>Archived</th></tr></thead><tbody>
{{range .Rows}}<tr{{if and $.Months .First}} id="{{.Month}}"{{end}}><td><a href="{{.Link}}">{{.Time}}</a></td><td>{{.Status}}</td><td>{{.Mime}}</td><td class="n">{{.Bytes}}</td></tr>
{{end}}</tbody></table>
{{end}}
{{define "collections"}}<ul class="collections">
{{range .}}<li><a href="{{.Link}}">{{.Name}}</a></li>
{{end}}</ul>
{{end}}
{{define "collection"}}{{if .Start}}<h2>Start here</h2><table><thead><tr><th>Page</th><th>URL</th><th>Captured</th></tr></thead><tbody>
{{range .Start}}<tr><td><a href="{{.Link}}">{{if .Description}}{{.Description}}{{else}}{{.Name}}{{end}}</a></td><td>{{.Name}}</td><td>{{.Time}}</td></tr>
{{end}}</tbody></table>
{{end}}<form class="search" action="{{.Action}}" method="get"><input type="text" name="url" aria-label="a URL, or a prefix ending in *" placeholder="a URL, or gopher://host/1/* for those under it" value="{{if .Prefix}}{{.Prefix}}*{{end}}"><button>Find</button></form>
<h2>{{if .Prefix}}URLs under {{.Prefix}}{{else}}All URLs{{end}}</h2>
{{if .Rows}}<table><thead><tr><th>URL</th><th>Media type</th><th>Captures</th><th>First</th><th>Last</th></tr></thead><tbody>
{{range .Rows}}<tr><td><a href="{{.Link}}">{{.URL}}</a></td><td>{{.Mime}}</td><td class="n">{{.Captures}}</td><td><a href="{{.FirstLink}}">{{.First}}</a></td><td><a href="{{.LastLink}}">{{.Last}}</a></td></tr>
{{end}}</tbody></table>{{else}}<p>None.</p>{{end}}
<nav>{{if .Pager.Prev}}<a rel="prev" href="{{.Pager.Prev}}">previous {{len .Rows}}</a>{{end}}{{if and .Pager.Prev .Pager.Next}} · {{end}}{{if .Pager.Next}}<a rel="next" href="{{.Pager.Next}}">next</a>{{end}}</nav>
{{end}}
{{define "groups"}}<table><thead><tr><th>Group</th><th>Articles</th><th>Description</th></tr></thead><tbody>
{{range .}}<tr><td>{{if .Link}}<a href="{{.Link}}">{{.Name}}</a>{{else}}{{.Name}}{{end}}</td><td class="n">{{.Number}}</td><td>{{.Description}}</td></tr>
{{end}}</tbody></table>
{{end}}
{{define "hits"}}<ol>
{{range .}}<li>{{if .Link}}<a href="{{.Link}}">{{.Name}}</a>{{else}}{{.Name}}{{end}} <small>score {{.Score}}{{if .Size}}, {{.Size}}{{end}}</small></li>
{{end}}</ol>
{{end}}
{{define "gemtext"}}<div class="gemtext">
{{range .}}{{if eq .Kind "h1"}}<h2>{{.Text}}</h2>
{{else if eq .Kind "h2"}}<h3>{{.Text}}</h3>
{{else if eq .Kind "h3"}}<h4>{{.Text}}</h4>
{{else if eq .Kind "item"}}<ul><li>{{.Text}}</li></ul>
{{else if eq .Kind "quote"}}<blockquote>{{.Text}}</blockquote>
{{else if eq .Kind "pre"}}<pre{{if .Alt}} title="{{.Alt}}"{{end}}>{{.Text}}</pre>
{{else if eq .Kind "link"}}<p>⇒ {{if .Link}}<a href="{{.Link}}">{{.Text}}</a>{{else}}{{.Text}}{{end}}</p>
{{else if eq .Kind "prompt"}}<form method="get" action="{{.Link}}"><label>{{.Text}} <input type="text" name="q"></label> <button>Send</button></form>
{{else if .Text}}<p>{{.Text}}</p>
{{else}}<br>
{{end}}{{end}}</div>
{{end}}
{{define "pager"}}<nav>{{if .Prev}}<a href="{{.Prev}}">newer</a>{{end}}{{if and .Prev .Next}} · {{end}}{{if .Next}}<a href="{{.Next}}">older</a>{{end}}</nav>
{{end}}
{{define "attributes"}}<dl>{{range .}}<dt>{{.Name}}</dt>{{if .Value}}<dd>{{.Value}}</dd>{{end}}{{range .Views}}<dd>{{if .Link}}<a href="{{.Link}}">{{.Name}}</a>{{else}}{{.Name}}{{end}}</dd>{{end}}{{end}}</dl>
{{end}}
{{define "ask"}}<form method="get"><input type="hidden" name="answered" value="1">
{{range .}}{{if eq .Kind "Note"}}<p>{{.Prompt}}</p>
{{else if or (eq .Kind "Choose") (eq .Kind "Select")}}<p><label>{{.Prompt}} <select name="{{.Name}}">{{range .Choices}}<option>{{.}}</option>{{end}}</select></label></p>
{{else}}<p><label>{{.Prompt}} <input type="{{if eq .Kind "AskP"}}password{{else}}text{{end}}" name="{{.Name}}" value="{{.Default}}"></label></p>
{{end}}{{end}}<p><button>Send</button></p></form>
{{end}}
`

// head is what every page's top says.
type head struct {
	Base                  string // Options.BasePath: where the gateway's own paths begin
	Title, URL            string
	Raw, Download, Parent string
	Message, Query        string
	// A replayed page's: when the capture was made, the live URL and
	// the capture's calendar.
	Captured, Calendar string
	Live               template.URL
	// The mementos around it, as its Link header names them: the first
	// and the last of the URL's, those just before and after.
	First, Prev, Next, Last string
}

// headFor is the head of the page of u.
func headFor(u *url.URL, title string, r *http.Request) head {
	if v := replayOf(r); v != nil {
		return v.head(u, title)
	}
	p := basePath(r) + pagePath(tableOf(r), u)
	if proxied(r) {
		p = ownBase(r) + pagePath(tableOf(r), u)
	}
	sep := "?"
	if strings.Contains(p, "?") {
		sep = "&"
	}
	return head{Title: title, URL: u.Redacted(), Raw: p + sep + "raw=1", Download: p + sep + "download=1"}
}

// index is the page with a field for any URL.
func (g *gateway) index(w *logWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	msg := "Any URL of these schemes: " + strings.Join(pagedNames(tableOf(r)), ", ") + "."
	if len(g.o.Allow) > 0 {
		msg = "URLs of " + strings.Join(g.o.Allow, ", ") + " only, of these schemes: " + strings.Join(pagedNames(tableOf(r)), ", ") + "."
	}
	pages().ExecuteTemplate(w, "index", head{Base: w.base, Title: "deref: every scheme in a browser", Message: msg})
}

// redirectToPage sends the reader from /?url=URL to the page of URL.
func (g *gateway) redirectToPage(w *logWriter, r *http.Request, raw string) {
	u, err := url.Parse(strings.TrimSpace(url.Canonicalize(raw)))
	if err != nil {
		g.failForm(w, r, http.StatusBadRequest, url.RedactString(err.Error()), raw)
		return
	}
	p := pagePath(g.c, u)
	if p != "" {
		p = basePath(r) + p
	}
	if p == "" {
		msg := u.Scheme + ": URLs have no page here"
		if _, known := g.c.Scheme(u.Scheme); !known {
			if near := fetch.NearScheme(u.Scheme, pagedNames(g.c)); near != "" {
				msg += " (did you mean " + near + ":?)"
			}
		}
		g.failForm(w, r, http.StatusBadRequest, msg, raw)
		return
	}
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.HasPrefix(p, "/\\") {
		// Never off the gateway: a path a browser would read as another
		// server's ("//host", "/\\host").
		g.failForm(w, r, http.StatusBadRequest, "no page here for that URL", raw)
		return
	}
	redirect(w, p)
}

// failForm is fail for a URL typed into the form: the page holds the
// form again, with the URL to mend (its password left out).
func (g *gateway) failForm(w *logWriter, r *http.Request, status int, msg, typed string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	pages().ExecuteTemplate(w, "error", head{Base: w.base, Title: http.StatusText(status), Message: protocols.Printable(msg), Query: url.RedactString(typed)})
}

// fail answers with an error: a page, or for a proxy request plain text.
func (g *gateway) fail(w *logWriter, r *http.Request, status int, msg string) {
	msg = protocols.Printable(msg)
	w.Header().Del("Content-Disposition")
	w.Header().Del("Content-Length")
	if r.URL.IsAbs() {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(status)
		io.WriteString(w, msg+"\n")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	pages().ExecuteTemplate(w, "error", head{Base: w.base, Title: http.StatusText(status), Message: msg})
}

// page answers for the page of u: a listing, a search form, a text as
// HTML; anything else as it is.
func (g *gateway) page(w *logWriter, r *http.Request, u *url.URL) {
	q := r.URL.Query()
	sc, _ := g.c.Scheme(u.Scheme)
	if sc.Local {
		g.file(w, r, u)
		return
	}
	if q.Get("raw") != "" || q.Get("download") != "" {
		g.raw(w, r, u, q.Get("download") != "")
		return
	}
	if in, ok := q["input"]; ok && len(in) == 1 && u.HasQuery && strings.HasPrefix(u.Query, "input=") {
		// The answer to a server's question (inputForm): the URL's query.
		v := *u
		v.Query = url.EscapeQuery(in[0])
		redirect(w, pageOf(r, &v))
		return
	}
	switch sc.Tree {
	case protocols.TreeMenu: // Gopher's pages
		gp, err := u.Gopher()
		if err != nil {
			g.fail(w, r, http.StatusBadRequest, err.Error())
			return
		}
		switch {
		case q.Get("attributes") != "":
			g.gopherAttributes(w, r, u)
		case q.Get("ask") != "":
			g.askForm(w, r, u)
		case q.Get("answered") != "":
			g.answer(w, r, u, gp)
		case gp.Type == '7' && !gp.HasSearch && q.Get("q") == "":
			g.searchForm(w, r, u, "Search: "+gp.Selector)
		case gp.Type == '7' && q.Get("q") != "":
			// The search's own URL, whose page, raw and download links
			// and URL box then all carry the words.
			v := *u
			v.Path = "/7" + url.EscapeGopher(gp.Selector) + "%09" + url.EscapeGopher(q.Get("q"))
			redirect(w, pageOf(r, &v))
		case gp.Type == '1' || gp.Type == '7':
			g.gopherMenu(w, r, u, gp, gp.Search, gp.HasSearch)
		case gp.Type == '0':
			g.text(w, r, u, "", false)
		default:
			g.raw(w, r, u, false)
		}
	case protocols.TreeSearch: // WAIS's
		wp, err := u.WAIS()
		if err != nil {
			g.fail(w, r, http.StatusBadRequest, err.Error())
			return
		}
		switch {
		case !wp.IsDocument() && !wp.HasSearch && q.Get("q") == "":
			g.searchForm(w, r, u, "Search the WAIS database "+wp.Database)
		case !wp.IsDocument() && q.Get("q") != "":
			v := *u
			v.HasQuery, v.Query = true, url.EscapeQuery(q.Get("q"))
			redirect(w, pageOf(r, &v))
		default:
			g.object(w, r, u)
		}
	default:
		g.object(w, r, u)
	}
}

// searchForm is the page of a search not yet asked.
func (g *gateway) searchForm(w *logWriter, r *http.Request, u *url.URL, title string) {
	if err := g.check(u); err != nil {
		g.fetchFailed(w, r, u, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	h := headFor(u, title, r)
	h.Raw, h.Download, h.Base = "", "", w.base
	pages().ExecuteTemplate(w, "search", h)
}

// item is one line of a page's list.
type item struct {
	Kind, Name, Link, Plus string
	Info                   bool
	Size, Time, Target     string
	Number                 int64
	Author, Description    string
	Score                  int64
}

// link is where a page sends the reader for a URL: its page here, the
// URL itself for the web and the schemes that open programs, nowhere for
// anything else (javascript:, data:).
func link(r *http.Request, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	if p := pageOf(r, u); p != "" {
		return p
	}
	if tableOf(r).Linked(u.Scheme) {
		return u.String()
	}
	return ""
}

// startPage writes a page's head and makes the rest stream.
func startPage(w *logWriter, h head) {
	h.Base = w.base
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	pages().ExecuteTemplate(w, "head", h)
	w.Flush()
}

func endPage(w *logWriter) { pages().ExecuteTemplate(w, "foot", nil) }

// gopherMenu renders a menu (or a search's result) as it arrives: it is
// fetched as a text item would be, line by line, so that a menu of
// 50,000 lines begins to show at once.
func (g *gateway) gopherMenu(w *logWriter, r *http.Request, u *url.URL, gp *url.GopherPath, search string, hasSearch bool) {
	raw := u.Scheme + "://" + u.Site() + "/0" + url.EscapeGopher(gp.Selector)
	if hasSearch {
		raw += "%09" + url.EscapeGopher(search)
	}
	tu, err := url.Parse(raw)
	if err != nil {
		g.fail(w, r, http.StatusBadRequest, err.Error())
		return
	}
	resp, done := g.open(w, r, tu, u)
	if resp == nil {
		return
	}
	defer done()
	title := "Menu " + gp.Selector + " on " + u.Site()
	if gp.Selector == "" || gp.Selector == "/" {
		title = "The root menu of " + u.Site()
	}
	if hasSearch {
		title = "Results for " + search
	}
	h := headFor(u, title, r)
	startPage(w, h)
	io.WriteString(w, "<ul class=\"menu\">\n")
	br := bufio.NewReaderSize(io.LimitReader(resp.Body, g.o.MaxPage), 64<<10)
	lines := 0
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			for _, e := range gopher.ParseMenu(decodeText(line)) {
				pages().ExecuteTemplate(w, "item", g.gopherItem(r, e))
			}
			if lines++; lines%256 == 0 {
				w.Flush()
			}
		}
		if err != nil {
			break
		}
	}
	io.WriteString(w, "</ul>\n")
	endPage(w)
}

// gopherItem is a menu entry as a page shows it.
func (g *gateway) gopherItem(r *http.Request, e protocols.Entry) item {
	it := item{Name: protocols.Printable(e.Name), Info: e.Kind == protocols.KindInfo}
	if e.Type != "" {
		it.Kind = gopher.TypeWord(e.Type[0])
		if it.Kind == "" {
			it.Kind = "type " + protocols.Printable(e.Type[:1])
		}
	}
	if e.URL != "" {
		it.Link = link(r, e.URL)
		// Gopher+ attributes and forms are asked of an item of a scheme
		// whose folders are menus.
		eu, _ := url.Parse(e.URL)
		gopherLink := it.Link != "" && eu != nil && g.menuScheme(eu.Scheme)
		switch {
		case strings.HasSuffix(e.Type, "?") && gopherLink: // a Gopher+ form
			it.Plus = it.Link + "?attributes=1"
			it.Link += "?ask=1"
		case strings.HasSuffix(e.Type, "+") && gopherLink:
			it.Plus = it.Link + "?attributes=1"
			if !strings.ContainsRune("0137hi8T2", rune(e.Type[0])) && replayOf(r) == nil {
				// An object sent as it is (not a page made of it: a text,
				// a menu): its length stated, it goes with Content-Length.
				it.Link += "?view=default"
			}
		}
	}
	return it
}

// tree is how the table says u's scheme lists its folders.
func (g *gateway) tree(u *url.URL) protocols.TreeKind {
	sc, _ := g.c.Scheme(u.Scheme)
	return sc.Tree
}

// menuScheme says whether the scheme's folders are menus (Gopher's).
func (g *gateway) menuScheme(name string) bool {
	sc, _ := g.c.Scheme(name)
	return sc.Tree == protocols.TreeMenu
}

// gopherAttributes is the page of a Gopher+ item's attributes (its
// views, its administrator, its abstract), asked of the server with "!".
func (g *gateway) gopherAttributes(w *logWriter, r *http.Request, u *url.URL) {
	a, err := gopher.WithPlus(u, "!")
	if err != nil {
		g.fail(w, r, http.StatusBadRequest, err.Error())
		return
	}
	resp, done := g.open(w, r, a, u)
	if resp == nil {
		return
	}
	defer done()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, g.o.MaxPage))
	type view struct{ Name, Link string }
	type attr struct {
		Name, Value string
		Views       []view
	}
	var out []attr
	for _, at := range gopher.ParseAttributes(decodeText(string(b))) {
		a := attr{Name: protocols.Printable(at.Name), Value: printableText(strings.TrimSpace(at.Value + "\n" + strings.Join(at.Lines, "\n")))}
		if at.Name == "VIEWS" {
			// Each view once, a link to the item in it: the Gopher+
			// string "+" and the view's type (RFC 1738 §3.4.9's
			// gopher+_string). A replay holds the item as it was
			// fetched, in its first view: that one leads to it, the
			// others are named.
			a.Value = printableText(strings.TrimSpace(at.Value))
			for i, l := range at.Lines {
				name, _, _ := strings.Cut(strings.TrimSpace(l), ":")
				if strings.TrimSpace(name) == "" {
					continue
				}
				vw := view{Name: protocols.Printable(strings.TrimSpace(l))}
				if v, err := gopher.WithPlus(u, "+"+strings.TrimSpace(name)); err == nil && replayOf(r) == nil {
					vw.Link = rawOf(r, v)
				} else if i == 0 && replayOf(r) != nil {
					vw.Link = rawOf(r, plainItem(u))
				}
				a.Views = append(a.Views, vw)
			}
		}
		out = append(out, a)
	}
	startPage(w, headFor(u, "Gopher+ attributes", r))
	pages().ExecuteTemplate(w, "attributes", out)
	endPage(w)
}

// plainItem is a Gopher URL without its search and Gopher+ strings: the
// item as a menu names it, as an archive holds it.
func plainItem(u *url.URL) *url.URL {
	g, err := u.Gopher()
	if err != nil {
		return u
	}
	v := *u
	v.Path = "/" + url.EscapeGopher(string(g.Type)+g.Selector)
	if w, err := url.Parse(v.String()); err == nil {
		return w
	}
	return u
}

// askForm is the page of a Gopher+ item's +ASK form, as an HTML form.
func (g *gateway) askForm(w *logWriter, r *http.Request, u *url.URL) {
	qs, err := g.questions(r, u)
	if err != nil {
		g.fetchFailed(w, r, u, err)
		return
	}
	type field struct {
		Name, Prompt, Kind, Default string
		Choices                     []string
	}
	var fields []field
	n := 0
	for _, q := range qs {
		f := field{Prompt: protocols.Printable(q.Prompt), Kind: q.Kind}
		if q.NeedsAnswer() {
			f.Name = "a" + strconv.Itoa(n)
			n++
		}
		switch q.Kind {
		case "Choose", "Select":
			f.Choices = q.Choices
		default:
			if len(q.Choices) > 0 {
				f.Default = q.Choices[0]
			}
		}
		fields = append(fields, f)
	}
	h := headFor(u, "Form", r)
	startPage(w, h)
	pages().ExecuteTemplate(w, "ask", fields)
	endPage(w)
}

// questions fetches an item's +ASK form.
func (g *gateway) questions(r *http.Request, u *url.URL) ([]gopher.Question, error) {
	a, err := gopher.WithPlus(u, "!+ASK")
	if err != nil {
		return nil, err
	}
	resp, release, err := g.fetch(r, a, 0)
	if err != nil {
		return nil, err
	}
	defer release()
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	qs := gopher.ParseAsk(gopher.ParseAttributes(decodeText(string(b))))
	if len(qs) == 0 {
		return nil, fmt.Errorf("%w: the item has no +ASK form", fetch.ErrProtocol)
	}
	return qs, nil
}

// answer sends a filled +ASK form as RFC 1738 §3.4.9 says (the Gopher+
// string "+<TAB>1", then the answers as a data block) and shows the reply.
func (g *gateway) answer(w *logWriter, r *http.Request, u *url.URL, gp *url.GopherPath) {
	qs, err := g.questions(r, u)
	if err != nil {
		g.fetchFailed(w, r, u, err)
		return
	}
	var answers []string
	for i := range qs {
		answers = append(answers, r.URL.Query().Get("a"+strconv.Itoa(i)))
	}
	fp, err := gopher.FilledForm(gp, qs, answers)
	if err != nil {
		g.fail(w, r, http.StatusBadRequest, err.Error())
		return
	}
	filled, err := url.Parse(u.Scheme + "://" + u.Site() + "/" + url.EscapeGopher(string(fp.Type)+fp.Selector) + "%09%09" + url.EscapeGopher(fp.Plus))
	if err != nil {
		g.fail(w, r, http.StatusBadRequest, err.Error())
		return
	}
	resp, done := g.open(w, r, filled, u)
	if resp == nil {
		return
	}
	defer done()
	switch {
	case resp.Kind == fetch.KindDirectory:
		startPage(w, headFor(u, "Reply", r))
		io.WriteString(w, "<ul class=\"menu\">\n")
		for _, e := range resp.Entries {
			pages().ExecuteTemplate(w, "item", g.gopherItem(r, e))
		}
		io.WriteString(w, "</ul>\n")
		endPage(w)
	case strings.HasPrefix(resp.MediaType, "text/") || resp.MediaType == "":
		g.textFrom(w, r, u, resp, "Reply", false)
	default:
		g.send(w, r, resp, false, nil)
	}
}

// text renders a text item (or an article) as a page, in UTF-8 when it
// is, else read as Latin-1; in an article, quoted lines are set apart.
func (g *gateway) text(w *logWriter, r *http.Request, u *url.URL, title string, article bool) {
	resp, done := g.open(w, r, u, u)
	if resp == nil {
		return
	}
	defer done()
	g.textFrom(w, r, u, resp, title, article)
}

func (g *gateway) textFrom(w *logWriter, r *http.Request, u *url.URL, resp *fetch.Response, title string, article bool) {
	if title == "" {
		title = resp.Name
		if title == "" {
			title = u.Redacted()
		}
	}
	br := bufio.NewReaderSize(io.LimitReader(resp.Body, g.o.MaxPage), 64<<10)
	first, _ := br.Peek(64 << 10)
	latin1 := !validUTF8Prefix(first)
	h := headFor(u, title, r)
	if article {
		// An article is titled by its Subject, and leads back to its
		// group: the folder above it, or the first group it names.
		subject, groups := articleFields(first)
		if subject != "" {
			h.Title = protocols.Printable(subject)
		}
		if p := strings.TrimSuffix(u.Path, "/"); strings.LastIndex(p, "/") > 0 {
			v := *u
			v.Path = p[:strings.LastIndex(p, "/")] // the group itself (nntp://host/group/7's)
			h.Parent = pageOf(r, &v)
		} else if groups != "" { // a message-id names no group: the first it was posted to
			group, _, _ := strings.Cut(groups, ",")
			h.Parent = link(r, u.Scheme+":"+strings.TrimSpace(group))
		}
	}
	startPage(w, h)
	io.WriteString(w, "<pre>")
	inBody := !article
	lines := 0
	for {
		line, err := br.ReadString('\n')
		if l, ok := strings.CutSuffix(line, "\r\n"); ok {
			line = l + "\n" // a news article's CRLFs, as it came: shown as lines
		}
		if line != "" {
			if latin1 {
				line = fromLatin1(line)
			} else {
				line = strings.ToValidUTF8(line, "\uFFFD")
			}
			line = printableText(line)
			esc := template.HTMLEscapeString(line)
			switch {
			case !inBody && strings.TrimRight(line, "\r\n") == "":
				inBody = true
				io.WriteString(w, esc)
			case !inBody:
				if k, v, ok := strings.Cut(line, ":"); ok && article && messageIDFields[strings.ToLower(k)] {
					fmt.Fprintf(w, "<b>%s</b>:%s", template.HTMLEscapeString(k), linkIDs(r, u, v))
				} else if ok {
					fmt.Fprintf(w, "<b>%s</b>:%s", template.HTMLEscapeString(k), template.HTMLEscapeString(v))
				} else {
					io.WriteString(w, esc)
				}
			case article && strings.HasPrefix(line, ">"):
				io.WriteString(w, `<span class="quote">`+strings.TrimRight(esc, "\n")+"</span>\n")
			default:
				io.WriteString(w, esc)
			}
			if lines++; lines%256 == 0 {
				w.Flush()
			}
		}
		if err != nil {
			break
		}
	}
	io.WriteString(w, "</pre>\n")
	endPage(w)
}

// articleFields are the Subject and Newsgroups of an article's head,
// read from its first bytes.
func articleFields(b []byte) (subject, groups string) {
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimRight(l, "\r")
		if l == "" {
			break
		}
		k, v, ok := strings.Cut(l, ":")
		switch {
		case !ok:
		case strings.EqualFold(k, "subject"):
			subject = strings.TrimSpace(v)
		case strings.EqualFold(k, "newsgroups"):
			groups = strings.TrimSpace(v)
		}
	}
	return subject, groups
}

// validUTF8Prefix says whether b is UTF-8 but for a rune cut at its end.
// messageIDFields are an article's header fields that name articles by
// message-id: each is linked to its page (in a replay, its capture).
var messageIDFields = map[string]bool{"references": true, "in-reply-to": true, "message-id": true}

// referTo is the URL refer gives for the id a page of u names, if any.
func referTo(refer protocols.Referrer, u *url.URL, id string) (*url.URL, bool) {
	if refer == nil {
		return nil, false
	}
	return refer.Refer(u, id)
}

// linkIDs is a header field's value with each <message-id> in it a link
// to its news: page, the rest escaped.
func linkIDs(r *http.Request, u *url.URL, v string) string {
	sc, _ := tableOf(r).Scheme(u.Scheme)
	refer, _ := sc.Fetcher.(protocols.Referrer)
	var b strings.Builder
	for {
		i := strings.IndexByte(v, '<')
		j := strings.IndexByte(v[max(i, 0):], '>')
		if i < 0 || j < 0 {
			b.WriteString(template.HTMLEscapeString(v))
			return b.String()
		}
		j += i
		b.WriteString(template.HTMLEscapeString(v[:i]))
		id := v[i+1 : j]
		if ref, ok := referTo(refer, u, id); ok {
			fmt.Fprintf(&b, `<a href="%s">%s</a>`, template.HTMLEscapeString(pageOf(r, ref)), template.HTMLEscapeString(v[i:j+1]))
		} else {
			b.WriteString(template.HTMLEscapeString(v[i : j+1]))
		}
		v = v[j+1:]
	}
}

func validUTF8Prefix(b []byte) bool {
	if utf8.Valid(b) {
		return true
	}
	for i := 1; i <= 3 && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			return !utf8.FullRune(b[len(b)-i:]) && utf8.Valid(b[:len(b)-i])
		}
	}
	return false
}

// fromLatin1 reads ISO 8859-1 text.
func fromLatin1(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteRune(rune(s[i]))
	}
	return b.String()
}

// decodeText is a line of a menu as UTF-8 (Latin-1 when it is not).
func decodeText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return fromLatin1(s)
}

// printableText drops the control characters of a text other than tab
// and the line ends, which a terminal would act on.
func printableText(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0x7f || r >= 0x80 && r < 0xa0 {
			return -1
		}
		return r
	}, s)
}

// listingPage renders a listing the fetcher read whole: an FTP folder, a
// news group's overview, the list of groups, a WAIS search's hits.
func (g *gateway) listingPage(w *logWriter, r *http.Request, u *url.URL, resp *fetch.Response) {
	entries := resp.Entries
	switch {
	case resp.Kind == fetch.KindArticleList:
		g.overviewPage(w, r, u, protocols.Printable(resp.Name), entries)
	case g.tree(u) == protocols.TreeSearch:
		var hits []item
		for _, e := range entries {
			hits = append(hits, item{Name: protocols.Printable(e.Name), Link: link(r, e.URL), Score: e.Score, Size: sizeText(e.Size)})
		}
		startPage(w, headFor(u, "WAIS results", r))
		pages().ExecuteTemplate(w, "hits", hits)
		endPage(w)
	case resp.MediaType == "text/gemini":
		g.gemtextPage(w, r, u, resp)
	case g.tree(u) == protocols.TreeGroup:
		var groups []item
		for _, e := range entries {
			groups = append(groups, item{Name: protocols.Printable(e.Name), Link: link(r, e.URL), Number: e.Number, Description: protocols.Printable(e.Description)})
		}
		startPage(w, headFor(u, "Newsgroups", r))
		pages().ExecuteTemplate(w, "groups", groups)
		endPage(w)
	default:
		var rows []item
		for _, e := range entries {
			it := item{Name: protocols.Printable(e.Name), Link: link(r, e.URL), Size: sizeText(e.Size), Time: timeText(e.ModTime), Target: protocols.Printable(e.Target)}
			if e.Kind == fetch.KindDirectory {
				it.Name += "/"
			}
			rows = append(rows, it)
		}
		h := headFor(u, "Index of "+u.URLPath(), r)
		if sc, _ := g.c.Scheme(u.Scheme); !sc.Opaque { // a name has no parent
			h.Parent = parentPage(r, u)
		}
		startPage(w, h)
		pages().ExecuteTemplate(w, "listing", rows)
		endPage(w)
	}
}

// gemtextPage shows a gemtext page as its lines say: headings, list
// items, quotes, preformatted blocks as they are, links through the
// gateway (the page's own links resolved against it), prompts as forms.
func (g *gateway) gemtextPage(w *logWriter, r *http.Request, u *url.URL, resp *fetch.Response) {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	type gemLine struct{ Kind, Text, Link, Alt string }
	var lines []gemLine
	title := ""
	var pre *gemLine
	for _, l := range gemini.ParseGemtext(string(b)) {
		gl := gemLine{Text: protocols.Printable(l.Text)}
		switch l.Kind {
		case gemini.LinePreOpen:
			lines = append(lines, gemLine{Kind: "pre", Alt: gl.Text})
			pre = &lines[len(lines)-1]
			continue
		case gemini.LinePre:
			if pre != nil {
				pre.Text += strings.ToValidUTF8(l.Text, "\uFFFD") + "\n"
			}
			continue
		case gemini.LinePreClose:
			pre = nil
			continue
		case gemini.LineHeading:
			gl.Kind = "h" + strconv.Itoa(l.Level)
			if title == "" && l.Level == 1 {
				title = gl.Text
			}
		case gemini.LineItem:
			gl.Kind = "item"
		case gemini.LineQuote:
			gl.Kind = "quote"
		case gemini.LineLink, gemini.LinePrompt:
			gl.Kind = "link"
			if l.Kind == gemini.LinePrompt {
				gl.Kind = "prompt"
			}
			if ref, err := url.ParseReference(url.Canonicalize(l.URL)); err == nil {
				gl.Link = link(r, u.ResolveReference(ref).String())
			}
			if gl.Text == "" {
				gl.Text = protocols.Printable(l.URL)
			}
		}
		lines = append(lines, gl)
		pre = nil
	}
	if title == "" {
		title = u.Redacted()
	}
	startPage(w, headFor(u, title, r))
	pages().ExecuteTemplate(w, "gemtext", lines)
	endPage(w)
}

// perPage is how many articles a page of a group's overview shows.
const perPage = 50

// overviewPage renders a group's articles, newest first, perPage a page.
func (g *gateway) overviewPage(w *logWriter, r *http.Request, u *url.URL, group string, entries []protocols.Entry) {
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	page = max(page, 0)
	var rows []item
	for i := len(entries) - 1 - page*perPage; i >= 0 && i > len(entries)-1-(page+1)*perPage; i-- {
		e := entries[i]
		rows = append(rows, item{Number: e.Number, Name: protocols.Printable(e.Name), Link: link(r, e.URL), Author: protocols.Printable(e.Author), Time: timeText(e.ModTime)})
	}
	title := "Articles"
	if group != "" {
		title = "Articles in " + group
	}
	h := headFor(u, title, r)
	startPage(w, h)
	pages().ExecuteTemplate(w, "overview", rows)
	type pager struct{ Prev, Next string }
	var pg pager
	base := pageOf(r, u)
	if page > 0 {
		pg.Prev = base + "?page=" + strconv.Itoa(page-1)
	}
	if (page+1)*perPage < len(entries) {
		pg.Next = base + "?page=" + strconv.Itoa(page+1)
	}
	pages().ExecuteTemplate(w, "pager", pg)
	endPage(w)
}

// parentPage is the page of an FTP folder's parent, or "" at the top.
func parentPage(r *http.Request, u *url.URL) string {
	p := strings.TrimSuffix(u.Path, "/")
	if p == "" {
		return ""
	}
	v := *u
	v.Path = p[:strings.LastIndex(p, "/")+1]
	return pageOf(r, &v)
}

func sizeText(n int64) string {
	if n < 0 {
		return ""
	}
	return strconv.FormatInt(n, 10)
}

func timeText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04")
}
