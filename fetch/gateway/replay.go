package gateway

import (
	"bufio"
	"context"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/warc"
	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/protocols/ftp"
	"github.com/urlderef/deref/protocols/gopher"
	"github.com/urlderef/deref/protocols/nntp"
	"github.com/urlderef/deref/protocols/wais"
	"github.com/urlderef/deref/url"
)

// Archive returns a handler that replays WARC collections, a Wayback
// Machine for every scheme deref archives, with pywb's URL forms:
//
//	/COLL/TIMESTAMP/URL     the capture of URL nearest TIMESTAMP (1 to 14 digits),
//	                        redirected to its own time, rendered as the live
//	                        gateway renders it, every link kept in the archive
//	/COLL/TIMESTAMPid_/URL  the capture's payload, byte for byte
//	/COLL/URL               a TimeGate: 302 to the capture nearest Accept-Datetime
//	                        (the latest without it), Vary: accept-datetime
//	/COLL/*/URL             every capture of URL
//	/COLL/timemap/link/URL  RFC 7089's link-format TimeMap
//
// Each memento carries Memento-Datetime and a Link header naming the
// original, the TimeGate, the TimeMap and the first, previous, next and
// last mementos. A link to what the collection does not hold leads to a
// page saying so, with the live URL, never to the live server. Options'
// Timeout, MaxPage and Log apply; nothing is fetched from any server.
func Archive(colls map[string]*warc.Archive, o Options) http.Handler {
	if o.MaxPage <= 0 {
		o.MaxPage = 16 << 20
	}
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Minute
	}
	o.PerClient = max(o.PerClient, 32)
	return &replayer{g: &gateway{o: o, clients: map[string]chan struct{}{}}, colls: colls}
}

type replayer struct {
	g     *gateway
	colls map[string]*warc.Archive
}

// replayView is what a replayed page links to: the mementos of its
// collection at the time of the capture shown.
type replayView struct {
	coll string
	ts   string    // the capture's 14-digit time
	at   time.Time // the capture's time
	a    *warc.Archive
}

type replayKey struct{}

// replayOf is the replay a request renders, or nil for the live gateway.
func replayOf(r *http.Request) *replayView {
	v, _ := r.Context().Value(replayKey{}).(*replayView)
	return v
}

// path is the memento of u at the view's time.
func (v *replayView) path(u *url.URL) string { return "/" + v.coll + "/" + v.ts + "/" + u.String() }

// raw is u's payload at the view's time.
func (v *replayView) raw(u *url.URL) string { return "/" + v.coll + "/" + v.ts + "id_/" + u.String() }

// head is the top of a replayed page: the live gateway's, with the
// capture's time and the original URL.
func (v *replayView) head(u *url.URL, title string) head {
	return head{Title: title, URL: u.Redacted(), Raw: v.raw(u), Download: v.path(u) + "?download=1",
		Captured: v.at.UTC().Format("2006-01-02 15:04:05 UTC"), Live: template.URL(u.String()), Calendar: "/" + v.coll + "/*/" + u.String()}
}

// timestamp reads a replay path's time element: 1 to 14 digits, then
// "id_" for the payload as it was recorded.
func timestamp(s string) (ts string, raw, ok bool) {
	ts, raw = strings.CutSuffix(s, "id_")
	if ts == "" || len(ts) > 14 || strings.Trim(ts, "0123456789") != "" {
		return "", false, false
	}
	return ts, raw, true
}

func (p *replayer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	lw := &logWriter{ResponseWriter: w, status: 200}
	defer func() { p.g.logRequest(r, lw, start) }()
	h := lw.Header()
	h.Set("Content-Security-Policy", csp) // the live gateway's
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		p.g.fail(lw, r, http.StatusMethodNotAllowed, "deref serve answers GET and HEAD only")
		return
	}
	path := r.URL.EscapedPath()
	switch path {
	case "/":
		p.collections(lw, r)
		return
	case "/style.css":
		h.Set("Content-Type", "text/css; charset=utf-8")
		io.WriteString(lw, styleSheet)
		return
	}
	coll, rest, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	a := p.colls[coll]
	if a == nil {
		p.g.fail(lw, r, http.StatusNotFound, "no such collection: "+coll)
		return
	}
	if rest == "" {
		p.urls(lw, r, coll, a)
		return
	}
	first, after, _ := strings.Cut(rest, "/")
	switch {
	case rest == "timemap/link" || strings.HasPrefix(rest, "timemap/link/"):
		if u, ok := p.target(lw, r, strings.TrimPrefix(rest, "timemap/link/")); ok {
			p.timemap(lw, coll, a, u)
		}
	case first == "*":
		if u, ok := p.target(lw, r, after); ok {
			p.calendar(lw, r, coll, a, u)
		}
	case isTimestamp(first):
		ts, raw, _ := timestamp(first)
		if u, ok := p.target(lw, r, after); ok {
			p.memento(lw, r, coll, a, u, ts, raw)
		}
	default:
		if u, ok := p.target(lw, r, rest); ok {
			p.timegate(lw, r, coll, a, u)
		}
	}
}

// isTimestamp says whether s is a replay path's time element.
func isTimestamp(s string) bool { _, _, ok := timestamp(s); return ok }

// schemeSlashes mends a URL whose "//" a client folded into one
// (gopher:/h/1/ for gopher://h/1/).
func schemeSlashes(raw string) string {
	scheme, rest, ok := strings.Cut(raw, ":/")
	if !ok || rest == "" || rest[0] == '/' || scheme == "" || strings.ContainsAny(scheme, "/?#") {
		return raw
	}
	return scheme + "://" + rest
}

// target is the URL a replay path names after its collection and time,
// with the request's query where the URL has one (a web page's), the
// gateway's own parameters left out.
func (p *replayer) target(w *logWriter, r *http.Request, raw string) (*url.URL, bool) {
	raw = schemeSlashes(raw)
	if q := ownQuery(r.URL.RawQuery); q != "" {
		raw += "?" + q
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() {
		p.g.fail(w, r, http.StatusBadRequest, "not a URL: "+url.RedactString(raw))
		return nil, false
	}
	return u, true
}

// nearest is the capture of u nearest t. A Gopher menu asked for as the
// text it is read as (type 0) is found by its own type.
func nearest(a *warc.Archive, u *url.URL, t time.Time) (warc.Capture, bool) {
	if c, ok := a.Nearest(u.String(), t); ok {
		return c, true
	}
	if u.Scheme == "gopher" || u.Scheme == "gophers" {
		if g, err := u.Gopher(); err == nil && g.Type == '0' {
			for _, typ := range "17" {
				v := *u
				v.Path = "/" + url.EscapeGopher(string(typ)+g.Selector)
				if g.HasSearch {
					v.Path += "%09" + url.EscapeGopher(g.Search)
				}
				if c, ok := a.Nearest(v.String(), t); ok {
					return c, true
				}
			}
		}
	}
	return warc.Capture{}, false
}

// searchItem says whether u is a search with no words: a Gopher type 7
// item, a WAIS database.
func searchItem(u *url.URL) bool {
	switch u.Scheme {
	case "gopher", "gophers":
		g, err := u.Gopher()
		return err == nil && g.Type == '7' && !g.HasSearch
	case "wais":
		w, err := u.WAIS()
		return err == nil && !w.IsDocument() && !w.HasSearch
	}
	return false
}

// parseTimestamp reads a replay path's 1-to-14-digit time, the digits
// not given being the earliest (2026 is 2026-01-01 00:00:00).
func parseTimestamp(ts string) time.Time {
	full := ts + "00000101000000"[len(ts):]
	if len(ts) < 6 && len(ts) > 4 {
		full = ts + "0" + "00101000000"[len(ts)-4:]
	}
	t, err := time.Parse("20060102150405", full)
	if err != nil {
		t, _ = time.Parse("2006", full[:4])
	}
	return t
}

// memento answers /COLL/TS/URL and /COLL/TSid_/URL.
func (p *replayer) memento(w *logWriter, r *http.Request, coll string, a *warc.Archive, u *url.URL, ts string, raw bool) {
	c, ok := nearest(a, u, parseTimestamp(ts))
	if !ok && searchItem(u) && !raw {
		// A search asked for no words, which no archive holds: its form,
		// whose words lead to the searches archived.
		view := &replayView{coll: coll, ts: ts, at: parseTimestamp(ts), a: a}
		p.g.page(w, r.WithContext(context.WithValue(r.Context(), replayKey{}, view)), u)
		return
	}
	if !ok {
		p.notArchived(w, r, coll, u)
		return
	}
	if c.Timestamp() != ts {
		form := c.Timestamp()
		if raw {
			form += "id_"
		}
		loc := "/" + coll + "/" + form + "/" + u.String()
		if q := r.URL.RawQuery; q != "" && strings.Contains(q, "download=") {
			loc += "?" + q
		}
		mementoHeaders(w, coll, a, u, c)
		redirect(w, loc)
		return
	}
	mementoHeaders(w, coll, a, u, c)
	view := &replayView{coll: coll, ts: ts, at: c.Time, a: a}
	ctx, cancel := context.WithTimeout(context.WithValue(r.Context(), replayKey{}, view), p.g.o.Timeout)
	defer cancel()
	r = r.WithContext(ctx)
	if raw {
		p.payload(w, r, c)
		return
	}
	switch u.Scheme {
	case "http", "https":
		p.webPage(w, r, u, c)
	default:
		p.g.page(w, r, u)
	}
}

// payload sends a capture's payload as it was recorded: an HTTP
// response's status, type and body, any other record's bytes.
func (p *replayer) payload(w *logWriter, r *http.Request, c warc.Capture) {
	pl, err := replayOf(r).a.Open(c)
	if err != nil {
		p.g.fail(w, r, http.StatusBadGateway, err.Error())
		return
	}
	defer pl.Close()
	status := http.StatusOK
	ctype := c.Mime
	if pl.Head != nil {
		status, ctype = pl.Head.StatusCode, pl.Head.Header.Get("Content-Type")
		if loc := pl.Head.Header.Get("Location"); loc != "" {
			if base, err := url.Parse(c.URL); err == nil {
				if ref, err := url.ParseReference(loc); err == nil {
					w.Header().Set("Location", replayOf(r).raw(base.ResolveReference(ref)))
				}
			}
		}
	}
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	w.Header().Set("Content-Type", ctype)
	w.WriteHeader(status)
	if r.Method == http.MethodGet {
		io.Copy(w, pl)
	}
}

// replayFetch is the gateway's fetch in a replay: the capture of u
// nearest the page's time, as the live protocol would have given it.
func (g *gateway) replayFetch(r *http.Request, u *url.URL, offset int64) (*fetch.Response, func(), error) {
	v := replayOf(r)
	if resp, ok := g.replayAttributes(v, u); ok {
		return resp, func() {}, nil
	}
	c, ok := nearest(v.a, u, v.at)
	if !ok {
		return nil, nil, fmt.Errorf("%w: %s was not archived in this collection", fetch.ErrNotFound, u.Redacted())
	}
	pl, err := v.a.Open(c)
	if err != nil {
		return nil, nil, err
	}
	resp := &fetch.Response{Kind: fetch.KindFile, Size: -1, MediaType: c.Mime, Name: fetch.SuggestedName(u), Body: pl}
	var page io.Reader = pl
	switch {
	case u.Scheme == "gopher" || u.Scheme == "gophers":
		gp, _ := u.Gopher()
		menu := c.Mime == "application/gopher-menu"
		if menu || gp != nil && (gp.Type == '0' || gp.Type == '1' || gp.Type == '7') {
			// As the live fetch gives it: dot-terminator and stuffing
			// taken off, lines ending in LF.
			resp.Body = struct {
				io.Reader
				io.Closer
			}{gopherText(pl), pl}
			resp.MediaType = "text/plain"
		}
		if menu {
			b, err := io.ReadAll(io.LimitReader(resp.Body, g.o.MaxPage))
			pl.Close()
			if err != nil {
				return nil, nil, err
			}
			resp.Kind, resp.Entries = fetch.KindDirectory, gopher.ParseMenu(string(b))
			resp.Body = io.NopCloser(strings.NewReader(string(b)))
			if gp != nil && gp.Type == '0' {
				resp.Kind = fetch.KindFile // read as text, as the menu page reads it
			}
		}
	case (u.Scheme == "ftp" || u.Scheme == "ftps") && strings.HasSuffix(u.Path, "/"):
		b, err := io.ReadAll(io.LimitReader(page, g.o.MaxPage))
		pl.Close()
		if err != nil {
			return nil, nil, err
		}
		resp.Kind, resp.Entries = fetch.KindDirectory, ftpEntries(u, string(b), c.Time)
		resp.Body = io.NopCloser(strings.NewReader(string(b)))
	case c.Protocol == "nntp" && (c.Mime == "message/news" || c.Mime == "message/rfc822"):
		resp.MediaType = "message/rfc822"
	case c.Mime == warc.ResultListType:
		// A WAIS search's result list, as --raw printed it: its hits.
		b, err := io.ReadAll(io.LimitReader(page, g.o.MaxPage))
		pl.Close()
		if err != nil {
			return nil, nil, err
		}
		resp.Kind, resp.Entries = fetch.KindDirectory, wais.ParseResults(string(b))
		resp.Body = io.NopCloser(strings.NewReader(string(b)))
	case newsGroup(u):
		// A group's overview lines, as the live fetch lists them.
		b, err := io.ReadAll(io.LimitReader(page, g.o.MaxPage))
		pl.Close()
		if err != nil {
			return nil, nil, err
		}
		base := ""
		if u.Scheme != "news" && u.Scheme != "snews" {
			base = strings.TrimSuffix(u.String(), "/") + "/"
		}
		resp.Kind = fetch.KindArticleList
		resp.Entries = nntp.ParseOverview(strings.Split(strings.TrimRight(string(b), "\n"), "\n"), base)
		resp.Body = io.NopCloser(strings.NewReader(string(b)))
	}
	if offset > 0 {
		if _, err := io.CopyN(io.Discard, resp.Body, offset); err != nil {
			resp.Body.Close()
			return nil, nil, fmt.Errorf("%w: byte %d is past the end", fetch.ErrRangeNotSatisfied, offset)
		}
		resp.Offset = offset
	}
	return resp, func() {}, nil
}

// newsGroup says whether u names a newsgroup's articles (news:GROUP,
// nntp://h/GROUP), whose record is its overview.
func newsGroup(u *url.URL) bool {
	switch u.Scheme {
	case "news", "snews":
		n, err := u.News()
		return err == nil && n.MessageID == "" && !n.Wildmat && !n.All
	case "nntp", "nntps":
		n, err := u.NNTP()
		return err == nil && !n.HasArticle
	}
	return false
}

// replayAttributes answers for a Gopher+ item's attributes ("!"): the
// attribute block archived with the item's capture nearest the page's
// time, as a metadata record of it.
func (g *gateway) replayAttributes(v *replayView, u *url.URL) (*fetch.Response, bool) {
	if u.Scheme != "gopher" && u.Scheme != "gophers" {
		return nil, false
	}
	gp, err := u.Gopher()
	if err != nil || !gp.HasPlus || !strings.HasPrefix(gp.Plus, "!") {
		return nil, false
	}
	item := *u
	item.Path = "/" + url.EscapeGopher(string(gp.Type)+gp.Selector)
	c, ok := v.a.Nearest(item.String(), v.at)
	if !ok {
		return nil, false
	}
	pl, err := v.a.Related(c, "application/gopher+-attributes")
	if err != nil {
		return nil, false
	}
	return &fetch.Response{Kind: fetch.KindFile, Size: -1, MediaType: "text/plain", Body: pl}, true
}

// ftpEntries are the entries of an archived FTP listing (MLSD's, or
// LIST's read at the capture's time).
func ftpEntries(u *url.URL, listing string, at time.Time) []protocols.Entry {
	first, _, _ := strings.Cut(listing, "\n")
	mlsd := strings.Contains(first, "=") && strings.Contains(first, "; ")
	var out []protocols.Entry
	for _, l := range ftp.ParseListing(listing, mlsd, at) {
		e := protocols.Entry{Kind: protocols.KindFile, Name: l.Name, Size: l.Size, ModTime: l.ModTime, Target: l.Target}
		v := *u
		v.Path = u.Path + url.EscapeSegment(l.Name)
		switch {
		case !l.Parsed:
			e.Kind = protocols.KindInfo
		case l.Dir:
			e.Kind, e.Size = protocols.KindDirectory, -1
			v.Path += "/"
		case l.Link:
			e.Kind = protocols.KindLink
		}
		if l.Parsed {
			e.URL = v.String()
		}
		out = append(out, e)
	}
	return out
}

// gopherText reads a Gopher text or menu as it came (CRLF, dot-stuffing,
// the "." line) as the live fetch gives it: lines ending in LF, a
// doubled leading dot single again, nothing from the "." line on.
func gopherText(r io.Reader) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		br := bufio.NewReaderSize(r, 64<<10)
		bw := bufio.NewWriter(pw)
		for {
			line, err := br.ReadString('\n')
			if line != "" {
				body := strings.TrimRight(line, "\r\n")
				if body == "." && strings.HasSuffix(line, "\n") {
					break
				}
				if strings.HasPrefix(body, "..") {
					body = body[1:]
				}
				bw.WriteString(body + "\n")
			}
			if err != nil {
				break
			}
		}
		pw.CloseWithError(bw.Flush())
	}()
	return pr
}

// notArchived is the page of a URL the collection does not hold: it
// says so and links the live URL, never fetching it.
func (p *replayer) notArchived(w *logWriter, r *http.Request, coll string, u *url.URL) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusNotFound)
	pages().ExecuteTemplate(w, "notarchived", struct {
		head
		Coll string
	}{head{Title: "Not archived", URL: u.Redacted(), Live: template.URL(u.String()), Message: u.Redacted()}, coll})
}

// mementoHeaders sets Memento-Datetime and the Link header of c.
func mementoHeaders(w http.ResponseWriter, coll string, a *warc.Archive, u *url.URL, c warc.Capture) {
	w.Header().Set("Memento-Datetime", c.Time.UTC().Format(http.TimeFormat))
	caps := a.Captures(c.URL)
	i := sort.Search(len(caps), func(i int) bool { return !caps[i].Time.Before(c.Time) })
	links := []string{
		fmt.Sprintf("<%s>; rel=\"original\"", c.URL),
		fmt.Sprintf("</%s/%s>; rel=\"timegate\"", coll, u.String()),
		fmt.Sprintf("</%s/timemap/link/%s>; rel=\"timemap\"; type=\"application/link-format\"", coll, u.String()),
	}
	rels := map[int][]string{}
	rels[0] = append(rels[0], "first")
	if i > 0 {
		rels[i-1] = append(rels[i-1], "prev")
	}
	if i+1 < len(caps) {
		rels[i+1] = append(rels[i+1], "next")
	}
	rels[len(caps)-1] = append(rels[len(caps)-1], "last")
	var idx []int
	for j := range rels {
		idx = append(idx, j)
	}
	sort.Ints(idx)
	for _, j := range idx {
		links = append(links, fmt.Sprintf("</%s/%s/%s>; rel=\"%s memento\"; datetime=\"%s\"", coll, caps[j].Timestamp(), u.String(), strings.Join(rels[j], " "), caps[j].Time.UTC().Format(http.TimeFormat)))
	}
	w.Header().Set("Link", strings.Join(links, ", "))
}

// timegate answers /COLL/URL: to the memento nearest Accept-Datetime,
// the latest without it.
func (p *replayer) timegate(w *logWriter, r *http.Request, coll string, a *warc.Archive, u *url.URL) {
	t := time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	if v := r.Header.Get("Accept-Datetime"); v != "" {
		at, err := http.ParseTime(v)
		if err != nil {
			p.g.fail(w, r, http.StatusBadRequest, "Accept-Datetime: "+err.Error())
			return
		}
		t = at
	}
	w.Header().Set("Vary", "accept-datetime")
	c, ok := nearest(a, u, t)
	if !ok {
		p.notArchived(w, r, coll, u)
		return
	}
	w.Header().Set("Link", fmt.Sprintf("<%s>; rel=\"original\", </%s/timemap/link/%s>; rel=\"timemap\"; type=\"application/link-format\"", c.URL, coll, u.String()))
	redirect(w, "/"+coll+"/"+c.Timestamp()+"/"+u.String())
}

// timemap answers /COLL/timemap/link/URL with RFC 7089's link format.
func (p *replayer) timemap(w *logWriter, coll string, a *warc.Archive, u *url.URL) {
	caps := a.Captures(u.String())
	if len(caps) == 0 {
		if c, ok := nearest(a, u, time.Now()); ok {
			caps = a.Captures(c.URL)
		}
	}
	if len(caps) == 0 {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, u.Redacted()+" was not archived in this collection\n")
		return
	}
	w.Header().Set("Content-Type", "application/link-format")
	var b strings.Builder
	fmt.Fprintf(&b, "<%s>; rel=\"original\",\n", caps[0].URL)
	fmt.Fprintf(&b, "</%s/timemap/link/%s>; rel=\"self\"; type=\"application/link-format\"; from=\"%s\"; until=\"%s\",\n", coll, u.String(),
		caps[0].Time.UTC().Format(http.TimeFormat), caps[len(caps)-1].Time.UTC().Format(http.TimeFormat))
	fmt.Fprintf(&b, "</%s/%s>; rel=\"timegate\"", coll, u.String())
	for i, c := range caps {
		rel := "memento"
		switch {
		case len(caps) == 1:
			rel = "first last memento"
		case i == 0:
			rel = "first memento"
		case i == len(caps)-1:
			rel = "last memento"
		}
		fmt.Fprintf(&b, ",\n</%s/%s/%s>; rel=\"%s\"; datetime=\"%s\"", coll, c.Timestamp(), u.String(), rel, c.Time.UTC().Format(http.TimeFormat))
	}
	b.WriteString("\n")
	io.WriteString(w, b.String())
}

// calendar answers /COLL/*/URL: every capture of URL, linked.
func (p *replayer) calendar(w *logWriter, r *http.Request, coll string, a *warc.Archive, u *url.URL) {
	caps := a.Captures(u.String())
	var rows []item
	for _, c := range caps {
		rows = append(rows, item{Name: c.Time.UTC().Format("2006-01-02 15:04:05 UTC"), Link: "/" + coll + "/" + c.Timestamp() + "/" + u.String(), Size: c.Type, Time: c.Mime})
	}
	if len(rows) == 0 {
		p.notArchived(w, r, coll, u)
		return
	}
	startPage(w, head{Title: fmt.Sprintf("%d captures of %s", len(rows), u.Redacted()), URL: u.Redacted(), Live: template.URL(u.String())})
	pages().ExecuteTemplate(w, "listing", rows)
	endPage(w)
}

// urls answers /COLL/: the URLs the collection holds, each linked to
// its captures (the first 10,000).
func (p *replayer) urls(w *logWriter, r *http.Request, coll string, a *warc.Archive) {
	var rows []item
	a.URLs(func(u string, n int) bool {
		rows = append(rows, item{Name: protocols.Printable(url.RedactString(u)), Link: "/" + coll + "/*/" + u, Number: int64(n)})
		return len(rows) < 10000
	})
	startPage(w, head{Title: "Collection " + coll})
	pages().ExecuteTemplate(w, "overview", rows)
	endPage(w)
}

// collections answers /: the collections served.
func (p *replayer) collections(w *logWriter, r *http.Request) {
	var rows []item
	for name := range p.colls {
		rows = append(rows, item{Name: name, Link: "/" + name + "/"})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
	startPage(w, head{Title: "deref: archived collections"})
	pages().ExecuteTemplate(w, "listing", rows)
	endPage(w)
}
