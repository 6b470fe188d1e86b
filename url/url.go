package url

import (
	"strconv"
	"strings"
)

// URL is a parsed locator. Every component is kept in its encoded form, as
// it was written; the per-scheme views decode them.
//
// The general form is
//
//	scheme://user:password@host:port/path?query#fragment
//
// A URL without "//" (mailto:, news:, urn:, a relative reference) keeps its
// scheme-specific part in Path.
type URL struct {
	Scheme       string    // lower case; empty in a relative reference
	User         *Userinfo // nil when the URL names no user (RFC 1738 §3.1)
	Host         string    // as written; an IPv6 literal keeps its brackets
	Port         string    // decimal digits as written; empty when omitted
	HasAuthority bool      // the "//" part is present (Host may be empty, as in file:///)
	Path         string    // encoded; after an authority, empty or starting with "/"
	Query        string    // encoded search part, without "?"
	HasQuery     bool      // a "?" is present (Query may be empty)
	Fragment     string    // encoded fragment identifier, without "#"
	HasFragment  bool      // a "#" is present
}

// Userinfo holds the user and password of a URL in their encoded form. An
// empty user differs from no user, and an empty password from no password
// (RFC 1738 §3.1).
type Userinfo struct {
	user, password string
	hasPassword    bool
}

// User returns a Userinfo holding the given user name and no password.
func User(name string) *Userinfo { return &Userinfo{user: EscapeUserinfo(name)} }

// UserPassword returns a Userinfo holding a user name and a password.
func UserPassword(name, password string) *Userinfo {
	return &Userinfo{user: EscapeUserinfo(name), password: EscapeUserinfo(password), hasPassword: true}
}

// Username returns the decoded user name.
func (u *Userinfo) Username() string {
	if u == nil {
		return ""
	}
	s, _ := Unescape(u.user) // validated by Parse
	return s
}

// Password returns the decoded password and whether one is present.
func (u *Userinfo) Password() (string, bool) {
	if u == nil || !u.hasPassword {
		return "", false
	}
	s, _ := Unescape(u.password)
	return s, true
}

// String returns the encoded "user[:password]" form.
func (u *Userinfo) String() string {
	if u == nil {
		return ""
	}
	if u.hasPassword {
		return u.user + ":" + u.password
	}
	return u.user
}

// syntax is what RFC 1738 (and RFC 1630, RFC 2392) say of one scheme's
// URLs: the one table of per-scheme parsing.
type syntax struct {
	port    int  // the default port; 0 for none
	ip      bool // the common Internet scheme syntax: "//host" is required
	noQuery bool // "?" is an ordinary character of the url-path (RFC 1738 §5)
	// check validates the scheme-specific part; nil checks nothing more.
	check func(u *URL) error
}

func viewCheck[T any](view func(*URL) (T, error)) func(*URL) error {
	return func(u *URL) error { _, err := view(u); return err }
}

var (
	checkFTP    = func(u *URL) error { return u.ftpPath(nil) }
	checkGopher = viewCheck((*URL).Gopher)
	checkNews   = viewCheck((*URL).News)
	checkNNTP   = viewCheck((*URL).NNTP)
	checkTelnet = viewCheck((*URL).Telnet)
	checkHTTP   = func(u *URL) error {
		if u.Path != "" && u.Path[0] != '/' {
			return partErr("url-path", `must start with "/"`)
		}
		return nil
	}
)

// Authority says whether the scheme's URLs use the common Internet
// scheme syntax, "//host" required (RFC 1738 §3.1): gopher:, ftp:, nntp:,
// not news: or mailto: (nor file:, whose host may be left out).
func Authority(scheme string) bool { return schemes[strings.ToLower(scheme)].ip }

// Known says whether url has a syntax of its own for the scheme (RFC
// 1738's schemes and those of RFC 1630 and RFC 2392); a scheme it does not
// know is parsed by the generic syntax alone.
func Known(scheme string) bool {
	_, ok := schemes[strings.ToLower(scheme)]
	return ok
}

// Queries says whether a "?" in the scheme's URLs begins a query (http:,
// wais:), not an ordinary character of the path (ftp:, gopher:; RFC 1738
// §5). A scheme url does not know is taken to have queries.
func Queries(scheme string) bool { return !schemes[strings.ToLower(scheme)].noQuery }

// schemes is filled in init: its checks use the views, which use
// DefaultPorts, which comes from it.
var schemes map[string]syntax

func init() {
	schemes = map[string]syntax{
		"ftp":      {port: 21, ip: true, noQuery: true, check: checkFTP},
		"ftps":     {port: 990, ip: true, noQuery: true, check: checkFTP},
		"http":     {port: 80, ip: true, check: checkHTTP},
		"https":    {port: 443, ip: true, check: checkHTTP},
		"gopher":   {port: 70, ip: true, noQuery: true, check: checkGopher},
		"gophers":  {port: 70, ip: true, noQuery: true, check: checkGopher},
		"news":     {noQuery: true, check: checkNews},
		"snews":    {port: 563, noQuery: true, check: checkNews},
		"nntp":     {port: 119, ip: true, noQuery: true, check: checkNNTP},
		"nntps":    {port: 563, ip: true, noQuery: true, check: checkNNTP},
		"wais":     {port: 210, ip: true, check: viewCheck((*URL).WAIS)},
		"file":     {noQuery: true, check: viewCheck((*URL).File)},
		"telnet":   {port: 23, ip: true, noQuery: true, check: checkTelnet},
		"tn3270":   {port: 23, ip: true, check: checkTelnet},
		"rlogin":   {port: 513, ip: true, check: checkTelnet},
		"mailto":   {noQuery: true, check: viewCheck((*URL).Mailto)},
		"prospero": {port: 1525, ip: true, noQuery: true, check: viewCheck((*URL).Prospero)},
		"gemini":   {port: 1965, ip: true},
		"spartan":  {port: 300, ip: true},
		"nex":      {port: 1900, ip: true, noQuery: true},
		"finger":   {port: 79, ip: true, noQuery: true},
		"mid":      {noQuery: true},
		"cid":      {noQuery: true},
		"z39.50":   {port: 210},
		"z39.50r":  {port: 210},
		"z39.50s":  {port: 210},
	}
	for name, s := range schemes {
		if s.port != 0 {
			DefaultPorts[name] = s.port
		}
	}
}

// DefaultPorts maps each scheme with a well-known port to that port.
var DefaultPorts = map[string]int{}

// Parse parses an absolute URL strictly: unsafe characters must be encoded,
// every "%" must start a valid escape, and the scheme-specific part must
// match its production in RFC 1738 §5. The error is a *Error naming the
// component at fault.
func Parse(raw string) (*URL, error) { return parse(raw, true) }

// ParseReference parses an absolute URL or a partial (relative) form, as
// found in a document, for use with ResolveReference. It checks the generic
// syntax only; the scheme-specific production is checked by the views, or
// by Parse of the resolved URL.
func ParseReference(raw string) (*URL, error) { return parse(raw, false) }

// MustParse is like Parse but panics on error. It is meant for tests and
// constants.
func MustParse(raw string) *URL {
	u, err := Parse(raw)
	if err != nil {
		panic(err)
	}
	return u
}

func parse(raw string, abs bool) (*URL, error) {
	u, err := parseParts(raw, abs)
	if err == nil && abs {
		err = u.validate()
	}
	if err != nil {
		return nil, &Error{Op: "parse", URL: RedactString(raw), Err: err}
	}
	return u, nil
}

// schemeEnd returns the length of a valid scheme at the start of s when it
// is followed by ":", else 0.
func schemeEnd(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.':
			if i == 0 {
				return 0
			}
		case c == ':':
			return i
		default:
			return 0
		}
	}
	return 0
}

func parseParts(raw string, abs bool) (*URL, error) {
	u := new(URL)
	rest := raw
	off := 0 // offset of rest within raw
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		u.Fragment, u.HasFragment = rest[i+1:], true
		if err := checkChars("fragment", u.Fragment, i+1, nil); err != nil {
			return nil, err
		}
		rest = rest[:i]
	}
	if n := schemeEnd(rest); n > 0 {
		u.Scheme = strings.ToLower(rest[:n])
		rest, off = rest[n+1:], n+1
	} else if abs {
		if rest == "" {
			return nil, partErr("scheme", "empty URL")
		}
		return nil, &PartError{Part: "scheme", Msg: "missing scheme (a URL starts with a name such as http: or ftp:)", Offset: 0}
	}
	splitQuery := !schemes[u.Scheme].noQuery
	if strings.HasPrefix(rest, "//") {
		u.HasAuthority = true
		rest, off = rest[2:], off+2
		end := strings.IndexByte(rest, '/')
		if splitQuery {
			if q := strings.IndexByte(rest, '?'); q >= 0 && (end < 0 || q < end) {
				end = q
			}
		}
		if end < 0 {
			end = len(rest)
		}
		if err := u.parseAuthority(rest[:end], off); err != nil {
			return nil, err
		}
		rest, off = rest[end:], off+end
	}
	if splitQuery {
		if i := strings.IndexByte(rest, '?'); i >= 0 {
			u.Query, u.HasQuery = rest[i+1:], true
			if err := checkChars("search", u.Query, off+i+1, nil); err != nil {
				return nil, err
			}
			rest = rest[:i]
		}
	}
	u.Path = rest
	part := "url-path"
	if !u.HasAuthority && u.Scheme != "" {
		part = u.Scheme + " part"
	}
	if err := checkChars(part, u.Path, off, nil); err != nil {
		return nil, err
	}
	return u, nil
}

// checkChars verifies that s holds only characters allowed unencoded in a
// URL (or accepted by extra) and valid escapes.
func checkChars(part, s string, base int, extra func(byte) bool) error {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' {
			if i+2 >= len(s) || !ishex(s[i+1]) || !ishex(s[i+2]) {
				return &PartError{Part: part, Msg: "malformed escape " + strconv.Quote(s[i:min(i+3, len(s))]), Offset: base + i}
			}
			i += 2
			continue
		}
		if unsafeChar(c) && (extra == nil || !extra(c)) {
			return &PartError{Part: part, Msg: "character " + strconv.QuoteRuneToASCII(rune(c)) + " must be encoded", Offset: base + i}
		}
	}
	return nil
}

func (u *URL) parseAuthority(auth string, off int) error {
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		info := auth[:at]
		if j := strings.IndexByte(info, '@'); j >= 0 {
			return &PartError{Part: "user", Msg: `"@" must be encoded as %40`, Offset: off + j}
		}
		ui := &Userinfo{user: info}
		if c := strings.IndexByte(info, ':'); c >= 0 {
			ui.user, ui.password, ui.hasPassword = info[:c], info[c+1:], true
			if err := checkChars("password", ui.password, off+c+1, nil); err != nil {
				return redactOffsetOnly(err)
			}
			if strings.IndexByte(ui.password, ':') >= 0 {
				return partErr("password", `":" must be encoded as %3A`)
			}
		}
		if err := checkChars("user", ui.user, off, nil); err != nil {
			return err
		}
		u.User = ui
		auth, off = auth[at+1:], off+at+1
	}
	host := auth
	if strings.HasPrefix(host, "[") {
		end := strings.IndexByte(host, ']')
		if end < 0 {
			return &PartError{Part: "host", Msg: `IPv6 literal lacks "]"`, Offset: off}
		}
		for i := 1; i < end; i++ {
			c := host[i]
			if !ishex(c) && c != ':' && c != '.' {
				return &PartError{Part: "host", Msg: "bad IPv6 literal", Offset: off + i}
			}
		}
		u.Host, host = host[:end+1], host[end+1:]
		if host != "" && host[0] != ':' {
			return &PartError{Part: "host", Msg: `unexpected text after "]"`, Offset: off + end + 1}
		}
	} else {
		if c := strings.IndexByte(host, ':'); c >= 0 {
			u.Host, host = host[:c], host[c:]
		} else {
			u.Host, host = host, ""
		}
		for i := 0; i < len(u.Host); i++ {
			c := u.Host[i]
			if !(classes[c]&(clAlpha|clDigit) != 0 || c == '-' || c == '.' || c == '_') {
				return &PartError{Part: "host", Msg: "character " + strconv.QuoteRuneToASCII(rune(c)) + " is not allowed in a host name", Offset: off + i}
			}
		}
	}
	if host != "" { // ":port"
		p := host[1:]
		poff := off + len(u.Host) + 1
		if p == "" {
			return &PartError{Part: "port", Msg: `empty port after ":" (omit the colon too)`, Offset: poff}
		}
		for i := 0; i < len(p); i++ {
			if p[i] < '0' || p[i] > '9' {
				return &PartError{Part: "port", Msg: "port must be decimal digits", Offset: poff + i}
			}
		}
		if n, err := strconv.Atoi(p); err != nil || n > 65535 {
			return &PartError{Part: "port", Msg: "port out of range 0-65535", Offset: poff}
		}
		u.Port = p
	}
	return nil
}

// redactOffsetOnly keeps a password error from quoting the password.
func redactOffsetOnly(err error) error {
	if pe, ok := err.(*PartError); ok {
		msg := pe.Msg
		if strings.HasPrefix(msg, "malformed escape") {
			msg = "malformed escape"
		} else if strings.HasPrefix(msg, "character") {
			msg = "a character must be encoded"
		}
		return &PartError{Part: pe.Part, Msg: msg, Offset: pe.Offset}
	}
	return err
}

// validate checks the scheme-specific production of the known schemes.
func (u *URL) validate() error {
	s := schemes[u.Scheme]
	if s.ip {
		if !u.HasAuthority {
			return partErr(u.Scheme+" URL", `needs "//host" after "`+u.Scheme+`:"`)
		}
		if u.Host == "" {
			return partErr("host", "empty host")
		}
	}
	if s.check != nil {
		return s.check(u)
	}
	return nil
}

// IsAbs reports whether the URL has a scheme.
func (u *URL) IsAbs() bool { return u.Scheme != "" }

// Hostname returns the host without IPv6 brackets.
func (u *URL) Hostname() string {
	return strings.TrimSuffix(strings.TrimPrefix(u.Host, "["), "]")
}

// PortNumber returns the port to connect to: the explicit port, else the
// scheme's default port, else 0.
func (u *URL) PortNumber() int {
	if u.Port != "" {
		n, _ := strconv.Atoi(u.Port)
		return n
	}
	return DefaultPorts[u.Scheme]
}

// HostPort returns "host:port" with the default port filled in, ready to
// dial.
func (u *URL) HostPort() string {
	h := u.Host
	if h == "" {
		h = "localhost"
	}
	return h + ":" + strconv.Itoa(u.PortNumber())
}

// Site returns the host and, when the URL gives one, the port, as
// written ("host", "host:8080", "[::1]:70"): the server part of the
// authority without user information.
func (u *URL) Site() string {
	if u.Port != "" {
		return u.Host + ":" + u.Port
	}
	return u.Host
}

// URLPath returns the encoded url-path of RFC 1738 §3.1: the path without
// the "/" that separates it from the host.
func (u *URL) URLPath() string {
	if u.HasAuthority {
		return strings.TrimPrefix(u.Path, "/")
	}
	return u.Path
}

// String reassembles the URL from its encoded components. Parse(u.String())
// gives a URL equal to u.
func (u *URL) String() string { return u.format(false) }

// Redacted is like String but replaces any password with "xxxxx".
func (u *URL) Redacted() string { return u.format(true) }

// WithoutPassword is like String but leaves any password out, keeping the
// user: a URL to print that is still one to fetch, the password then
// coming from elsewhere (a netrc file, a prompt).
func (u *URL) WithoutPassword() string {
	if u.User == nil || !u.User.hasPassword {
		return u.String()
	}
	v := *u
	v.User = &Userinfo{user: u.User.user}
	return v.String()
}

func (u *URL) format(redact bool) string {
	var b strings.Builder
	n := len(u.Scheme) + 4 + len(u.Host) + 1 + len(u.Port) + len(u.Path) + 1 + len(u.Query) + 1 + len(u.Fragment)
	if u.User != nil {
		n += len(u.User.user) + 1 + max(len(u.User.password), 5) + 1
	}
	b.Grow(n) // one allocation
	if u.Scheme != "" {
		b.WriteString(u.Scheme)
		b.WriteByte(':')
	}
	if u.HasAuthority {
		b.WriteString("//")
		if u.User != nil {
			b.WriteString(u.User.user)
			if u.User.hasPassword {
				b.WriteByte(':')
				if redact {
					b.WriteString("xxxxx")
				} else {
					b.WriteString(u.User.password)
				}
			}
			b.WriteByte('@')
		}
		b.WriteString(u.Host)
		if u.Port != "" {
			b.WriteByte(':')
			b.WriteString(u.Port)
		}
	}
	b.WriteString(u.Path)
	if u.HasQuery {
		b.WriteByte('?')
		b.WriteString(u.Query)
	}
	if u.HasFragment {
		b.WriteByte('#')
		b.WriteString(u.Fragment)
	}
	return b.String()
}

// Segments returns the decoded segments of a hierarchical url-path, one per
// "/" written in the URL; an encoded "%2F" stays inside its segment.
func (u *URL) Segments() ([]string, error) {
	p := u.URLPath()
	if p == "" {
		return nil, nil
	}
	raw := strings.Split(p, "/")
	out := make([]string, len(raw))
	for i, s := range raw {
		d, err := Unescape(s)
		if err != nil {
			return nil, wrapEscape("url-path", err)
		}
		out[i] = d
	}
	return out, nil
}

// Canonicalize prepares text a person pasted for Parse, as browsers do:
// surrounding white space is dropped and unsafe characters (space, "<",
// ">", '"', "{", "}", "|", "\", "^", "~", "[", "]", "`", a second "#",
// controls and octets above 0x7E) are encoded. An "@" in the authority other
// than the last one is encoded too. Escapes already present are kept as
// they are, and so is a malformed "%", which Parse then reports.
func Canonicalize(raw string) string {
	raw = strings.TrimSpace(raw)
	var b strings.Builder
	hashSeen := false
	authStart, authEnd := -1, -1
	if n := schemeEnd(raw); n > 0 && strings.HasPrefix(raw[n+1:], "//") {
		authStart = n + 3
		authEnd = len(raw)
		if j := strings.IndexAny(raw[authStart:], "/?#"); j >= 0 {
			authEnd = authStart + j
		}
	}
	lastAt := -1
	if authStart >= 0 {
		if j := strings.LastIndexByte(raw[authStart:authEnd], '@'); j >= 0 {
			lastAt = authStart + j
		}
	}
	changed := false // whether b holds the text so far; until a change, raw is the text
	change := func(i int) {
		if !changed {
			b.Grow(len(raw) + 16)
			b.WriteString(raw[:i])
			changed = true
		}
	}
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		inAuth := i >= authStart && i < authEnd
		switch {
		case c == '%':
		case c == '#' && !hashSeen && !inAuth:
			hashSeen = true
		case c == '@' && inAuth && i != lastAt:
			change(i)
			b.WriteString("%40")
			continue
		case (c == '[' || c == ']') && inAuth && (lastAt < 0 || i > lastAt):
		case unsafeChar(c):
			change(i)
			writeEscaped(&b, c)
			continue
		}
		if changed {
			b.WriteByte(c)
		}
	}
	if !changed {
		return raw // most text needs nothing: no copy
	}
	return b.String()
}
