package gateway

import (
	"context"
	"fmt"
	"html/template"
	"io"
	"net/http"
	neturl "net/url"
	"sort"
	"strings"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/warc"
	"github.com/urlderef/deref/protocols"
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
	// A client for its scheme table only: how each protocol's records
	// read back (protocols.Replayer). Nothing is fetched with it.
	c := o.Schemes
	if c == nil {
		c = fetch.NewClient()
	}
	g := &gateway{c: c, o: o, clients: map[string]chan struct{}{}}
	g.init()
	return mount(&replayer{g: g, colls: colls}, o)
}

type replayer struct {
	g     *gateway
	colls map[string]*warc.Archive
}

// replayView is what a replayed page links to: the mementos of its
// collection at the time of the capture shown.
type replayView struct {
	base string // Options.BasePath
	coll string
	ts   string    // the capture's 14-digit time
	at   time.Time // the capture's time
	a    *warc.Archive
	// live is where the server's live gateway answers (Options.LivePath),
	// table the scheme table its pages are made by.
	live  string
	table *fetch.Client
}

// liveLink is where the banner's "live" leads: the page of u on the
// server's live gateway where there is one and u's scheme has pages
// there, else u itself.
func (v *replayView) liveLink(u *url.URL) string {
	if v.live != "" && v.table != nil {
		if p := pagePath(v.table, u); p != "" {
			return "/" + strings.Trim(v.live, "/") + p
		}
	}
	return u.String()
}

type replayKey struct{}

// replayOf is the replay a request renders, or nil for the live gateway.
func replayOf(r *http.Request) *replayView {
	v, _ := r.Context().Value(replayKey{}).(*replayView)
	return v
}

// path is the memento of u at the view's time.
func (v *replayView) path(u *url.URL) string {
	return v.base + "/" + v.coll + "/" + v.ts + "/" + u.String()
}

// raw is u's payload at the view's time.
func (v *replayView) raw(u *url.URL) string {
	return v.base + "/" + v.coll + "/" + v.ts + "id_/" + u.String()
}

// head is the top of a replayed page: the live gateway's, with the
// capture's time and the original URL.
func (v *replayView) head(u *url.URL, title string) head {
	h := head{Title: title, URL: u.Redacted(), Raw: v.raw(u), Download: v.path(u) + "?download=1",
		Captured: v.at.UTC().Format("2006-01-02 15:04:05 UTC"), Live: template.URL(v.liveLink(u)), Calendar: v.base + "/" + v.coll + "/*/" + u.String()}
	n := v.neighbours(u)
	h.First, h.Prev, h.Next, h.Last = n.first, n.prev, n.next, n.last
	return h
}

// around are the mementos of a URL around the one shown: the first and
// the last of the collection's, and those just before and after; ""
// where there is none other (the first is none when the one shown is
// the first, or the one before it).
type around struct{ first, prev, next, last string }

// neighbours are u's mementos around the capture shown, as the Link
// header names them (first, prev, next, last).
func (v *replayView) neighbours(u *url.URL) around {
	var n around
	if v.a == nil {
		return n
	}
	caps := v.a.Captures(u.String())
	i := sort.Search(len(caps), func(i int) bool { return !caps[i].Time.Before(v.at) })
	memento := func(c warc.Capture) string { return v.base + "/" + v.coll + "/" + c.Timestamp() + "/" + u.String() }
	for j := i - 1; j >= 0; j-- {
		if caps[j].Timestamp() != v.ts {
			n.prev = memento(caps[j])
			break
		}
	}
	for j := i; j < len(caps); j++ {
		if caps[j].Timestamp() > v.ts {
			n.next = memento(caps[j])
			break
		}
	}
	if len(caps) > 0 {
		if f := memento(caps[0]); f != n.prev && caps[0].Timestamp() < v.ts {
			n.first = f
		}
		if l := memento(caps[len(caps)-1]); l != n.next && caps[len(caps)-1].Timestamp() > v.ts {
			n.last = l
		}
	}
	return n
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
	lw := &logWriter{ResponseWriter: w, status: 200, base: basePath(r)}
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
	if !p.g.allowRate(lw, r) {
		return
	}
	r = withTable(r, p.g.c)
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
		p.urls(lw, r, coll, a, "")
		return
	}
	first, after, _ := strings.Cut(rest, "/")
	switch {
	case rest == "timemap/link" || strings.HasPrefix(rest, "timemap/link/"):
		if u, ok := p.target(lw, r, strings.TrimPrefix(rest, "timemap/link/")); ok {
			p.timemap(lw, coll, a, u)
		}
	case first == "*" && strings.HasSuffix(after, "*"):
		p.urls(lw, r, coll, a, schemeSlashes(strings.TrimSuffix(after, "*"))) // pywb's prefix form
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

// replayer is the Replayer of u's scheme, if it has one.
func (g *gateway) replayer(u *url.URL) (protocols.Replayer, bool) {
	sc, _ := g.c.Scheme(u.Scheme)
	rp, ok := sc.Fetcher.(protocols.Replayer)
	return rp, ok
}

// source says where else u's answer is archived, as its protocol says.
func (g *gateway) source(u *url.URL) protocols.ReplaySource {
	if rp, ok := g.replayer(u); ok {
		return rp.ReplayFrom(u)
	}
	return protocols.ReplaySource{}
}

// nearest is the capture of u nearest t, or of a URL whose capture
// answers for it (protocols.ReplaySource.Alternatives: a Gopher menu
// asked for as the text it is read as).
func (g *gateway) nearest(a *warc.Archive, u *url.URL, t time.Time) (warc.Capture, bool) {
	if c, ok := a.Nearest(u.String(), t); ok {
		return c, true
	}
	for _, v := range g.source(u).Alternatives {
		if c, ok := a.Nearest(v.String(), t); ok {
			return c, true
		}
	}
	return warc.Capture{}, false
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
	c, ok := p.g.nearest(a, u, parseTimestamp(ts))
	if !ok && p.g.source(u).Wordless && !raw {
		// A search asked for no words, which no archive holds: its form,
		// whose words lead to the searches archived.
		view := &replayView{base: basePath(r), coll: coll, ts: ts, at: parseTimestamp(ts), a: a, live: p.g.o.LivePath, table: p.g.c}
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
		loc := basePath(r) + "/" + coll + "/" + form + "/" + u.String()
		if q := r.URL.RawQuery; q != "" && strings.Contains(q, "download=") {
			loc += "?" + q
		}
		mementoHeaders(w, coll, a, u, c)
		redirect(w, loc)
		return
	}
	mementoHeaders(w, coll, a, u, c)
	view := &replayView{base: basePath(r), coll: coll, ts: ts, at: c.Time, a: a, live: p.g.o.LivePath, table: p.g.c}
	ctx, cancel := context.WithTimeout(context.WithValue(r.Context(), replayKey{}, view), p.g.o.Timeout)
	defer cancel()
	r = r.WithContext(ctx)
	if raw {
		p.payload(w, r, c)
		return
	}
	if _, own := p.g.replayer(u); !own && (c.Status != "" && c.Status != "-" || c.Type == "revisit") { // an HTTP exchange (or a revisit of one): a web page; webPage sends any other payload as it is
		p.webPage(w, r, u, c)
		return
	}
	p.g.page(w, r, u)
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
	w.Header().Set("Content-Security-Policy", rawCSP) // as it was recorded: it can do nothing here
	w.WriteHeader(status)
	if r.Method == http.MethodGet {
		io.Copy(w, pl)
	}
}

// replayFetch is the gateway's fetch in a replay: the capture of u
// nearest the page's time, as the live protocol would have given it
// (protocols.Replayer), or the metadata record that is its answer (a
// Gopher+ item's attributes).
func (g *gateway) replayFetch(r *http.Request, u *url.URL, offset int64) (*fetch.Response, func(), error) {
	v := replayOf(r)
	var resp *fetch.Response
	if src := g.source(u); src.MetadataOf != nil {
		c, ok := v.a.Nearest(src.MetadataOf.String(), v.at)
		if !ok {
			return nil, nil, fmt.Errorf("%w: %s was not archived in this collection", fetch.ErrNotFound, u.Redacted())
		}
		pl, err := v.a.Related(c, src.MetadataType)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %w", fetch.ErrNotFound, err)
		}
		resp = &fetch.Response{Kind: fetch.KindFile, Size: -1, MediaType: "text/plain", Body: pl}
	} else {
		c, ok := g.nearest(v.a, u, v.at)
		if !ok {
			return nil, nil, fmt.Errorf("%w: %s was not archived in this collection", fetch.ErrNotFound, u.Redacted())
		}
		pl, err := v.a.Open(c)
		if err != nil {
			return nil, nil, err
		}
		resp = &fetch.Response{Kind: fetch.KindFile, Size: -1, MediaType: c.Mime, Name: fetch.SuggestedName(u), Body: pl}
		if rp, ok := g.replayer(u); ok {
			if resp, err = rp.Replay(u, c.Mime, c.Time, pl, g.o.MaxPage); err != nil {
				return nil, nil, err
			}
		}
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
	c, ok := p.g.nearest(a, u, t)
	if !ok {
		p.notArchived(w, r, coll, u)
		return
	}
	w.Header().Set("Link", fmt.Sprintf("<%s>; rel=\"original\", </%s/timemap/link/%s>; rel=\"timemap\"; type=\"application/link-format\"", c.URL, coll, u.String()))
	redirect(w, basePath(r)+"/"+coll+"/"+c.Timestamp()+"/"+u.String())
}

// timemap answers /COLL/timemap/link/URL with RFC 7089's link format.
func (p *replayer) timemap(w *logWriter, coll string, a *warc.Archive, u *url.URL) {
	caps := a.Captures(u.String())
	if len(caps) == 0 {
		if c, ok := p.g.nearest(a, u, time.Now()); ok {
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

// calendar answers /COLL/*/URL: every capture of URL, linked, with its
// time, its status (an HTTP response's) or kind, its media type and the
// bytes its record takes in the archive; where there are more than
// calendarPast, a calendar first, by year and month, each month linked
// to its captures below.
func (p *replayer) calendar(w *logWriter, r *http.Request, coll string, a *warc.Archive, u *url.URL) {
	caps := a.Captures(u.String())
	if len(caps) == 0 {
		p.notArchived(w, r, coll, u)
		return
	}
	type capRow struct {
		Time, Link, Status, Mime, Bytes, Month string
		First                                  bool // the first of its month
	}
	type month struct {
		Name, Anchor string
		Count        int
	}
	var rows []capRow
	var months []month
	for _, c := range caps {
		status := c.Status
		switch {
		case c.Type == "revisit":
			status = "revisit (unchanged)"
		case status == "" || status == "-":
			status = c.Type
		}
		mt := c.Mime
		if mt == "" {
			mt = "-"
		}
		bytes := "-"
		if c.Length > 0 {
			bytes = humanSize(c.Length)
		}
		m := c.Time.UTC().Format("2006-01")
		row := capRow{Time: c.Time.UTC().Format("2006-01-02 15:04:05 UTC"), Link: basePath(r) + "/" + coll + "/" + c.Timestamp() + "/" + u.String(),
			Status: status, Mime: mt, Bytes: bytes, Month: "m" + strings.ReplaceAll(m, "-", "")}
		if len(months) == 0 || months[len(months)-1].Anchor != row.Month {
			months = append(months, month{Name: c.Time.UTC().Format("January 2006"), Anchor: row.Month})
			row.First = true
		}
		months[len(months)-1].Count++
		rows = append(rows, row)
	}
	title := fmt.Sprintf("%s of %s", plural(len(caps), "capture", "captures"), u.Redacted())
	startPage(w, head{Title: title, URL: u.Redacted(), Live: template.URL(u.String())})
	data := struct {
		Rows   []capRow
		Months []month
	}{Rows: rows}
	if len(caps) > calendarPast {
		data.Months = months
	}
	pages().ExecuteTemplate(w, "captures", data)
	endPage(w)
}

// calendarPast is how many captures a URL has before its page starts
// with a calendar.
const calendarPast = 20

// plural is n and the noun for it: "1 capture", "2 captures".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// humanSize is a byte count as people read it: "512 B", "3.4 KiB".
func humanSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// urlsPerPage is how many URLs a page of a collection lists.
const urlsPerPage = 100

// urls answers /COLL/ (and /COLL/*/PREFIX*): the pages a person would
// start from (its WACZ page list, where it has one), a box that finds a
// URL's captures or the URLs under a prefix ("gopher://host/1/*"), and
// the URLs it holds (or those under the prefix) in index order, each
// with its media type, its captures' count and the first and last of
// them, urlsPerPage at a time, with the pages before and after linked.
func (p *replayer) urls(w *logWriter, r *http.Request, coll string, a *warc.Archive, prefix string) {
	q := r.URL.Query()
	if typed := strings.TrimSpace(q.Get("url")); typed != "" && prefix == "" {
		if pre, ok := strings.CutSuffix(typed, "*"); ok {
			redirect(w, basePath(r)+"/"+coll+"/*/"+pre+"*")
		} else {
			redirect(w, basePath(r)+"/"+coll+"/*/"+typed)
		}
		return
	}
	base := basePath(r) + "/" + coll + "/"
	if prefix != "" {
		base += "*/" + prefix + "*"
	}
	after, back := q.Get("after"), false
	if b := q.Get("before"); b != "" {
		after, back = b, true
	}
	rows, more := a.Browse(prefix, after, back, urlsPerPage)
	type urlRow struct {
		URL, Link, Mime, First, FirstLink, Last, LastLink string
		Captures                                          int
	}
	var list []urlRow
	for _, ur := range rows {
		mt := ur.Mime
		if mt == "" {
			mt = "-"
		}
		list = append(list, urlRow{URL: protocols.Printable(url.RedactString(ur.URL)), Link: basePath(r) + "/" + coll + "/*/" + ur.URL, Mime: mt, Captures: ur.Captures,
			First: ur.First.UTC().Format("2006-01-02 15:04"), FirstLink: basePath(r) + "/" + coll + "/" + ur.First.UTC().Format("20060102150405") + "/" + ur.URL,
			Last: ur.Last.UTC().Format("2006-01-02 15:04"), LastLink: basePath(r) + "/" + coll + "/" + ur.Last.UTC().Format("20060102150405") + "/" + ur.URL})
	}
	type pager struct{ Prev, Next string }
	var pg pager
	if len(rows) > 0 {
		first, last := rows[0].URL, rows[len(rows)-1].URL
		if back && more || !back && after != "" {
			pg.Prev = base + "?before=" + neturl.QueryEscape(first)
		}
		if !back && more || back {
			pg.Next = base + "?after=" + neturl.QueryEscape(last)
		}
	}
	var start []item
	if prefix == "" && after == "" {
		for _, sp := range a.StartPages(50) {
			start = append(start, item{Name: protocols.Printable(url.RedactString(sp.URL)), Description: protocols.Printable(sp.Title),
				Link: basePath(r) + "/" + coll + "/" + sp.Time.UTC().Format("20060102150405") + "/" + sp.URL, Time: sp.Time.UTC().Format("2006-01-02 15:04:05 UTC")})
		}
	}
	title := "Collection " + coll
	if prefix != "" {
		title = "URLs under " + url.RedactString(prefix) + " in " + coll
	}
	startPage(w, head{Title: title})
	pages().ExecuteTemplate(w, "collection", struct {
		Start  []item
		Action string
		Prefix string
		Rows   []urlRow
		Pager  pager
	}{start, basePath(r) + "/" + coll + "/", prefix, list, pg})
	endPage(w)
}

// collections answers /: the collections served.
func (p *replayer) collections(w *logWriter, r *http.Request) {
	var rows []item
	for name := range p.colls {
		rows = append(rows, item{Name: name, Link: basePath(r) + "/" + name + "/"})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
	startPage(w, head{Title: "deref: archived collections"})
	pages().ExecuteTemplate(w, "collections", rows)
	endPage(w)
}
