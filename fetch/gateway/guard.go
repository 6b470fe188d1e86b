package gateway

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/urlderef/deref/url"
)

// ErrRefused is a destination the gateway will not reach: a private,
// loopback or link-local address without AllowPrivate, a host no Allow
// pattern admits, or a file: URL outside AllowFile.
var ErrRefused = errors.New("refused by the gateway")

// refusal is an ErrRefused with its reason. It keeps its text through
// every protocol's wrapping, so that the page names the URL asked for
// and the reason, whatever the scheme made of a dial that failed.
type refusal struct{ why string }

func (e *refusal) Error() string        { return ErrRefused.Error() + ": " + e.why }
func (e *refusal) Is(target error) bool { return target == ErrRefused }

// private says whether an address is one a gateway must not be led to
// by a page: loopback, private (RFC 1918, RFC 4193), link-local,
// unspecified, multicast, or the shared and benchmarking ranges.
func private(a netip.Addr) bool {
	a = a.Unmap()
	if a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsUnspecified() || a.IsMulticast() || a.IsInterfaceLocalMulticast() {
		return true
	}
	for _, p := range specialRanges {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

var specialRanges = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),     // this network
	netip.MustParsePrefix("100.64.0.0/10"), // shared address space (carrier NAT)
	netip.MustParsePrefix("192.0.0.0/24"),  // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"), // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),   // reserved, broadcast
	netip.MustParsePrefix("64:ff9b::/96"),  // NAT64, which may reach anything
}

// dialFunc dials as net.Dialer.DialContext does.
type dialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// guard wraps dial so that every connection (control, data, each
// redirect) goes to an address checked after its name is resolved: the
// address checked is the one dialled, so that a name resolving to a
// public address for the check and a private one for the dial cannot
// pass.
//
// trusted are addresses (host:port, as dialled) the operator named and
// that are dialled as they are: the news server of news: URLs, which may
// well be on this machine.
func guard(dial dialFunc, allowPrivate bool, resolver *net.Resolver, trusted ...string) dialFunc {
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	if allowPrivate {
		return dial
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if slices.Contains(trusted, addr) {
			return dial(ctx, network, addr)
		}
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		var addrs []netip.Addr
		if a, err := netip.ParseAddr(host); err == nil {
			addrs = []netip.Addr{a}
		} else if numeric(host) {
			// 2130706433, 0177.0.0.1, 0x7f.1: names no DNS holds, which
			// a C resolver (getaddrinfo, as cgo's) reads as addresses.
			return nil, &refusal{host + " is an address in a form other than dotted decimal"}
		} else {
			ips, err := resolver.LookupNetIP(ctx, "ip", host)
			if err != nil {
				return nil, err
			}
			addrs = ips
		}
		var last error
		for _, a := range addrs {
			if private(a) {
				what := host + " is " + a.String() + ","
				if host == a.String() {
					what = host + " is"
				}
				last = &refusal{fmt.Sprintf("%s a private, loopback or link-local address (deref serve --allow-private admits them)", what)}
				continue
			}
			conn, err := dial(ctx, network, net.JoinHostPort(a.String(), port))
			if err == nil {
				return conn, nil
			}
			last = err
		}
		if last == nil {
			last = fmt.Errorf("%s: no address", host)
		}
		return nil, last
	}
}

// numeric says whether host is made only of digits, dots and hex digits
// after 0x: an IPv4 address in one of the old forms inet_aton reads
// (decimal, octal, hexadecimal, fewer than four parts), not a name.
func numeric(host string) bool {
	host = strings.TrimSuffix(host, ".")
	if host == "" {
		return false
	}
	for _, part := range strings.Split(host, ".") {
		p := strings.ToLower(part)
		if h, ok := strings.CutPrefix(p, "0x"); ok {
			p = h
			if strings.Trim(p, "0123456789abcdef") != "" {
				return false
			}
			continue
		}
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return false
		}
	}
	return true
}

// allowed says whether a URL's host and port match one of the patterns
// (HOST or HOST:PORT, the host a path.Match pattern such as
// "*.example.org", compared in lower case); no patterns admit every host.
func allowed(patterns []string, u *url.URL) bool {
	return allowedOn(patterns, u, true)
}

// allowedHost is allowed with any port: whether some pattern names u's
// host, whatever port it names.
func allowedHost(patterns []string, u *url.URL) bool {
	return allowedOn(patterns, u, false)
}

func allowedOn(patterns []string, u *url.URL, byPort bool) bool {
	if len(patterns) == 0 {
		return true
	}
	host := strings.ToLower(u.Hostname())
	port := strconv.Itoa(u.PortNumber())
	for _, p := range patterns {
		ph, pp, hasPort := strings.Cut(strings.ToLower(p), ":")
		if strings.HasPrefix(p, "[") { // [v6]:port
			if i := strings.LastIndex(p, "]"); i > 0 {
				ph, pp, hasPort = strings.Trim(p[:i+1], "[]"), strings.TrimPrefix(p[i+1:], ":"), strings.HasPrefix(p[i+1:], ":")
			}
		}
		if ok, _ := path.Match(ph, host); ok && (!hasPort || pp == port || !byPort) {
			return true
		}
	}
	return false
}
