package fetch

import (
	"context"
	"fmt"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"strings"

	"golang.org/x/net/proxy"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

func (c *Client) proxyFor(u *url.URL) (*url.URL, error) {
	if c.NoProxy != "" && noProxy(u.Hostname(), c.NoProxy) {
		return nil, nil
	}
	if c.Proxy != nil {
		return c.Proxy(u)
	}
	return c.proxyFromEnvironment(u)
}

// ProxyFromEnvironment returns the proxy for u from the environment:
// "<scheme>_proxy" (http_proxy, https_proxy, ftp_proxy, gopher_proxy,
// news_proxy, nntp_proxy, wais_proxy, ...; lower case first, then upper
// case, except that HTTP_PROXY is ignored, as curl does, because CGI sets
// it from a request header), else all_proxy or ALL_PROXY. no_proxy (or
// NO_PROXY) lists hosts and domain suffixes reached directly; "*" matches
// every host. A proxy without a scheme is taken as http://. URLs of this
// machine's files (file:) never use a proxy. It returns nil, nil for a
// direct connection. Schemes are as DefaultClient knows them.
func ProxyFromEnvironment(u *url.URL) (*url.URL, error) {
	return DefaultClient().proxyFromEnvironment(u)
}

// NetHTTPProxy makes a proxy function written for net/http, such as
// http.ProxyURL(u) or an http.Transport's Proxy, into one for
// [Client.Proxy]: it is asked with a GET request of the URL as net/url
// parses it, and its answer is parsed again by deref's url package. A
// URL net/url cannot parse, or an answer deref's cannot, is an error.
//
//	c.Proxy = fetch.NetHTTPProxy(http.ProxyURL(proxyURL))
func NetHTTPProxy(f func(*http.Request) (*neturl.URL, error)) func(*url.URL) (*url.URL, error) {
	return func(u *url.URL) (*url.URL, error) {
		nu, err := neturl.Parse(u.String())
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrBadURL, u.Redacted(), err)
		}
		p, err := f(&http.Request{Method: http.MethodGet, URL: nu, Host: nu.Host, Header: http.Header{}})
		if err != nil || p == nil {
			return nil, err
		}
		pu, err := url.Parse(p.String())
		if err != nil {
			return nil, fmt.Errorf("%w: the proxy %s: %w", ErrBadURL, url.RedactString(p.String()), err)
		}
		return pu, nil
	}
}

func (c *Client) proxyFromEnvironment(u *url.URL) (*url.URL, error) {
	s, _ := c.scheme(u.Scheme)
	if s.Local {
		return nil, nil
	}
	get := func(name string) string {
		if v := os.Getenv(name); v != "" {
			return v
		}
		if name == "http_proxy" {
			return ""
		}
		return os.Getenv(strings.ToUpper(name))
	}
	scheme := strings.ReplaceAll(u.Scheme, ".", "_")
	p := get(scheme + "_proxy")
	for _, v := range s.ProxyVars {
		if p == "" {
			p = get(v)
		}
	}
	if p == "" {
		p = get("all_proxy")
	}
	if p == "" || noProxy(u.Hostname(), get("no_proxy")) {
		return nil, nil
	}
	if !strings.Contains(p, "://") {
		p = "http://" + p
	}
	pu, err := url.Parse(url.Canonicalize(p))
	if err != nil {
		return nil, fmt.Errorf("%w: proxy from the environment: %w", ErrBadURL, err)
	}
	return pu, nil
}

// noProxy reports whether host matches the no_proxy list.
func noProxy(host, list string) bool {
	host = strings.ToLower(host)
	for _, e := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' }) {
		e = strings.ToLower(strings.TrimSpace(e))
		if e == "*" {
			return true
		}
		if h, _, err := net.SplitHostPort(e); err == nil {
			e = h
		}
		e = strings.TrimPrefix(strings.TrimPrefix(e, "*"), ".")
		if e != "" && (host == e || strings.HasSuffix(host, "."+e)) {
			return true
		}
	}
	return false
}

// socksDialer dials through a SOCKS5 proxy with golang.org/x/net/proxy.
func socksDialer(p *url.URL, forward protocols.DialFunc) (protocols.DialFunc, error) {
	var auth *proxy.Auth
	if p.User != nil {
		pw, _ := p.User.Password()
		auth = &proxy.Auth{User: p.User.Username(), Password: pw}
	}
	d, err := proxy.SOCKS5("tcp", p.HostPort(), auth, ctxDialer(forward))
	if err != nil {
		return nil, fmt.Errorf("%w: SOCKS proxy: %w", ErrBadURL, err)
	}
	cd, ok := d.(proxy.ContextDialer)
	if !ok {
		return nil, fmt.Errorf("%w: SOCKS dialer without context support", ErrProtocol)
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := cd.DialContext(ctx, network, addr)
		if err != nil {
			return nil, protocols.NetError(fmt.Errorf("via SOCKS proxy %s: %w", p.Redacted(), err))
		}
		return conn, nil
	}, nil
}

type ctxDialer protocols.DialFunc

func (d ctxDialer) Dial(network, addr string) (net.Conn, error) {
	return d(context.Background(), network, addr)
}

func (d ctxDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return d(ctx, network, addr)
}
