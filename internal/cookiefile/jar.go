// Package cookiefile is a cookie jar (net/http.CookieJar) that reads and
// writes cookie files in the Netscape format curl and wget use: one cookie
// a line, seven fields apart by tabs (domain, whether subdomains share it,
// path, secure, expiry in Unix seconds with 0 for a session cookie, name,
// value), "#HttpOnly_" before the domain of an HttpOnly cookie, other
// lines starting with "#" comments.
//
// Cookies are kept by the rules of RFC 6265: a Domain attribute must
// domain-match the host that set it and must not be a public suffix
// (golang.org/x/net/publicsuffix); without one the cookie goes back to
// that host only. A cookie replaces the one of the same name, domain and
// path; one whose Max-Age or Expires lies in the past removes it. A Secure
// cookie is sent over https only, and none set over http is kept, as
// RFC 6265bis and curl have it. What servers set is bounded: 4,096 bytes
// a cookie, 180 cookies a domain and 3,000 in all, the oldest going
// first.
package cookiefile

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/publicsuffix"
)

// Cookie is a cookie in the jar.
type Cookie struct {
	Name, Value string
	// Domain is the host or domain it goes to, lower case, without a
	// leading dot; HostOnly says the host alone (no Domain attribute).
	Domain   string
	HostOnly bool
	Path     string
	Secure   bool
	HttpOnly bool
	// Expires is zero for a session cookie.
	Expires time.Time
	// created orders cookies of the same path length, oldest first.
	created time.Time
}

// Jar is a cookie jar safe for use by several goroutines. Its zero value
// is an empty jar.
type Jar struct {
	mu      sync.Mutex
	cookies []*Cookie
	// Now is the clock, time.Now when nil.
	Now func() time.Time
}

func (j *Jar) now() time.Time {
	if j.Now != nil {
		return j.Now()
	}
	return time.Now()
}

// SetCookies keeps the cookies a response from u set, by the rules in the
// package comment; a cookie the rules refuse is left out.
func (j *Jar) SetCookies(u *url.URL, cookies []*http.Cookie) {
	if u.Scheme != "http" && u.Scheme != "https" {
		return
	}
	host, ok := canonicalHost(u.Host)
	if !ok {
		return
	}
	now := j.now()
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, hc := range cookies {
		c, ok := newCookie(hc, u, host, now)
		if !ok {
			continue
		}
		i := slices.IndexFunc(j.cookies, func(o *Cookie) bool {
			return o.Name == c.Name && o.Domain == c.Domain && o.Path == c.Path
		})
		gone := !c.Expires.IsZero() && !c.Expires.After(now)
		switch {
		case i >= 0 && gone:
			j.cookies = slices.Delete(j.cookies, i, i+1)
		case i >= 0:
			c.created = j.cookies[i].created
			j.cookies[i] = c
		case !gone:
			j.cookies = append(j.cookies, c)
			j.bound(c.Domain, now)
		}
	}
}

// The bounds of what servers may set, so that none can fill the memory
// of a long crawl or make the Cookie field too long to be sent: RFC 6265
// (6.1) asks a client for at least 4,096 bytes a cookie, 50 a domain and
// 3,000 in all; browsers keep about 180 a domain.
const (
	maxCookieBytes = 4096 // name and value
	maxPerDomain   = 180
	maxCookies     = 3000
)

// bound removes expired cookies and then the oldest ones of domain, and
// of all, past the bounds. j.cookies is in the order they were set.
func (j *Jar) bound(domain string, now time.Time) {
	n := 0
	for _, c := range j.cookies {
		if c.Domain == domain {
			n++
		}
	}
	if n <= maxPerDomain && len(j.cookies) <= maxCookies {
		return
	}
	j.cookies = slices.DeleteFunc(j.cookies, func(c *Cookie) bool {
		return !c.Expires.IsZero() && !c.Expires.After(now)
	})
	for i := 0; i < len(j.cookies) && n > maxPerDomain; {
		if j.cookies[i].Domain == domain {
			j.cookies = slices.Delete(j.cookies, i, i+1)
			n--
		} else {
			i++
		}
	}
	if over := len(j.cookies) - maxCookies; over > 0 {
		j.cookies = slices.Delete(j.cookies, 0, over)
	}
}

// newCookie is hc as set by a response from u (whose host is host), or
// false when the rules refuse it.
func newCookie(hc *http.Cookie, u *url.URL, host string, now time.Time) (*Cookie, bool) {
	if hc.Name == "" || hc.Secure && u.Scheme != "https" || len(hc.Name)+len(hc.Value) > maxCookieBytes {
		return nil, false
	}
	c := &Cookie{Name: hc.Name, Value: hc.Value, Path: hc.Path, Secure: hc.Secure, HttpOnly: hc.HttpOnly, created: now}
	switch {
	case hc.MaxAge < 0:
		c.Expires = time.Unix(0, 0) // Max-Age=0: remove it
	case hc.MaxAge > 0:
		c.Expires = now.Add(time.Duration(hc.MaxAge) * time.Second)
	case !hc.Expires.IsZero():
		c.Expires = hc.Expires
	}
	domain := strings.TrimPrefix(strings.ToLower(hc.Domain), ".")
	switch {
	case domain == "" || domain == host:
		c.Domain, c.HostOnly = host, domain == ""
		if !c.HostOnly && isPublicSuffix(domain) {
			c.HostOnly = true // a public suffix goes to that host only
		}
	case net.ParseIP(host) != nil || !strings.HasSuffix(host, "."+domain) || isPublicSuffix(domain):
		return nil, false
	default:
		c.Domain = domain
	}
	if !strings.HasPrefix(c.Path, "/") {
		c.Path = defaultPath(u.Path)
	}
	return c, true
}

// isPublicSuffix says whether domain is one under which anyone may
// register a name ("com", "co.uk"), on which no cookie may be set.
func isPublicSuffix(domain string) bool {
	ps, _ := publicsuffix.PublicSuffix(domain)
	return ps == domain
}

// defaultPath is the default-path of RFC 6265 5.1.4: the request path up
// to, not including, its last slash.
func defaultPath(p string) string {
	i := strings.LastIndex(p, "/")
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

// canonicalHost is the host of hostport, lower case, without its port
// or an IPv6 address's brackets.
func canonicalHost(hostport string) (string, bool) {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	return host, host != ""
}

// Cookies are the cookies to send to u: of its host or a domain above it,
// of its path or a path above, not expired, Secure ones to https only;
// the longest paths first, then the oldest.
func (j *Jar) Cookies(u *url.URL) []*http.Cookie {
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil
	}
	host, ok := canonicalHost(u.Host)
	if !ok {
		return nil
	}
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	now := j.now()
	j.mu.Lock()
	var match []*Cookie
	for _, c := range j.cookies {
		if !c.Expires.IsZero() && !c.Expires.After(now) ||
			c.Secure && u.Scheme != "https" ||
			!domainMatch(host, c) || !pathMatch(p, c.Path) {
			continue
		}
		match = append(match, c)
	}
	j.mu.Unlock()
	slices.SortStableFunc(match, func(a, b *Cookie) int {
		if d := len(b.Path) - len(a.Path); d != 0 {
			return d
		}
		return a.created.Compare(b.created)
	})
	out := make([]*http.Cookie, len(match))
	for i, c := range match {
		out[i] = &http.Cookie{Name: c.Name, Value: c.Value}
	}
	return out
}

func domainMatch(host string, c *Cookie) bool {
	if host == c.Domain {
		return true
	}
	return !c.HostOnly && strings.HasSuffix(host, "."+c.Domain) && net.ParseIP(host) == nil
}

// pathMatch is the path-match of RFC 6265 5.1.4.
func pathMatch(reqPath, cookiePath string) bool {
	if reqPath == cookiePath {
		return true
	}
	if !strings.HasPrefix(reqPath, cookiePath) {
		return false
	}
	return strings.HasSuffix(cookiePath, "/") || reqPath[len(cookiePath)] == '/'
}

// All is a copy of every cookie in the jar, expired ones left out, in the
// order they were first set.
func (j *Jar) All() []Cookie {
	now := j.now()
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []Cookie
	for _, c := range j.cookies {
		if c.Expires.IsZero() || c.Expires.After(now) {
			out = append(out, *c)
		}
	}
	return out
}

const httpOnlyPrefix = "#HttpOnly_"

// Load adds the cookies of a cookie file to the jar; expired ones are
// left out, and session cookies too when noSession is set (curl's -j).
// A line that is not seven fields apart by tabs is an error naming its
// number.
func (j *Jar) Load(r io.Reader, noSession bool) error {
	now := j.now()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	var add []*Cookie
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		httpOnly := false
		if rest, ok := strings.CutPrefix(line, httpOnlyPrefix); ok {
			line, httpOnly = rest, true
		}
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 7 {
			return fmt.Errorf("line %d: %d fields, not the 7 of a cookie file", n, len(f))
		}
		exp, err := strconv.ParseInt(f[4], 10, 64)
		if err != nil {
			return fmt.Errorf("line %d: the expiry %q is no number of seconds", n, f[4])
		}
		domain, _ := canonicalHost(f[0]) // wget writes a port that is not the scheme's
		c := &Cookie{Name: f[5], Value: f[6], Domain: strings.TrimPrefix(domain, "."), Path: f[2],
			HostOnly: !strings.EqualFold(f[1], "TRUE"), Secure: strings.EqualFold(f[3], "TRUE"), HttpOnly: httpOnly, created: now}
		if c.Name == "" || c.Domain == "" {
			return fmt.Errorf("line %d: a cookie without a name or domain", n)
		}
		if strings.ContainsFunc(c.Name+c.Value, func(r rune) bool { return r < ' ' || r == 0x7f || r == ';' }) || strings.ContainsAny(c.Name, " =") {
			return fmt.Errorf("line %d: the cookie %q holds a control character, a ';', or a space or '=' in its name", n, c.Name)
		}
		if c.Path == "" {
			c.Path = "/"
		}
		if exp != 0 {
			c.Expires = time.Unix(exp, 0)
			if !c.Expires.After(now) {
				continue
			}
		} else if noSession {
			continue
		}
		add = append(add, c)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, c := range add {
		i := slices.IndexFunc(j.cookies, func(o *Cookie) bool {
			return o.Name == c.Name && o.Domain == c.Domain && o.Path == c.Path
		})
		if i >= 0 {
			j.cookies[i] = c
		} else {
			j.cookies = append(j.cookies, c)
		}
	}
	return nil
}

// Save writes the jar as a cookie file, session cookies too when
// sessions is set (curl writes them; wget only with
// --keep-session-cookies).
func (j *Jar) Save(w io.Writer, sessions bool) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("# Netscape HTTP Cookie File\n# Written by deref; edit at your own risk.\n\n")
	for _, c := range j.All() {
		if c.Expires.IsZero() && !sessions {
			continue
		}
		domain, sub := c.Domain, "FALSE"
		if !c.HostOnly {
			domain, sub = "."+domain, "TRUE"
		}
		if c.HttpOnly {
			domain = httpOnlyPrefix + domain
		}
		exp := int64(0)
		if !c.Expires.IsZero() {
			exp = c.Expires.Unix()
		}
		fmt.Fprintf(bw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", domain, sub, c.Path, upper(c.Secure), exp, c.Name, c.Value)
	}
	return bw.Flush()
}

func upper(b bool) string {
	if b {
		return "TRUE"
	}
	return "FALSE"
}
