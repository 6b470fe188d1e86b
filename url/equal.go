package url

import "strings"

// Normalize returns a copy of u brought to one encoding level, so that
// equal locators have equal strings (RFC 1630, "Reduced or increased safe
// character sets"): the scheme and host in lower case, the default port
// dropped, escapes of characters that need none decoded ("%2D" becomes
// "-"), the remaining escapes in upper case. Escaped reserved characters
// stay escaped: "%2F" is not "/". In a gopher-path, where no character is
// reserved, every character is brought to its one canonical form.
func (u *URL) Normalize() *URL {
	n := *u
	n.Host = strings.ToLower(u.Host)
	if n.Port != "" && DefaultPorts[n.Scheme] == n.PortNumber() {
		n.Port = ""
	}
	if n.Port != "" {
		n.Port = strings.TrimLeft(n.Port, "0")
		if n.Port == "" {
			n.Port = "0"
		}
	}
	if u.User != nil {
		ui := *u.User
		ui.user = normalizeEscapes(ui.user, false)
		ui.password = normalizeEscapes(ui.password, false)
		n.User = &ui
	}
	gopher := u.Scheme == "gopher" || u.Scheme == "gophers"
	n.Path = normalizeEscapes(u.Path, gopher && u.HasAuthority)
	if gopher && u.HasAuthority {
		// A search written as lynx has it (7/sel?words) is the one
		// written with %09.
		if _, _, ok := lynxSearch(u.URLPath()); ok {
			if g, err := u.Gopher(); err == nil {
				n.Path = "/7" + EscapeGopher(g.Selector) + "%09" + EscapeGopher(g.Search)
			}
		}
	}
	if u.HasAuthority && (u.Scheme == "http" || u.Scheme == "https") && n.Path == "" {
		n.Path = "/"
	}
	if gopher && (n.Path == "" || n.Path == "/") {
		n.Path = "/1"
	}
	n.Query = normalizeEscapes(u.Query, false)
	n.Fragment = normalizeEscapes(u.Fragment, false)
	return &n
}

// Equal reports whether u and v designate the same resource after both are
// brought to the same encoding level (see Normalize).
func (u *URL) Equal(v *URL) bool {
	return u.Normalize().String() == v.Normalize().String()
}

// normalizeEscapes decodes escapes of unreserved characters and upper-cases
// the others. With opaque set (a gopher-path, where nothing is reserved),
// reserved characters are treated like unreserved ones, and the written
// form of each octet is its escape exactly when the octet is unsafe.
func normalizeEscapes(s string, opaque bool) string {
	if !strings.Contains(s, "%") && !opaque {
		return s
	}
	var b strings.Builder
	start := 0
	if opaque && strings.HasPrefix(s, "/") {
		b.WriteByte('/')
		start = 1
	}
	for i := start; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) && ishex(s[i+1]) && ishex(s[i+2]) {
			d := unhex(s[i+1])<<4 | unhex(s[i+2])
			i += 2
			if unreserved(d) || opaque && reserved(d) && d != '?' {
				b.WriteByte(d)
				continue
			}
			c = d
		} else if !opaque || !(unsafeChar(c) || c == '?') {
			b.WriteByte(c)
			continue
		}
		writeEscaped(&b, c)
	}
	return b.String()
}
