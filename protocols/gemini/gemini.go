package gemini

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// Fetcher dereferences gemini: URLs. The zero value is ready to use.
type Fetcher struct {
	// KnownHosts is the file of the keys trusted on first use; "" means
	// DefaultKnownHosts.
	KnownHosts string
	// Sessions caches TLS sessions for resumption; nil means one of 256
	// sessions of the Fetcher's own.
	Sessions tls.ClientSessionCache
	// HeaderTimeout bounds the wait for the header line; 0 means one
	// minute.
	HeaderTimeout time.Duration
	// Ask, when set, answers a capsule's question (10, and 11 for
	// sensitive input, which must not be echoed): the URL is then asked
	// again with the answer as its query, and its answer is the
	// response. Without it, or for a request made for someone else
	// (Request.Anonymous), or a URL that has a query already, the
	// question is the response (KindSearchIndex, Prompt).
	Ask func(ctx context.Context, prompt string, sensitive bool) (string, error)

	once          sync.Once
	sessions      tls.ClientSessionCache
	trusted       sync.Map // "HOST:PORT KEY": a key this Fetcher has verified, by a CA or its pin
	full, resumed atomic.Int64
	now           func() time.Time // for tests of expiry; nil: time.Now
}

// Handshakes reports the TLS handshakes made so far: full ones and
// resumed ones.
func (f *Fetcher) Handshakes() (full, resumed int64) { return f.full.Load(), f.resumed.Load() }

func (f *Fetcher) cache() tls.ClientSessionCache {
	if f.Sessions != nil {
		return f.Sessions
	}
	f.once.Do(func() { f.sessions = tls.NewLRUClientSessionCache(256) })
	return f.sessions
}

func (f *Fetcher) knownHosts() string {
	if f.KnownHosts != "" {
		return f.KnownHosts
	}
	return DefaultKnownHosts()
}

// MaxMeta is the longest META a header may carry.
const MaxMeta = 1024

// maxRequest is the longest request: the URL and CRLF.
const maxRequest = 1024

// StatusError is a header whose status is not a success: its code, its
// META, and the sentinel it maps to.
type StatusError struct {
	Code  int
	Meta  string
	Kind  error
	Retry time.Duration // 44 SLOW DOWN: the wait asked for
	Hint  string
}

// Error says the status, its META, and what to do where there is
// something to do.
func (e *StatusError) Error() string {
	s := fmt.Sprintf("gemini: %v: %d %s", e.Kind, e.Code, printable(e.Meta))
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// Unwrap returns the sentinel.
func (e *StatusError) Unwrap() error { return e.Kind }

// RetryAfter is the wait a 44 asks for (the engine's --retry waits it).
func (e *StatusError) RetryAfter() time.Duration { return e.Retry }

func printable(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return strconv.Quote(s)
		}
	}
	return s
}

func protoErr(format string, args ...any) error {
	return fmt.Errorf("%w: gemini: "+format, append([]any{protocols.ErrProtocol}, args...)...)
}

// statusKind maps a status to the engine's errors.
func statusKind(code int) error {
	switch {
	case code == 51 || code == 52:
		return protocols.ErrNotFound
	case code == 53 || code == 61:
		return protocols.ErrPermission
	case code == 59:
		return protocols.ErrBadURL
	case code == 60 || code == 62:
		return protocols.ErrAuth
	case code/10 == 4:
		return protocols.ErrTemporary
	}
	return protocols.ErrProtocol
}

// Request is the request line of u: its URL without the fragment, CRLF.
func Request(u *url.URL) (string, error) {
	if u.User != nil {
		return "", fmt.Errorf("%w: gemini URLs carry no user name or password", protocols.ErrBadURL)
	}
	v := *u
	v.HasFragment, v.Fragment = false, ""
	if v.Path == "" {
		v.Path = "/"
	}
	s := v.String()
	if len(s)+2 > maxRequest {
		return "", fmt.Errorf("%w: a request of %d bytes, more than Gemini's %d", protocols.ErrBadURL, len(s)+2, maxRequest)
	}
	if strings.ContainsAny(s, "\r\n\x00") {
		return "", fmt.Errorf("%w: a control character in the URL", protocols.ErrBadURL)
	}
	return s + "\r\n", nil
}

// ParseHeader reads a header line, without its line end: two digits, a
// space, the META (at most MaxMeta bytes). A status with no META may end
// after its digits.
func ParseHeader(line string) (code int, meta string, err error) {
	if len(line) < 2 || line[0] < '1' || line[0] > '6' || line[1] < '0' || line[1] > '9' {
		return 0, "", protoErr("a header that is not STATUS META: %s", printable(first(line, 80)))
	}
	code = int(line[0]-'0')*10 + int(line[1]-'0')
	rest := line[2:]
	switch {
	case rest == "":
	case rest[0] == ' ' || rest[0] == '\t':
		meta = rest[1:]
	default:
		return 0, "", protoErr("a header that is not STATUS META: %s", printable(first(line, 80)))
	}
	if len(meta) > MaxMeta {
		return 0, "", protoErr("a META of %d bytes, more than %d", len(meta), MaxMeta)
	}
	return code, meta, nil
}

func first(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// eofConn notes whether the connection under TLS reached its end: once
// a TLS read has given io.EOF, that tells a close_notify (after which
// crypto/tls reads no further) from a connection closed without one.
type eofConn struct {
	net.Conn
	eof atomic.Bool
}

func (c *eofConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err == io.EOF {
		c.eof.Store(true)
	}
	return n, err
}

// Fetch dereferences a gemini: URL.
func (f *Fetcher) Fetch(ctx context.Context, req *protocols.Request) (*protocols.Response, error) {
	u := req.URL
	line, err := Request(u)
	if err != nil {
		return nil, err
	}
	addr := u.HostPort()
	req.Tracef(protocols.TraceInfo, "connecting to "+addr)
	raw, err := req.Dialer()(ctx, "tcp", addr)
	if err != nil {
		return nil, protocols.NetError(err)
	}
	ec := &eofConn{Conn: raw}
	conn := tls.Client(ec, f.config(req, u))
	stop := context.AfterFunc(ctx, func() { raw.SetDeadline(time.Unix(1, 0)) })
	fail := func(err error) (*protocols.Response, error) {
		stop()
		conn.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	timeout := f.HeaderTimeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	raw.SetDeadline(time.Now().Add(timeout))
	if err := conn.HandshakeContext(ctx); err != nil {
		var kc *KeyChangedError
		if errors.As(err, &kc) || errors.Is(err, protocols.ErrPermission) {
			return fail(err)
		}
		return fail(fmt.Errorf("%w: gemini: TLS: %w", protocols.ErrNetwork, err))
	}
	cs := conn.ConnectionState()
	if cs.DidResume {
		f.resumed.Add(1)
	} else {
		f.full.Add(1)
	}
	req.Tracef(protocols.TraceInfo, fmt.Sprintf("%s%s", tls.VersionName(cs.Version), map[bool]string{true: ", session resumed"}[cs.DidResume]))
	req.Tracef(protocols.TraceSend, strings.TrimSuffix(line, "\r\n"))
	if _, err := io.WriteString(conn, line); err != nil {
		return fail(protocols.NetError(err))
	}
	br := bufio.NewReaderSize(conn, 4096)
	hline, head, err := protocols.HeaderLine(br, "gemini")
	if err != nil {
		return fail(err)
	}
	req.Tracef(protocols.TraceRecv, hline)
	code, meta, err := ParseHeader(hline)
	if err != nil {
		return fail(err)
	}
	if req.Exchange != nil && code/10 == 2 {
		mt, _, _ := mime.ParseMediaType(meta)
		if meta == "" {
			mt = "text/gemini"
		}
		*req.Exchange = protocols.Exchange{Request: []byte(line), Response: []byte(string(head)), IP: hostOf(raw.RemoteAddr()),
			Type: "application/gemini", Status: strconv.Itoa(code), PayloadType: mt,
			Protocol: []string{"gemini", strings.ToLower(strings.ReplaceAll(tls.VersionName(cs.Version), "TLS ", "tls/"))}}
	}
	raw.SetDeadline(time.Time{})
	body := &protocols.ConnBody{Conn: conn, R: br, Stop: stop, Raw: raw, EOF: func() error {
		if ec.eof.Load() { // the TCP connection ended, not TLS: no close_notify came
			return fmt.Errorf("%w: gemini: the connection closed without TLS's close_notify", protocols.ErrShortBody)
		}
		return nil
	}}
	switch code / 10 {
	case 1:
		body.Close()
		if f.Ask != nil && !req.Anonymous && !u.HasQuery {
			return f.answer(ctx, req, meta, code == 11)
		}
		return &protocols.Response{Kind: protocols.KindSearchIndex, Size: -1, Status: hline, Prompt: meta, Sensitive: code == 11, Body: io.NopCloser(strings.NewReader(""))}, nil
	case 2:
		mt, params, err := mime.ParseMediaType(meta)
		if meta == "" {
			mt, err = "text/gemini", nil // the specification's default
		}
		if err != nil {
			mt = "application/octet-stream"
		}
		resp := &protocols.Response{Kind: protocols.KindFile, Size: -1, MediaType: mt, Charset: params["charset"], Status: hline, Name: SuggestedName(u), Body: body}
		if mt == "text/gemini" && !req.HeadOnly {
			b, err := io.ReadAll(io.LimitReader(body, req.ListingLimit()+1))
			body.Close()
			if err != nil {
				return nil, err
			}
			if int64(len(b)) > req.ListingLimit() {
				return nil, fmt.Errorf("%w: gemini: a page over %d bytes", protocols.ErrTooLarge, req.ListingLimit())
			}
			resp.Kind, resp.Size, resp.Entries = protocols.KindDirectory, int64(len(b)), Links(u, string(b))
			resp.Body = io.NopCloser(bytes.NewReader(b))
		}
		return resp, nil
	case 3:
		body.Close()
		ref, err := url.ParseReference(url.Canonicalize(strings.TrimSpace(meta)))
		if err != nil {
			return nil, protoErr("a redirect to %s: %v", printable(meta), err)
		}
		return &protocols.Response{Kind: protocols.KindRedirect, Location: u.ResolveReference(ref), Status: hline, Size: -1, Body: io.NopCloser(strings.NewReader(""))}, nil
	}
	body.Close()
	se := &StatusError{Code: code, Meta: meta, Kind: statusKind(code)}
	switch code {
	case 44:
		s, _ := strconv.Atoi(strings.TrimSpace(meta))
		se.Retry = time.Duration(max(s, 1)) * time.Second
		se.Hint = fmt.Sprintf("slow down: wait %ds", max(s, 1))
	case 60:
		se.Hint = "the capsule asks for a client certificate: give one with --cert FILE --key FILE"
		if req.TLS != nil && (len(req.TLS.Certificates) > 0 || req.TLS.GetClientCertificate != nil) {
			se.Hint = "the certificate given was not taken"
		}
	}
	if code/10 != 4 && code/10 != 5 && code/10 != 6 {
		se.Kind = protocols.ErrProtocol
	}
	return nil, se
}

// answer asks the question with Ask and the URL again with the answer
// as its query. A sensitive answer is hidden in the trace, as a password
// is, and its exchange is not archived (its request line holds it).
func (f *Fetcher) answer(ctx context.Context, req *protocols.Request, prompt string, sensitive bool) (*protocols.Response, error) {
	a, err := f.Ask(ctx, prompt, sensitive)
	if err != nil {
		return nil, err
	}
	v := *req.URL
	v.HasQuery, v.Query = true, url.EscapeQuery(a)
	again := *req
	again.URL = &v
	if sensitive {
		again.Credentials = protocols.Credentials{Password: v.Query, HasPassword: true}
		again.Exchange = nil
	}
	return f.Fetch(ctx, &again)
}

func hostOf(a net.Addr) string {
	h, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return ""
	}
	return h
}

// config is the TLS configuration of a request: TLS 1.2 at least, SNI,
// the session cache, the request's client certificate, and certificates
// checked by a CA or else trusted on first use.
func (f *Fetcher) config(req *protocols.Request, u *url.URL) *tls.Config {
	host := u.Hostname()
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: host, ClientSessionCache: f.cache(), InsecureSkipVerify: true}
	insecure := false
	var roots *x509.CertPool
	if t := req.TLS; t != nil {
		cfg.Certificates, cfg.GetClientCertificate = t.Certificates, t.GetClientCertificate
		roots, insecure = t.RootCAs, t.InsecureSkipVerify
	}
	hostport := strings.ToLower(host) + ":" + strconv.Itoa(u.PortNumber())
	cfg.VerifyConnection = func(cs tls.ConnectionState) error {
		if insecure || len(cs.PeerCertificates) == 0 {
			if len(cs.PeerCertificates) == 0 {
				return fmt.Errorf("%w: gemini: %s sent no certificate", protocols.ErrPermission, hostport)
			}
			return nil
		}
		leaf := cs.PeerCertificates[0]
		seen := hostport + " " + KeyOf(leaf)
		if _, ok := f.trusted.Load(seen); ok && time.Now().Before(leaf.NotAfter) {
			return nil // verified at an earlier connection (a resumed session's is the same certificate)
		}
		inter := x509.NewCertPool()
		for _, c := range cs.PeerCertificates[1:] {
			inter.AddCert(c)
		}
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: host, Roots: roots, Intermediates: inter}); err == nil {
			f.trusted.Store(seen, true)
			return nil // a CA vouches for it, as for https
		}
		now := time.Now
		if f.now != nil {
			now = f.now
		}
		if now().After(leaf.NotAfter) {
			return fmt.Errorf("%w: gemini: %s's certificate expired on %s", protocols.ErrPermission, hostport, leaf.NotAfter.UTC().Format("2006-01-02"))
		}
		pinned, err := trust(f.knownHosts(), hostport, leaf, now())
		if err == nil && pinned {
			req.Tracef(protocols.TraceInfo, "trusted on first use: "+hostport+" "+KeyOf(leaf)+" (in "+f.knownHosts()+")")
		}
		if err == nil && f.now == nil {
			f.trusted.Store(seen, true)
		}
		return err
	}
	return cfg
}

// SuggestedName is the local file name of u: its path's last element,
// none for a folder.
func SuggestedName(u *url.URL) string { return protocols.PathName(u) }

// SuggestedName is the package function (protocols.Namer).
func (f *Fetcher) SuggestedName(u *url.URL) string { return SuggestedName(u) }
