// Package http dereferences http: and https: URLs with net/http, and any
// URL through an HTTP proxy or gateway that accepts absolute-form requests
// (RFC 1738 §4 asks clients to offer that).
//
// One Fetch is one HTTP transaction: redirects are returned as such
// (KindRedirect with Location) for the engine to follow or refuse.
package http

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	nethttp "net/http"
	"net/http/httptrace"
	"net/http/httputil"
	neturl "net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// Fetcher performs HTTP GET requests. Its zero value is ready to use; it
// keeps connections alive between requests to the same server.
type Fetcher struct {
	// UserAgent is sent as User-Agent; empty means "deref".
	UserAgent string

	mu         sync.Mutex
	transports map[transportKey]*nethttp.Transport
	digests    map[digestKey]*digestSession // Digest logins servers accepted
	pool       connPool
}

type transportKey struct {
	proxy string
	tls   *tls.Config
}

type dialKey struct{}

// StatusError is an HTTP reply other than success or redirect. It
// unwraps to the sentinel that fits its code.
type StatusError struct {
	Code   int
	Status string
	// Retry is how long a 429 or 503 reply's Retry-After asks the client
	// to wait; 0 when it gave none.
	Retry time.Duration
	kind  error
}

// RetryAfter returns how long the server asked the client to wait before
// trying again (Retry-After), or 0.
func (e *StatusError) RetryAfter() time.Duration { return e.Retry }

// retryAfter reads a Retry-After value: seconds or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
		return time.Duration(min(n, 86400)) * time.Second
	}
	if t, err := nethttp.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), 24*time.Hour)
	}
	return 0
}

// Error gives the kind of failure and the response's status line.
func (e *StatusError) Error() string { return e.kind.Error() + ": HTTP " + e.Status }

// Unwrap returns the sentinel error of the status class.
func (e *StatusError) Unwrap() error { return e.kind }

func statusKind(code int) error {
	switch code {
	case 401, 407:
		return protocols.ErrAuth
	case 403:
		return protocols.ErrPermission
	case 404, 410:
		return protocols.ErrNotFound
	case 408, 429:
		return protocols.ErrTemporary
	case 416:
		return protocols.ErrRangeNotSatisfied
	case 501, 505:
		return protocols.ErrProtocol
	}
	if code >= 500 && code < 600 {
		return protocols.ErrTemporary // the server's trouble, worth another try later
	}
	return protocols.ErrProtocol
}

func (f *Fetcher) transport(req *protocols.Request, direct bool) *nethttp.Transport {
	key := transportKey{tls: req.TLS}
	if req.Proxy != nil && !direct {
		key.proxy = req.Proxy.String()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if t, ok := f.transports[key]; ok {
		return t
	}
	t := &nethttp.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if d, ok := ctx.Value(dialKey{}).(protocols.DialFunc); ok && d != nil {
				return d(ctx, network, addr)
			}
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
		TLSClientConfig:     req.TLS,
		ForceAttemptHTTP2:   true,
		DisableCompression:  true, // the object byte for byte, as curl gives it
		MaxIdleConnsPerHost: 8,
		IdleConnTimeout:     90 * time.Second,
	}
	if key.proxy != "" {
		p, err := neturl.Parse(key.proxy)
		if err == nil {
			t.Proxy = nethttp.ProxyURL(p)
		}
	}
	if f.transports == nil {
		f.transports = make(map[transportKey]*nethttp.Transport)
	}
	f.transports[key] = t
	return t
}

// CloseIdleConnections closes the connections kept alive.
func (f *Fetcher) CloseIdleConnections() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, t := range f.transports {
		t.CloseIdleConnections()
	}
	f.pool.closeAll()
}

// Fetch sends one GET request. An http: or https: URL goes to its server
// (or through req.Proxy); any other scheme needs req.Proxy, a gateway that
// takes the absolute URL in its request line.
func (f *Fetcher) Fetch(ctx context.Context, req *protocols.Request) (*protocols.Response, error) {
	u := req.URL
	target := *u
	target.HasFragment, target.Fragment = false, "" // the fragment is never sent
	target.User = nil
	web := u.Scheme == "http" || u.Scheme == "https"
	var hreq *nethttp.Request
	var err error
	direct := false
	method := "GET"
	if req.HeadOnly {
		method = "HEAD"
	}
	if web {
		if target.Path == "" {
			target.Path = "/"
		}
		hreq, err = nethttp.NewRequestWithContext(ctx, method, target.String(), nil)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", protocols.ErrBadURL, err)
		}
	} else {
		if req.Proxy == nil {
			return nil, fmt.Errorf("%w: %s needs a gateway to be fetched over HTTP", protocols.ErrUnsupportedScheme, u.Scheme)
		}
		// An absolute-form request line through the gateway: the transport
		// dials the gateway itself and writes Opaque as the request target.
		p := req.Proxy
		hreq, err = nethttp.NewRequestWithContext(ctx, method, p.Scheme+"://"+p.HostPort()+"/", nil)
		if err != nil {
			return nil, fmt.Errorf("%w: gateway: %w", protocols.ErrBadURL, err)
		}
		hreq.URL.Opaque = target.String()
		hreq.Host = u.Host
		if pu := p.User; pu != nil {
			pw, _ := pu.Password()
			hreq.Header.Set("Proxy-Authorization", basic(pu.Username(), pw))
		}
		direct = true
	}
	ua := f.UserAgent
	if ua == "" {
		ua = "deref"
	}
	hreq.Header.Set("User-Agent", ua)
	hreq.Header.Set("Accept", "*/*")
	replaced := map[string]bool{}
	for _, h := range req.Header {
		// A field deref sets itself is replaced, others are added (a name
		// may repeat); an empty value removes the field, as curl's -H
		// "Name:" does.
		k := nethttp.CanonicalHeaderKey(h[0])
		switch {
		case h[1] == "":
			hreq.Header.Del(k)
		case !replaced[k] && hreq.Header.Get(k) != "":
			hreq.Header.Set(k, h[1])
		default:
			hreq.Header.Add(k, h[1])
		}
		replaced[k] = true
	}
	var password string // of req.Credentials, once known
	if c := req.Credentials; c.HasUser {
		password = c.Password
		if !c.HasPassword && c.Prompt != nil {
			if password, err = c.Prompt(ctx, c.User); err != nil {
				return nil, err
			}
		}
	}
	// The request line names the absolute URL to a gateway, and to the
	// proxy asked for an http: URL; an https: URL goes through a CONNECT
	// tunnel, and the server gets the path. (A SOCKS proxy is a dialer:
	// its requests take the own-connection path.)
	own := web && req.Proxy == nil
	absolute := !own && (!web || u.Scheme == "http")
	// A Digest login the server accepted before is answered before it
	// is asked for again (see digestSession); else Basic goes with the
	// request where it is to.
	var dkey digestKey
	if c := req.Credentials; c.HasUser {
		sent := false
		if web {
			dkey = digestKey{origin: u.Scheme + "://" + strings.ToLower(hreq.URL.Host), user: c.User}
			var auth string
			if auth, sent = f.nextDigest(dkey, password, hreq.Method, requestTarget(hreq, absolute)); sent {
				hreq.Header.Set("Authorization", auth)
			}
		}
		if !sent && req.HTTPAuth == protocols.AuthBasic {
			hreq.SetBasicAuth(c.User, password)
		}
	}
	given := hreq.Header.Get("Cookie") // from req.Header
	addCookies := func(hreq *nethttp.Request) {
		if req.Jar == nil || !web {
			return
		}
		// Joined after a Cookie field of req.Header, in the same field, and
		// sent as the jar has them (net/http's AddCookie would drop, and
		// log, the bytes RFC 6265 leaves out of a value, which servers set
		// and browsers send back).
		var pairs []string
		if given != "" {
			pairs = append(pairs, given)
		}
		for _, c := range req.Jar.Cookies(hreq.URL) {
			pairs = append(pairs, c.Name+"="+c.Value)
		}
		if len(pairs) > 0 {
			hreq.Header.Set("Cookie", strings.Join(pairs, "; "))
		}
	}
	keepCookies := func(resp *nethttp.Response) {
		if req.Jar != nil && web {
			if cs := resp.Cookies(); len(cs) > 0 {
				req.Jar.SetCookies(hreq.URL, cs)
			}
		}
	}
	addCookies(hreq)
	asked := req.Compressed && req.Offset == 0 && req.Length == 0 && !req.HeadOnly && hreq.Header.Get("Accept-Encoding") == ""
	if asked {
		hreq.Header.Set("Accept-Encoding", "gzip")
	}
	if !req.IfModifiedSince.IsZero() {
		hreq.Header.Set("If-Modified-Since", req.IfModifiedSince.UTC().Format(nethttp.TimeFormat))
	}
	if req.IfNoneMatch != "" {
		hreq.Header.Set("If-None-Match", req.IfNoneMatch)
	}
	switch {
	case req.Length > 0:
		hreq.Header.Set("Range", "bytes="+strconv.FormatInt(req.Offset, 10)+"-"+strconv.FormatInt(req.Offset+req.Length-1, 10))
	case req.Offset > 0:
		hreq.Header.Set("Range", "bytes="+strconv.FormatInt(req.Offset, 10)+"-")
	}
	send := func(hreq *nethttp.Request) (*nethttp.Response, error) {
		hctx := context.WithValue(ctx, dialKey{}, req.Dial)
		if own {
			return f.rawRoundTrip(ctx, req, hreq.WithContext(hctx))
		}
		if req.Trace != nil {
			hctx = httptrace.WithClientTrace(hctx, clientTrace(req, hreq, absolute))
		}
		hreq = hreq.WithContext(hctx)
		resp, err := f.transport(req, direct).RoundTrip(hreq)
		if err == nil {
			traceResponse(req, resp) // the own-connection path traces the head as it comes
			if req.Exchange != nil {
				keepHeads(req.Exchange, hreq, resp, absolute)
			}
		}
		return resp, err
	}
	resp, err := send(hreq)
	if err == nil && resp.StatusCode == 401 && req.Credentials.HasUser {
		// The server's challenge, answered once: Digest where it offers
		// it, Basic where that is all it takes and it was not sent yet.
		if auth, d, ok, aerr := answer(req, hreq, resp, password, absolute); aerr != nil {
			resp.Body.Close()
			return nil, aerr
		} else if ok {
			io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			keepCookies(resp) // a session the challenge began goes with the answer
			again := hreq.Clone(ctx)
			again.Header.Set("Authorization", auth)
			addCookies(again)
			resp, err = send(again)
			if err == nil && dkey.origin != "" && d != nil {
				if resp.StatusCode == 401 {
					f.keepDigest(dkey, nil, 0, "", "", "")
				} else {
					f.keepDigest(dkey, &d.c, d.alg, d.cnonce, password, resp.Header.Get("Authentication-Info"))
				}
			}
		}
	} else if err == nil && dkey.origin != "" {
		f.renewNonce(dkey, resp.Header.Get("Authentication-Info"))
	}
	if err == nil {
		keepCookies(resp)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, protocols.ErrProtocol) {
			return nil, err
		}
		return nil, protocols.NetError(err)
	}
	out, err := f.response(req, resp)
	if err == nil && asked && out.Kind == protocols.KindFile && out.Body != nil && strings.EqualFold(strings.TrimSpace(resp.Header.Get("Content-Encoding")), "gzip") {
		out.Encoding = "gzip"
	}
	return out, err
}

func (f *Fetcher) response(req *protocols.Request, resp *nethttp.Response) (*protocols.Response, error) {
	out := &protocols.Response{
		Kind:   protocols.KindFile,
		Size:   resp.ContentLength,
		Status: resp.Status,
		Name:   protocols.NameFromURL(req.URL, "index.html"),
		ETag:   resp.Header.Get("ETag"),
	}
	if t, err := nethttp.ParseTime(resp.Header.Get("Last-Modified")); err == nil {
		out.ModTime = t
	}
	if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err == nil {
		out.MediaType = mt
	}
	code := resp.StatusCode
	switch {
	case code == 206 && (req.Offset > 0 || req.Length > 0):
		start, ok := contentRangeStart(resp.Header.Get("Content-Range"))
		if !ok || start != req.Offset {
			resp.Body.Close()
			return nil, fmt.Errorf("%w: asked for bytes from %d, got Content-Range %q", protocols.ErrProtocol, req.Offset, resp.Header.Get("Content-Range"))
		}
		out.Offset = start
	case code >= 200 && code < 300:
	case code == 416 && (req.Offset > 0 || req.Length > 0) && totalFromRange(resp.Header.Get("Content-Range")) == req.Offset:
		// Resuming a complete object (or a range of an empty one): nothing
		// left to fetch.
		resp.Body.Close()
		out.Body, out.Size, out.Offset = io.NopCloser(strings.NewReader("")), 0, req.Offset
		return out, nil
	case code == 304 && !req.IfModifiedSince.IsZero():
		resp.Body.Close()
		return nil, fmt.Errorf("%w since %s", protocols.ErrNotModified, req.IfModifiedSince.UTC().Format(nethttp.TimeFormat))
	case code == 304 && req.IfNoneMatch != "":
		resp.Body.Close()
		return nil, fmt.Errorf("%w: the server's copy still has the entity tag %s", protocols.ErrNotModified, req.IfNoneMatch)
	case code >= 300 && code < 400 && resp.Header.Get("Location") != "":
		keepBody(req.Exchange, resp.Body)
		resp.Body.Close()
		loc := resp.Header.Get("Location")
		ref, err := url.ParseReference(url.Canonicalize(loc))
		if err != nil {
			return nil, fmt.Errorf("%w: redirect to a bad Location: %w", protocols.ErrProtocol, err)
		}
		out.Kind, out.Location, out.Body, out.Size = protocols.KindRedirect, req.URL.ResolveReference(ref), nil, -1
		return out, nil
	case code >= 400 && req.ErrorBody:
		out.Failure = &StatusError{Code: code, Status: resp.Status, Retry: retryAfter(resp.Header.Get("Retry-After"), time.Now()), kind: statusKind(code)}
	default:
		if !keepBody(req.Exchange, resp.Body) {
			io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		}
		resp.Body.Close()
		se := &StatusError{Code: code, Status: resp.Status, Retry: retryAfter(resp.Header.Get("Retry-After"), time.Now()), kind: statusKind(code)}
		if code == 401 && req.Credentials.NoPassword() {
			return nil, fmt.Errorf("%w: %s", se, req.PasswordHint(req.Credentials.User))
		}
		return nil, se
	}
	if _, ok := resp.Body.(*rawBody); ok {
		out.Body = resp.Body
	} else {
		out.Body = &body{rc: resp.Body}
	}
	return out, nil
}

// keepHeads keeps the heads of an exchange made through a proxy or a
// gateway, for an archive: as net/http wrote and parsed them, which is
// not byte for byte what went over the wire (field names in canonical
// case, fields the transport adds left out). The request line names the
// absolute URL when the proxy was asked for it (absolute), the path when
// the request went through a tunnel (https).
func keepHeads(ex *protocols.Exchange, hreq *nethttp.Request, resp *nethttp.Response, absolute bool) {
	var b bytes.Buffer
	target := hreq.URL.RequestURI()
	if absolute {
		target = hreq.URL.Opaque
		if target == "" {
			target = hreq.URL.String()
		}
	}
	host := hreq.Host
	if host == "" {
		host = hreq.URL.Host
	}
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", hreq.Method, target, host)
	hreq.Header.Write(&b)
	b.WriteString("\r\n")
	ex.Request = hideAuthorization(b.Bytes())
	if head, err := httputil.DumpResponse(resp, false); err == nil {
		ex.Response = head
	}
}

// keepBody reads the body of a response not passed on into the exchange,
// for an archive, when one is kept; it says whether it read it.
func keepBody(ex *protocols.Exchange, body io.Reader) bool {
	if ex == nil || len(ex.Response) == 0 {
		return false
	}
	b, err := io.ReadAll(io.LimitReader(body, protocols.MaxExchangeBody+1))
	ex.Body, ex.Whole = b, err == nil && len(b) <= protocols.MaxExchangeBody
	return true
}

// body maps a connection that ends before Content-Length to ErrShortBody.
type body struct{ rc io.ReadCloser }

func (b *body) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil && err != io.EOF {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("%w: %w", protocols.ErrShortBody, err)
		} else if !errors.Is(err, context.Canceled) {
			err = protocols.NetError(err)
		}
	}
	return n, err
}

func (b *body) Close() error { return b.rc.Close() }

// contentRangeStart reads the first byte position of "bytes a-b/c".
func contentRangeStart(s string) (int64, bool) {
	s, ok := strings.CutPrefix(s, "bytes ")
	if !ok {
		return 0, false
	}
	a, _, ok := strings.Cut(s, "-")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(a), 10, 64)
	return n, err == nil
}

// totalFromRange reads the length c of "bytes */c"; -1 if absent.
func totalFromRange(s string) int64 {
	_, total, ok := strings.Cut(s, "/")
	if !ok {
		return -1
	}
	n, err := strconv.ParseInt(total, 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// answer returns the Authorization value that answers the 401 resp to
// hreq, and whether there is one: Digest (RFC 7616) where the server
// offers it, else Basic when req.HTTPAuth waited for the challenge.
// The challenge a Digest answer answers is returned too.
func answer(req *protocols.Request, hreq *nethttp.Request, resp *nethttp.Response, password string, absolute bool) (string, *digestAnswer, bool, error) {
	cs := parseChallenges(resp.Header.Values("WWW-Authenticate"))
	user := req.Credentials.User
	if c, alg, ok := pickDigest(cs); ok {
		d := &digestAnswer{c: c, alg: alg, cnonce: newCnonce()}
		auth, err := digestAuthorization(c, alg, user, password, hreq.Method, requestTarget(hreq, absolute), d.cnonce, 1)
		if err != nil {
			return "", nil, false, fmt.Errorf("%w: %w", protocols.ErrAuth, err)
		}
		return auth, d, true, nil
	}
	if req.HTTPAuth == protocols.AuthAny && slices.ContainsFunc(cs, func(c challenge) bool { return c.scheme == "basic" }) {
		return basic(user, password), nil, true, nil
	}
	return "", nil, false, nil
}

// digestAnswer is the challenge a Digest answer answered, and how.
type digestAnswer struct {
	c      challenge
	alg    int
	cnonce string
}

// requestTarget is hreq's request-target as its request line names it,
// which a Digest answer repeats (its uri parameter).
func requestTarget(hreq *nethttp.Request, absolute bool) string {
	if absolute && hreq.URL.Opaque == "" {
		return hreq.URL.String()
	}
	return hreq.URL.RequestURI()
}

func basic(user, pw string) string {
	r := nethttp.Request{Header: nethttp.Header{}}
	r.SetBasicAuth(user, pw)
	return r.Header.Get("Authorization")
}

// clientTrace traces a request that net/http's Transport sends (HTTPS,
// proxies): the connection first, then the request line and header
// fields in the order they are written. The request line names the
// absolute URL when the proxy is asked for it (absolute), as keepHeads
// has it.
func clientTrace(req *protocols.Request, hreq *nethttp.Request, absolute bool) *httptrace.ClientTrace {
	target := hreq.URL.RequestURI()
	if absolute {
		target = hreq.URL.Opaque
		if target == "" {
			target = hreq.URL.String()
		}
	}
	return &httptrace.ClientTrace{
		ConnectStart: func(network, addr string) { req.Tracef(protocols.TraceInfo, "connecting to "+addr) },
		ConnectDone: func(network, addr string, err error) {
			if err == nil {
				req.Tracef(protocols.TraceInfo, "connected to "+addr)
			}
		},
		TLSHandshakeDone: func(st tls.ConnectionState, err error) {
			if err == nil {
				req.Tracef(protocols.TraceInfo, "TLS "+tls.VersionName(st.Version)+", "+tls.CipherSuiteName(st.CipherSuite))
			}
		},
		GotConn: func(ci httptrace.GotConnInfo) {
			if ci.Reused {
				req.Tracef(protocols.TraceInfo, "reusing the connection to "+ci.Conn.RemoteAddr().String())
			}
			req.Tracef(protocols.TraceInfo, "local address "+ci.Conn.LocalAddr().String())
			req.Tracef(protocols.TraceSend, hreq.Method+" "+url.RedactString(target)+" HTTP/1.1")
		},
		WroteHeaderField: func(key string, values []string) {
			for _, v := range values {
				if strings.EqualFold(key, "Authorization") || strings.EqualFold(key, "Proxy-Authorization") {
					v = redactAuth(v)
				}
				req.Tracef(protocols.TraceSend, key+": "+v)
			}
		},
	}
}

// traceHead traces the bytes of a request or response head as they went
// over the wire, a line each, in their order; passwords in Authorization
// fields are hidden.
func traceHead(req *protocols.Request, dir protocols.TraceDir, head []byte) {
	if len(bytes.TrimSpace(head)) == 0 {
		return // nothing came (a kept connection the server had closed): no line to show
	}
	for _, line := range strings.Split(strings.TrimRight(string(head), "\r\n"), "\n") {
		line = hideAuthField(strings.TrimSuffix(line, "\r"))
		if dir == protocols.TraceSend {
			line = redactTarget(line)
		}
		req.Tracef(dir, line)
	}
}

// redactTarget hides a password in a request line's absolute target.
func redactTarget(line string) string {
	m, rest, ok := strings.Cut(line, " ")
	if !ok {
		return line
	}
	target, proto, ok := strings.Cut(rest, " ")
	if !ok || !strings.Contains(target, "@") {
		return line
	}
	return m + " " + url.RedactString(target) + " " + proto
}

// hideAuthField hides the credentials of a head line that is an
// Authorization or Proxy-Authorization field; other lines are as they are.
func hideAuthField(line string) string {
	if k, v, ok := strings.Cut(line, ":"); ok && (strings.EqualFold(k, "Authorization") || strings.EqualFold(k, "Proxy-Authorization")) {
		return k + ": " + redactAuth(strings.TrimSpace(v))
	}
	return line
}

// redactAuth keeps the scheme of an Authorization value and hides the
// credentials.
func redactAuth(v string) string {
	scheme, _, _ := strings.Cut(v, " ")
	return scheme + " xxxxx"
}

// traceResponse traces a response that net/http read: its status line and
// header fields, sorted (net/http keeps no order).
func traceResponse(req *protocols.Request, r *nethttp.Response) {
	if req.Trace == nil {
		return
	}
	req.Tracef(protocols.TraceRecv, r.Proto+" "+r.Status)
	keys := make([]string, 0, len(r.Header))
	for k := range r.Header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range r.Header[k] {
			req.Tracef(protocols.TraceRecv, k+": "+v)
		}
	}
}

// The contracts it claims, checked when it compiles.
var _ protocols.Fetcher = (*Fetcher)(nil)
