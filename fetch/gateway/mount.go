package gateway

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// baseKey is the context key of the path the gateway is mounted at.
type baseKey struct{}

// basePath is where the gateway's own paths begin for r: "" at the
// root, "/gw" when mounted at /gw/ (Options.BasePath).
func basePath(r *http.Request) string {
	b, _ := r.Context().Value(baseKey{}).(string)
	return b
}

// mount serves h at o.BasePath, taking it off each request's path (a
// request outside it is a 404; the base itself is redirected to base/),
// and believes the X-Forwarded-For of o.TrustedProxies only.
func mount(h http.Handler, o Options) http.Handler {
	base := "/" + strings.Trim(o.BasePath, "/")
	if base == "/" {
		base = ""
	}
	var trusted []netip.Prefix
	for _, t := range o.TrustedProxies {
		t = strings.TrimSpace(t)
		if p, err := netip.ParsePrefix(t); err == nil {
			trusted = append(trusted, p.Masked())
		} else if a, err := netip.ParseAddr(t); err == nil {
			trusted = append(trusted, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
		}
	}
	if base == "" && len(trusted) == 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(trusted) > 0 {
			if client, ok := forwardedFor(r, trusted); ok {
				r = r.Clone(r.Context())
				r.RemoteAddr = net.JoinHostPort(client, "0")
			}
		}
		if base != "" && !r.URL.IsAbs() { // a proxy's request names its URL, not a path here
			p := r.URL.Path
			switch {
			case p == base:
				w.Header().Set("Location", base+"/")
				w.WriteHeader(http.StatusMovedPermanently)
				return
			case !strings.HasPrefix(p, base+"/"):
				http.Error(w, "not found: this gateway serves the paths below "+base+"/", http.StatusNotFound)
				return
			}
			r2 := r.Clone(context.WithValue(r.Context(), baseKey{}, base))
			r2.URL.Path = strings.TrimPrefix(p, base)
			if r.URL.RawPath != "" {
				r2.URL.RawPath = strings.TrimPrefix(r.URL.RawPath, base)
			}
			r = r2
		}
		h.ServeHTTP(w, r)
	})
}

// forwardedFor is the client a request from a trusted proxy came for:
// the last address of its X-Forwarded-For that is not itself a trusted
// proxy. It reports false for a request from anyone else, or without
// the field.
func forwardedFor(r *http.Request, trusted []netip.Prefix) (string, bool) {
	isTrusted := func(a netip.Addr) bool {
		for _, p := range trusted {
			if p.Contains(a.Unmap()) {
				return true
			}
		}
		return false
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return "", false
	}
	peer, err := netip.ParseAddr(host)
	if err != nil || !isTrusted(peer) {
		return "", false
	}
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(v, ",")...)
	}
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return "", false // a field the proxy did not write: believed no further
		}
		if !isTrusted(a) || i == 0 {
			return a.Unmap().String(), true
		}
	}
	return "", false
}
