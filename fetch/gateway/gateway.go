// Package gateway puts the schemes browsers dropped in any browser: an
// http.Handler that fetches gopher:, ftp:, news:, nntp: and wais: URLs
// with a fetch.Client and renders them as plain HTML pages (menus and
// listings as lists and tables, searches as forms, text as text), serves
// every other object as it is (media type, length, modification time,
// ranges), and answers clients that use it as a proxy
// (gopher_proxy=http://127.0.0.1:8070/) with the raw object, as the CERN
// gateways did. It is what deref serve runs.
//
// A gateway is an open door if done carelessly: it refuses destinations
// in private, loopback and link-local ranges (checked on the address
// dialled, for every connection), serves file: only below a folder given,
// escapes everything a server sends, sets a Content-Security-Policy
// without inline script and no cookies, and queues each client's
// requests and caps the connections to each upstream host.
//
// Every page, the safety rules and replay's URL forms, as deref serve
// offers them: deref help serve (cmd/deref/help/serve.md).
package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/internal/byterange"
	"github.com/urlderef/deref/internal/walk"
	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/protocols/gopher"
	"github.com/urlderef/deref/url"
)

// Options adjust a Handler.
type Options struct {
	// AllowPrivate lets pages lead to private, loopback and link-local
	// addresses; without it they are refused.
	AllowPrivate bool
	// Allow, when not empty, narrows the hosts served to those matching a
	// pattern: HOST or HOST:PORT, HOST a glob such as "*.example.org". It
	// never admits private addresses by itself.
	Allow []string
	// Home, when set, is the URL whose page the front page is: "/" is
	// redirected to it (the URL form stays at "/?url=").
	Home string
	// LivePath, for Archive, is the path of the same server where a live
	// gateway answers (a Handler mounted there, its BasePath): a
	// replayed page's "live" link leads to the page of its URL there, a
	// link a browser can open. Empty means the URL itself (which a
	// browser opens for the web's schemes only).
	LivePath string
	// BasePath is the path the gateway is mounted at behind a reverse
	// proxy ("/gw/": nginx's location /gw/ { proxy_pass ... }): requests
	// below it are served with it taken off, and every link, form and
	// redirect the pages hold begins with it. Empty means "/".
	BasePath string
	// TrustedProxies names the reverse proxies (addresses, or networks
	// as CIDR: "127.0.0.1", "10.0.0.0/8") whose X-Forwarded-For is
	// believed: a request from one is the client's its last address not
	// itself a trusted proxy names, for the log and the per-client
	// limits (PerClient, Rate). From anyone else the field is ignored.
	TrustedProxies []string
	// AllowFile is the folder file: URLs are served from (never a symbolic
	// link out of it); empty: file: is never served.
	AllowFile string
	// PerClient is how many requests of one client address are served at
	// once (the rest wait their turn); 0 means 32. PerHost caps the
	// connections to one upstream host; 0 means 8. Waiting requests are
	// queued, not refused.
	PerClient, PerHost int
	// MaxUpstream caps the retrievals from upstream servers at once, all
	// clients together (0 means 256); a request past it waits its turn.
	// With PerClient below it, one client cannot take every slot.
	MaxUpstream int
	// Rate, when above 0, is how many requests a second one client
	// address may make, in bursts of up to Burst (0: Rate, at least 1);
	// past it the answer is 429 with Retry-After, as a token bucket
	// gives it.
	Rate  float64
	Burst int
	// Timeout bounds the wait for a request's answer to begin (0 means two
	// minutes): a page or an object that has not started by then is
	// answered 504. Once it streams, the client's IdleTimeout ends a
	// transfer that stalls, however long a large object takes.
	Timeout time.Duration
	// MaxPage is the most of a listing or a text a page renders, in bytes;
	// 0 means 16 MiB. The raw object is never cut.
	MaxPage int64
	// Log, when set, gets an access log line per request (Common Log
	// Format, or JSON with LogJSON), passwords redacted.
	Log     io.Writer
	LogJSON bool
	// Schemes, for Archive, is the client whose scheme table says which
	// schemes have pages and how each protocol's records read back
	// (protocols.Replayer); nothing is fetched with it. Nil means the
	// built-in schemes. Handler uses its own client's table.
	Schemes *fetch.Client
}

// csp is every page's Content-Security-Policy, live or replayed: no
// script, styles, images and media from the gateway only.
const csp = "default-src 'none'; style-src 'self'; img-src 'self'; media-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// rawCSP is the Content-Security-Policy of an object sent as it is (a
// Gopher h item, an .html file, a capture's id_ payload): csp, and a
// sandbox, so that HTML a server wrote can do nothing on the gateway's
// origin: no script, no form, no <meta http-equiv=refresh> taking the
// browser elsewhere, no plugin, no navigation of the top page.
const rawCSP = csp + "; sandbox"

// paged is what c's scheme table says of a scheme the gateway has pages
// for: one whose folders are menus, listings, groups or searches (not the
// web, whose pages a browser shows itself).
func paged(c *fetch.Client, name string) (protocols.Scheme, bool) {
	sc, ok := c.Scheme(name)
	return sc, ok && sc.Fetcher != nil && !sc.Linked && (sc.Tree != protocols.TreeNone || sc.Paged)
}

type tableKey struct{}

// withTable is r carrying the client whose scheme table its pages are
// made by (a scheme registered on the gateway's client has pages too).
func withTable(r *http.Request, c *fetch.Client) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), tableKey{}, c))
}

// tableOf is the client whose scheme table r's pages are made by.
func tableOf(r *http.Request) *fetch.Client {
	if c, ok := r.Context().Value(tableKey{}).(*fetch.Client); ok {
		return c
	}
	return fetch.DefaultClient()
}

// pagedNames lists the schemes of c that have pages of their own (not a
// local one, nor another's secure form), sorted.
func pagedNames(c *fetch.Client) []string {
	var out []string
	for _, name := range c.Schemes() {
		if sc, ok := paged(c, name); ok && !sc.Local && sc.Plain == "" {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// pageList names the page paths of c's paged schemes, for an error.
func pageList(c *fetch.Client) string {
	var out []string
	for _, name := range pagedNames(c) {
		if url.Authority(name) {
			out = append(out, "/"+name+"/HOST/...")
		} else {
			out = append(out, "/"+name+"/...")
		}
	}
	return strings.Join(out, ", ")
}

type gateway struct {
	c     *fetch.Client
	o     Options
	hosts walk.Hosts
	// upstream holds a token per retrieval from upstream (MaxUpstream);
	// rate is the per-client token buckets (Rate).
	upstream chan struct{}
	rate     *buckets

	mu      sync.Mutex
	clients map[string]chan struct{}
	root    *os.Root // AllowFile
	logMu   sync.Mutex
}

// Handler returns the gateway. It sets c.Dial to a dialer that checks
// every address dialled (wrapping the dial function c had), but for the
// news server c is set up with (c.NNTP.Server, else $NNTPSERVER): c should
// be the gateway's own client. Every retrieval for a visitor is anonymous
// (fetch.FetchOptions.Anonymous): it logs in with what the URL carries
// only, never with the credentials c holds for the one running it (its
// netrc file, User, Prompt, Header's Authorization and Cookie fields, Jar
// or client certificates), and asks nothing on a terminal.
func Handler(c *fetch.Client, o Options) http.Handler {
	if o.PerClient <= 0 {
		o.PerClient = 32
	}
	if o.PerHost <= 0 {
		o.PerHost = 8
	}
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Minute
	}
	if o.MaxPage <= 0 {
		o.MaxPage = 16 << 20
	}
	g := &gateway{c: c, o: o, clients: map[string]chan struct{}{}}
	g.init()
	g.hosts.PerHost = o.PerHost
	c.Dial = guard(c.Dial, o.AllowPrivate, net.DefaultResolver, configuredServers(c)...)
	if o.AllowFile != "" {
		if r, err := os.OpenRoot(o.AllowFile); err == nil {
			g.root = r
		}
	}
	return mount(g, o)
}

// configuredServers are the addresses c dials for the URLs that name no
// server (news: URLs go to the news server c is set up with): the
// operator's choice, not a page's, dialled wherever they are.
func configuredServers(c *fetch.Client) []string {
	var out []string
	for _, name := range c.Schemes() {
		sc, _ := c.Scheme(name)
		a, ok := sc.Fetcher.(protocols.ServerAddresser)
		if !ok || url.Authority(name) || sc.Local {
			continue
		}
		if addr, _, _ := a.ServerAddr(&url.URL{Scheme: name}); !slices.Contains(out, addr) {
			out = append(out, addr)
		}
	}
	return out
}

// ServeHTTP serves a request: a proxy request (absolute form) with the
// raw object, a page otherwise.
func (g *gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	lw := &logWriter{ResponseWriter: w, status: 200, base: basePath(r)}
	defer func() { g.logRequest(r, lw, start) }()
	h := lw.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.Set("Allow", "GET, HEAD")
		g.fail(lw, r, http.StatusMethodNotAllowed, "deref serve answers GET and HEAD only")
		return
	}
	if !g.allowRate(lw, r) {
		return
	}
	release, err := g.admit(r)
	if err != nil {
		return // the client went away while queued
	}
	defer release()
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	timer := time.AfterFunc(g.o.Timeout, func() { cancel(context.DeadlineExceeded) })
	defer timer.Stop()
	r = r.WithContext(context.WithValue(ctx, timerKey{}, timer))

	r = withTable(r, g.c)
	if r.URL.IsAbs() {
		g.proxy(lw, r)
		return
	}
	p := r.URL.EscapedPath()
	switch {
	case p == "/" && r.URL.Query().Get("url") != "":
		g.redirectToPage(lw, r, r.URL.Query().Get("url"))
	case p == "/" && g.o.Home != "" && r.URL.RawQuery == "":
		g.redirectToPage(lw, r, g.o.Home)
	case p == "/":
		g.index(lw, r)
	case p == "/style.css":
		h.Set("Content-Type", "text/css; charset=utf-8")
		h.Set("Cache-Control", "max-age=3600")
		io.WriteString(lw, styleSheet)
	default:
		u, err := pageURL(g.c, p, r.URL.RawQuery)
		if err != nil {
			g.fail(lw, r, http.StatusNotFound, err.Error())
			return
		}
		g.page(lw, r, u)
	}
}

// pageURL is the URL a page path names: /SCHEME/REST is SCHEME://REST
// (news:REST for news), the query kept where the scheme has one (WAIS
// searches) and gateway's own parameters left out.
func pageURL(c *fetch.Client, p, rawQuery string) (*url.URL, error) {
	scheme, rest, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
	sc, ok := paged(c, scheme)
	if !ok {
		return nil, fmt.Errorf("no such page: %s (pages are %s)", p, pageList(c))
	}
	raw := scheme + "://" + rest
	if !url.Authority(scheme) && url.Known(scheme) && !sc.Local {
		raw = scheme + ":" + rest // news:GROUP; a scheme url does not know is taken to have //HOST
	}
	if q := ownQuery(rawQuery); q != "" && url.Queries(scheme) {
		raw += "?" + q // a WAIS search's
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", url.RedactString(raw), err)
	}
	return u, nil
}

// gatewayParams are the query parameters the gateway reads itself.
var gatewayParams = map[string]bool{"raw": true, "download": true, "q": true, "page": true, "attributes": true, "view": true}

// ownQuery is the part of a query that belongs to the URL, not to the
// gateway: what remains once its parameters are taken out.
func ownQuery(raw string) string {
	var keep []string
	for _, kv := range strings.Split(raw, "&") {
		k, _, _ := strings.Cut(kv, "=")
		if kv != "" && !gatewayParams[k] {
			keep = append(keep, kv)
		}
	}
	return strings.Join(keep, "&")
}

// PagePath is the gateway path of a URL: /gopher/HOST:PORT/REST for
// gopher://HOST:PORT/REST, /news/GROUP for news:GROUP; "" for a URL the
// gateway has no page for (it is then linked as it is). It knows the
// built-in schemes (fetch.DefaultClient's table).
func PagePath(u *url.URL) string { return pagePath(fetch.DefaultClient(), u) }

// pagePath is PagePath by c's scheme table.
func pagePath(c *fetch.Client, u *url.URL) string {
	sc, ok := paged(c, u.Scheme)
	if !ok {
		return ""
	}
	if _, gopher := u.Selector(); gopher && strings.Contains(u.Path, "?") {
		u = u.Normalize() // a search written as lynx has it, 7/find?words, becomes 7/find%09words
	}
	s := u.String()
	switch {
	case !u.HasAuthority && sc.Local:
		return "/" + u.Scheme + "//" + strings.TrimPrefix(u.Path, "/") // file:/srv/x is file:///srv/x
	case !u.HasAuthority:
		return "/" + u.Scheme + "/" + strings.TrimPrefix(s, u.Scheme+":") // news:GROUP
	}
	_, rest, ok := strings.Cut(s, "://")
	if !ok {
		return ""
	}
	if u.HasQuery { // a WAIS search
		rest, _, _ = strings.Cut(rest, "?")
		return "/" + u.Scheme + "/" + rest + "?" + u.Query
	}
	return "/" + u.Scheme + "/" + rest
}

// pageOf is where a page links u: its page here (PagePath), or in a
// replay its memento at the capture's time.
func pageOf(r *http.Request, u *url.URL) string {
	if v := replayOf(r); v != nil {
		return v.path(u)
	}
	p := pagePath(tableOf(r), u)
	if proxied(r) && p != "" {
		return ownBase(r) + p
	}
	if p != "" {
		return basePath(r) + p
	}
	return ""
}

// rawOf is where a page links u's object as it is.
func rawOf(r *http.Request, u *url.URL) string {
	if v := replayOf(r); v != nil {
		return v.raw(u)
	}
	if proxied(r) {
		return ownBase(r) + pagePath(tableOf(r), u) + "?raw=1"
	}
	return basePath(r) + pagePath(tableOf(r), u) + "?raw=1"
}

// allowRate takes a token of r's client (Options.Rate), or answers 429
// with the seconds until the next in Retry-After.
func (g *gateway) allowRate(w *logWriter, r *http.Request) bool {
	wait, ok := g.rate.take(clientOf(r), time.Now())
	if !ok {
		secs := max(1, int(math.Ceil(wait.Seconds())))
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		g.fail(w, r, http.StatusTooManyRequests, fmt.Sprintf("too many requests from %s: try again in %d s", clientOf(r), secs))
	}
	return ok
}

// admit queues a request behind the others of its client address.
func (g *gateway) admit(r *http.Request) (func(), error) {
	host := clientOf(r)
	g.mu.Lock()
	ch := g.clients[host]
	if ch == nil {
		ch = make(chan struct{}, g.o.PerClient)
		g.clients[host] = ch
	}
	g.mu.Unlock()
	select {
	case ch <- struct{}{}:
		return func() {
			<-ch
			g.mu.Lock()
			if len(ch) == 0 && g.clients[host] == ch {
				delete(g.clients, host) // a client gone leaves nothing behind
			}
			g.mu.Unlock()
		}, nil
	case <-r.Context().Done():
		return nil, r.Context().Err()
	}
}

// fetch fetches u for a request, within the host's share of connections
// and the gateway's rules.
func (g *gateway) fetch(r *http.Request, u *url.URL, offset int64) (*fetch.Response, func(), error) {
	if replayOf(r) != nil {
		return g.replayFetch(r, u, offset)
	}
	if err := g.check(u); err != nil {
		return nil, nil, err
	}
	select {
	case g.upstream <- struct{}{}:
	case <-r.Context().Done():
		return nil, nil, context.Cause(r.Context())
	}
	hostRelease, err := g.hosts.Slot(r.Context(), u.Scheme+"://"+strings.ToLower(u.Site()))
	if err != nil {
		<-g.upstream
		return nil, nil, err
	}
	release := sync.OnceFunc(func() { hostRelease(); <-g.upstream })
	// Anonymous: a visitor is answered with what the URL carries, never
	// with the credentials the Client holds for the one running it.
	// A HEAD asks for the metadata alone: FTP's SIZE and MDTM, no RETR.
	fo := fetch.FetchOptions{Offset: offset, Anonymous: true, HeadOnly: r.Method == http.MethodHead}
	fu := u
	if r.URL.Query().Get("view") == "default" && g.menuScheme(u.Scheme) {
		// A Gopher+ item (its menu line flagged "+"): its default view,
		// whose length the server states, so that the object goes with
		// its Content-Length.
		if pu, err := gopher.WithPlus(u, "+"); err == nil {
			fu = pu
		}
	}
	resp, err := g.c.FetchWith(r.Context(), fu, fo)
	if err != nil && fu != u {
		resp, err = g.c.FetchWith(r.Context(), u, fo) // no Gopher+ after all
	}
	if err != nil {
		release()
		return nil, nil, err
	}
	// The answer has begun when its first byte has come (or its end):
	// only then is the request's Timeout over, and a page or an object
	// sent; a server that says nothing until then gets a 504.
	br := bufio.NewReaderSize(resp.Body, 4096)
	if _, err := br.Peek(1); err != nil && err != io.EOF {
		resp.Body.Close()
		release()
		return nil, nil, err
	}
	if t, ok := r.Context().Value(timerKey{}).(*time.Timer); ok {
		t.Stop()
	}
	resp.Body = peeked{br, resp.Body}
	return resp, release, nil
}

// timerKey is the context key of a request's Timeout timer.
type timerKey struct{}

// peeked is a body whose first bytes were read ahead; its WriteTo passes
// the rest to the body's own (a splice, where the body can).
type peeked struct {
	*bufio.Reader
	io.Closer
}

// open fetches u for the page of shown; on failure it answers with the
// error and returns nil. done closes the body and gives the host's
// connection back.
func (g *gateway) open(w *logWriter, r *http.Request, u, shown *url.URL) (resp *fetch.Response, done func()) {
	resp, release, err := g.fetch(r, u, 0)
	if err != nil {
		if a, b := u.Redacted(), shown.Redacted(); a != b {
			err = renamed{err, strings.ReplaceAll(err.Error(), a, b)} // the URL of the page, not the one fetched for it
		}
		g.fetchFailed(w, r, shown, err)
		return nil, nil
	}
	return resp, func() {
		resp.Body.Close()
		release()
	}
}

// renamed is an error with its text changed and its kind kept.
type renamed struct {
	err  error
	text string
}

func (e renamed) Error() string { return e.text }
func (e renamed) Unwrap() error { return e.err }

// check applies the gateway's rules that a URL alone decides.
func (g *gateway) check(u *url.URL) error {
	if sc, ok := paged(g.c, u.Scheme); !ok || sc.Local {
		if _, known := g.c.Scheme(u.Scheme); !known {
			if near := fetch.NearScheme(u.Scheme, pagedNames(g.c)); near != "" {
				return fmt.Errorf("%w: %s: URLs are not served here (did you mean %s:?)", ErrRefused, u.Scheme, near)
			}
		}
		return fmt.Errorf("%w: %s: URLs are not served here", ErrRefused, u.Scheme)
	}
	if u.HasAuthority && !allowed(g.o.Allow, u) { // news: names no server: the operator's news server
		if anyPort := *u; allowedHost(g.o.Allow, &anyPort) {
			return fmt.Errorf("%w: port %d of %s is not among those this gateway serves (it serves %s)", ErrRefused, u.PortNumber(), u.Hostname(), strings.Join(g.o.Allow, ", "))
		}
		return fmt.Errorf("%w: %s is not among the hosts this gateway serves", ErrRefused, u.Hostname())
	}
	return nil
}

// redirect sends the reader to a page path as it is: http.Redirect would
// clean it, folding the "//" of /file//srv/... (a file: URL's empty host)
// and of FTP's empty segments.
func redirect(w http.ResponseWriter, p string) {
	w.Header().Set("Location", p)
	w.WriteHeader(http.StatusFound)
}

// proxy answers a request in absolute form with the raw object, as the
// CERN gateways answered clients configured to use them as a proxy.
func (g *gateway) proxy(w *logWriter, r *http.Request) {
	u, err := url.Parse(r.URL.String())
	if err != nil {
		g.fail(w, r, http.StatusBadRequest, err.Error())
		return
	}
	if sc, _ := g.c.Scheme(u.Scheme); sc.Local {
		g.fail(w, r, http.StatusForbidden, u.Scheme+": is not served through the proxy")
		return
	}
	if _, ok := paged(g.c, u.Scheme); ok && wantsHTML(r) {
		// A browser (lynx: gopher_proxy=...) gets a menu or a listing as
		// a page, as the CERN proxies answered browsers, its links the
		// gateway's own pages at its own address. A client
		// that does not ask for HTML (curl, wget) gets the raw object.
		g.object(w, r.WithContext(context.WithValue(r.Context(), proxiedKey{}, true)), u)
		return
	}
	g.raw(w, r, u, false)
}

// proxiedKey marks a request made to the gateway as a proxy, whose pages
// link the URLs themselves.
type proxiedKey struct{}

func proxied(r *http.Request) bool {
	p, _ := r.Context().Value(proxiedKey{}).(bool)
	return p
}

// ownBase is the gateway's own address, as the connection a proxied
// request came on has it ("http://127.0.0.1:8070"): its pages link the
// gateway's pages there, which a browser asks for directly, since a
// path alone would be taken as the proxied URL's own.
func ownBase(r *http.Request) string {
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		return "http://" + a.String() + basePath(r)
	}
	return ""
}

// wantsHTML reports whether the request's Accept names text/html itself
// (with a weight above 0), as browsers' do; "*/*" alone is not asking.
func wantsHTML(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		typ, params, _ := strings.Cut(part, ";")
		if !strings.EqualFold(strings.TrimSpace(typ), "text/html") {
			continue
		}
		for _, p := range strings.Split(params, ";") {
			if k, v, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.EqualFold(k, "q") {
				if q, err := strconv.ParseFloat(v, 64); err == nil && q == 0 {
					return false
				}
			}
		}
		return true
	}
	return false
}

// raw sends the object itself: its media type, length, modification time,
// the range a GET asks for (RFC 9110 §14: "bytes=N-M", "bytes=N-" or
// "bytes=-N", of any scheme; If-Range as §13.1.5 has it), and as an
// attachment when download is set. A request of several ranges, or one
// whose If-Range does not match, is answered with the whole object.
func (g *gateway) raw(w *logWriter, r *http.Request, u *url.URL, download bool) {
	rng, ranged := byterange.Parse(r.Header.Get("Range"))
	ranged = ranged && r.Method == http.MethodGet // GET is the only method with ranges
	offset := int64(0)
	if ranged {
		offset = rng.Start()
	}
	if ranged && rng.Suffix > 0 {
		// Where the metadata gives the length (FTP's SIZE, HTTP's HEAD),
		// the suffix's first byte is asked for at once, rather than after
		// a transfer from the start, which FTP would have to abort.
		head := r.Clone(r.Context())
		head.Method = http.MethodHead
		if hr, hrelease, err := g.fetch(head, u, 0); err == nil {
			if first, _, ok := rng.Bounds(hr.Size); ok && hr.Size > 0 {
				offset = first
			}
			hr.Body.Close()
			hrelease()
		}
	}
	resp, release, err := g.fetch(r, u, offset)
	if err != nil {
		g.fetchFailed(w, r, u, err)
		return
	}
	defer func() { release() }()
	defer func() { resp.Body.Close() }()
	// again fetches the object anew from start, in place of resp.
	again := func(start int64) bool {
		resp.Body.Close()
		release()
		if resp, release, err = g.fetch(r, u, start); err != nil {
			resp, release = &fetch.Response{Body: io.NopCloser(strings.NewReader(""))}, func() {}
			g.fetchFailed(w, r, u, err)
			return false
		}
		return true
	}
	if ranged && !byterange.IfRange(r.Header.Get("If-Range"), resp.ModTime, resp.ETag) {
		// Changed since the client's copy, or not known to be the same:
		// the whole object, never its new bytes joined to old ones.
		ranged = false
		if resp.Offset > 0 && !again(0) {
			return
		}
	}
	if ranged && rng == (byterange.Range{First: 0, Last: -1}) && resp.Size < 0 {
		ranged = false // the whole object, streamed as it comes, rather than read ahead to name its length
	}
	if !ranged {
		g.send(w, r, resp, download, nil)
		return
	}
	var part byterange.Part
	switch {
	case rng.Suffix > 0 && resp.Size < 0:
		part, err = byterange.Suffix(resp.Body, rng.Suffix)
	case rng.Suffix > 0:
		// Asked from its first byte where the head gave the length; else
		// the length came with the object, and it is asked again there.
		first, _, ok := rng.Bounds(resp.Offset + resp.Size)
		if ok && first != resp.Offset && (first < resp.Offset || offset == 0) && !again(first) {
			return
		}
		part, err = byterange.Cut(resp.Body, resp.Offset, resp.Size, max(first, resp.Offset), -1)
	default:
		// Where the protocol did not start at the range (Gopher, an FTP
		// server without REST) the bytes before it are skipped here, so
		// that a browser can still seek and resume.
		part, err = byterange.Cut(resp.Body, resp.Offset, resp.Size, rng.First, rng.Last)
	}
	defer part.Close()
	switch {
	case errors.Is(err, byterange.ErrPastEnd):
		w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", part.Total))
		g.fail(w, r, http.StatusRequestedRangeNotSatisfiable, "the range begins past the end")
	case err != nil:
		g.fail(w, r, http.StatusBadGateway, url.RedactString(err.Error()))
	default:
		g.send(w, r, resp, download, &part)
	}
}

// object answers for the page of an object: a listing or an article as
// a page, anything else as it is.
func (g *gateway) object(w *logWriter, r *http.Request, u *url.URL) {
	if r.Header.Get("Range") != "" {
		g.raw(w, r, u, false)
		return
	}
	resp, done := g.open(w, r, u, u)
	if resp == nil {
		return
	}
	defer done()
	switch {
	case resp.Kind == fetch.KindDirectory || resp.Kind == fetch.KindArticleList:
		g.listingPage(w, r, u, resp)
	case resp.MediaType == "message/news" || resp.MediaType == "message/rfc822":
		g.textFrom(w, r, u, resp, "", true)
	case resp.Kind == fetch.KindSearchIndex && resp.Prompt != "":
		g.inputForm(w, r, u, resp)
	default:
		g.send(w, r, resp, false, nil)
	}
}

// inputForm is the page of a server's question (Gemini's 10 and 11): a
// form whose answer (?input=) becomes the URL's query, a password field
// for a sensitive one.
func (g *gateway) inputForm(w *logWriter, r *http.Request, u *url.URL, resp *fetch.Response) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	h := headFor(u, protocols.Printable(resp.Prompt), r)
	h.Raw, h.Download, h.Base = "", "", w.base
	pages().ExecuteTemplate(w, "input", struct {
		Head      head
		Prompt    string
		Sensitive bool
	}{h, protocols.Printable(resp.Prompt), resp.Sensitive})
}

// send writes a fetched object as it is, or the part of it cut for a
// range (206) when part is set.
func (g *gateway) send(w *logWriter, r *http.Request, resp *fetch.Response, download bool, part *byterange.Part) {
	h := w.Header()
	body := io.Reader(resp.Body)
	if part != nil {
		body = part.Body
	}
	ctype := mediaType(resp)
	if resp.Charset != "" && strings.HasPrefix(ctype, "text/") && !strings.Contains(ctype, "charset") {
		ctype += "; charset=" + resp.Charset // as the server named it
	}
	if strings.HasPrefix(ctype, "text/") && !strings.Contains(ctype, "charset") {
		br := bufio.NewReaderSize(body, 64<<10)
		first, _ := br.Peek(64 << 10)
		charset := "utf-8"
		if !validUTF8Prefix(first) {
			charset = "iso-8859-1"
		}
		ctype += "; charset=" + charset
		body = br
	}
	h.Set("Content-Type", ctype)
	h.Set("Content-Security-Policy", rawCSP)
	if !resp.ModTime.IsZero() {
		h.Set("Last-Modified", resp.ModTime.UTC().Format(http.TimeFormat))
	}
	if resp.ETag != "" {
		h.Set("ETag", resp.ETag)
	}
	if resp.Name != "" {
		disp := "inline"
		if download {
			disp = "attachment"
		}
		h.Set("Content-Disposition", disp+"; filename*=UTF-8''"+url.EscapeSegment(resp.Name))
	}
	size := resp.Size
	status := http.StatusOK
	h.Set("Accept-Ranges", "bytes") // where the protocol cannot resume, the gateway skips (byterange.Cut)
	if part != nil {
		total := "*"
		if part.Total >= 0 {
			total = strconv.FormatInt(part.Total, 10)
		}
		h.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%s", part.First, part.Last, total))
		size = part.Last - part.First + 1
		status = http.StatusPartialContent
	}
	if size >= 0 {
		h.Set("Content-Length", strconv.FormatInt(size, 10))
	}
	if wt, ok := body.(io.WriterTo); ok && body == io.Reader(resp.Body) && size >= 1<<20 && r.Method == http.MethodGet && r.ProtoMajor == 1 {
		if g.sendOnConn(w, status, wt) {
			return
		}
	}
	w.WriteHeader(status)
	if r.Method == http.MethodHead {
		return
	}
	buf := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(buf)
	io.CopyBuffer(w, struct{ io.Reader }{body}, *buf)
}

// sendOnConn sends a large object on the client's connection itself,
// taken over from the HTTP server, so that the body can move from the
// server's socket to the client's without passing through the gateway's
// memory (splice(2), where the protocol's body can); the connection is
// then closed. It reports false, having sent nothing, when the connection
// cannot be taken over (HTTP/2, a wrapped writer).
func (g *gateway) sendOnConn(w *logWriter, status int, body io.WriterTo) bool {
	conn, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return false
	}
	defer conn.Close()
	h := w.Header().Clone()
	h.Set("Connection", "close")
	h.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	fmt.Fprintf(brw.Writer, "HTTP/1.1 %d %s\r\n", status, http.StatusText(status))
	h.Write(brw.Writer)
	brw.Writer.WriteString("\r\n")
	w.status, w.written = status, true
	if err := brw.Writer.Flush(); err != nil {
		return true
	}
	n, _ := body.WriteTo(conn)
	w.bytes = n
	return true
}

// copyBuffers carry objects to the client in large writes: at loopback
// speeds the number of writes, not the bytes, is what costs.
var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 1<<20); return &b }}

// mediaType is the Content-Type of an object sent as it is.
func mediaType(resp *fetch.Response) string {
	if resp.MediaType == "" {
		return "application/octet-stream"
	}
	return resp.MediaType
}

// fetchFailed answers a retrieval that failed with a status that says
// why, and the error on one line.
func (g *gateway) fetchFailed(w *logWriter, r *http.Request, u *url.URL, err error) {
	var fe *protocols.FolderError
	if errors.As(err, &fe) && replayOf(r) == nil {
		// A folder without its closing slash: to the folder, as nginx
		// sends /dir to /dir/.
		to := fe.Folder.String()
		if !r.URL.IsAbs() {
			to = pageOf(r, fe.Folder)
		}
		w.Header().Set("Location", to)
		w.WriteHeader(http.StatusMovedPermanently)
		return
	}
	status := http.StatusBadGateway
	var ref *refusal
	if errors.As(err, &ref) {
		// One answer whatever the scheme: the URL of the page and why
		// (an FTP dial refused is no protocol error, a Gopher one no
		// network failure).
		err = fmt.Errorf("%s: %w", u.Redacted(), ref)
	}
	switch {
	case errors.Is(err, ErrRefused), errors.Is(err, fetch.ErrUnsafePort):
		status = http.StatusForbidden
	case errors.Is(err, fetch.ErrNotFound):
		status = http.StatusNotFound
	case errors.Is(err, fetch.ErrPermission), errors.Is(err, fetch.ErrAuth):
		status = http.StatusForbidden
	case errors.Is(err, fetch.ErrBadURL):
		status = http.StatusBadRequest
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, fetch.ErrTimeout), errors.Is(context.Cause(r.Context()), context.DeadlineExceeded):
		status = http.StatusGatewayTimeout
		if errors.Is(context.Cause(r.Context()), context.DeadlineExceeded) {
			err = fmt.Errorf("%s: no answer within %v", u.Redacted(), g.o.Timeout)
		}
	}
	g.fail(w, r, status, url.RedactString(err.Error()))
}

// logWriter counts what a response sends, for the access log.
type logWriter struct {
	http.ResponseWriter
	base    string // Options.BasePath, for the pages' own links
	status  int
	bytes   int64
	written bool
}

func (w *logWriter) WriteHeader(code int) {
	if !w.written {
		w.status, w.written = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.written = true
	n, err := w.ResponseWriter.Write(p)
	w.bytes += int64(n)
	return n, err
}

// Flush sends what is written so far: a page renders as it streams.
func (w *logWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// userinfo matches the user:password@ of a URL in a request line.
var userinfo = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`((?:^|[/:])[^/:@?#\s]*):[^/@?#\s]*@`) })

// redact hides the passwords of the URLs in a request target.
func redact(s string) string {
	s = url.RedactString(s)
	return userinfo().ReplaceAllString(s, "$1:***@")
}

// redactTarget hides the passwords of a request target: in its path
// (/ftp/alice:secret@h/) and in its ?url= parameter, encoded or not.
func redactTarget(t string) string {
	p, q, hasQuery := strings.Cut(t, "?")
	p = redact(p)
	if !hasQuery {
		return p
	}
	kvs := strings.Split(q, "&")
	for i, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if d, err := neturl.QueryUnescape(v); err == nil && d != v {
			if rd := redact(d); rd != d {
				kvs[i] = k + "=" + neturl.QueryEscape(rd)
				continue
			}
		}
		kvs[i] = k + "=" + redact(v)
	}
	return p + "?" + strings.Join(kvs, "&")
}

// logRequest writes the access log line of a request.
func (g *gateway) logRequest(r *http.Request, w *logWriter, start time.Time) {
	if g.o.Log == nil {
		return
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	target := redactTarget(r.RequestURI)
	var line []byte
	if g.o.LogJSON {
		line, _ = json.Marshal(map[string]any{
			"time": start.UTC().Format(time.RFC3339Nano), "client": host, "method": r.Method, "target": target,
			"proto": r.Proto, "status": w.status, "bytes": w.bytes, "seconds": time.Since(start).Seconds(),
		})
	} else {
		line = fmt.Appendf(nil, "%s - - [%s] %q %d %d", host, start.Format("02/Jan/2006:15:04:05 -0700"), r.Method+" "+target+" "+r.Proto, w.status, w.bytes)
	}
	g.logMu.Lock()
	defer g.logMu.Unlock()
	g.o.Log.Write(append(line, '\n'))
}

// file serves a URL of this machine's files (file:, Scheme.Local) from
// AllowFile, through an os.Root: never a path out of it, a symbolic link
// out included.
func (g *gateway) file(w *logWriter, r *http.Request, u *url.URL) {
	if g.root == nil {
		g.fail(w, r, http.StatusForbidden, u.Scheme+": is not served here (deref serve --allow-file DIR serves a folder)")
		return
	}
	fp, err := u.File()
	if err != nil || (fp.Host != "" && fp.Host != "localhost") {
		g.fail(w, r, http.StatusForbidden, u.Scheme+": URLs name this machine's files only")
		return
	}
	abs, _ := filepath.Abs(g.o.AllowFile)
	rel, err := filepath.Rel(abs, filepath.FromSlash(fp.Path))
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		g.fail(w, r, http.StatusForbidden, u.Scheme+": outside the folder served")
		return
	}
	f, err := g.root.Open(rel)
	if err != nil {
		g.fail(w, r, http.StatusForbidden, u.Scheme+": "+strings.TrimPrefix(err.Error(), "open "))
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		g.fail(w, r, http.StatusForbidden, u.Scheme+": "+err.Error())
		return
	}
	if st.IsDir() {
		g.fileFolder(w, r, u, f, rel == ".")
		return
	}
	http.ServeContent(w, r, st.Name(), st.ModTime(), f)
}

// fileFolder lists a folder below AllowFile as an FTP folder is listed:
// name, size and time, each name a link to its page; "up" only while
// still inside the folder served.
func (g *gateway) fileFolder(w *logWriter, r *http.Request, u *url.URL, f *os.File, top bool) {
	if !strings.HasSuffix(u.Path, "/") {
		redirect(w, pageOf(r, u)+"/") // so that the page's relative sense holds, as a web server does
		return
	}
	des, err := f.ReadDir(-1)
	if err != nil {
		g.fail(w, r, http.StatusForbidden, u.Scheme+": "+err.Error())
		return
	}
	slices.SortFunc(des, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	rows := make([]item, 0, len(des))
	for _, de := range des {
		v := *u
		v.Path = u.Path + url.EscapeSegment(de.Name())
		it := item{Name: protocols.Printable(de.Name())}
		if de.IsDir() {
			v.Path += "/"
			it.Name += "/"
		} else if info, err := de.Info(); err == nil {
			it.Size = sizeText(info.Size())
		}
		if info, err := de.Info(); err == nil {
			it.Time = timeText(info.ModTime())
		}
		it.Link = pageOf(r, &v)
		rows = append(rows, it)
	}
	h := head{Title: "Index of " + u.Path, URL: u.Redacted()}
	if !top {
		h.Parent = parentPage(r, u)
	}
	startPage(w, h)
	pages().ExecuteTemplate(w, "listing", rows)
	endPage(w)
}
