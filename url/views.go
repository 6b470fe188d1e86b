package url

import (
	"strconv"
	"strings"
)

// decodeArg decodes one component and refuses CR, LF and NUL in it.
func decodeArg(part, raw string) (string, error) {
	s, err := Unescape(raw)
	if err != nil {
		return "", wrapEscape(part, err)
	}
	if err := CheckArg(part, s); err != nil {
		return "", err
	}
	return s, nil
}

// FTPPath is the url-path of an ftp: URL (RFC 1738 §3.2.2), decoded
// segment by segment.
type FTPPath struct {
	Dirs []string // the <cwd> segments, each the argument of one CWD, in order
	Name string   // the last segment; empty when the URL names a directory
	Type byte     // 'a', 'i' or 'd' from ";type=", or 0 when the URL gives none
}

// FTP returns the FTP view of the URL. A ";" other than the one of
// ";type=", a typecode other than a, i or d (in either case), and a decoded
// CR, LF or NUL are errors.
func (u *URL) FTP() (*FTPPath, error) {
	f := new(FTPPath)
	if err := u.ftpPath(f); err != nil {
		return nil, err
	}
	return f, nil
}

// ftpPath reads the FTP view into f, or only checks it when f is nil.
// The segments are taken one at a time: a URL is checked when parsed and
// read again for each use, thousands of times in a list of small files.
func (u *URL) ftpPath(f *FTPPath) error {
	p := u.URLPath()
	if i := strings.LastIndexByte(p, ';'); i >= 0 {
		spec := p[i+1:]
		if strings.IndexByte(spec, '/') >= 0 || len(spec) < 5 || !strings.EqualFold(spec[:5], "type=") {
			return partErr("ftp url-path", `";" is reserved; encode it as %3B`)
		}
		code := spec[5:]
		if len(code) != 1 || !strings.Contains("aidAID", code) {
			return partErr("ftp typecode", strconv.Quote(code)+" is not a, i or d")
		}
		if f != nil {
			f.Type = code[0] | 0x20
		}
		p = p[:i]
		if strings.IndexByte(p, ';') >= 0 {
			return partErr("ftp url-path", `";" is reserved; encode it as %3B`)
		}
	}
	if p == "" && !u.HasAuthority {
		return partErr("ftp URL", `needs "//host"`)
	}
	if p == "" {
		return nil
	}
	if n := strings.Count(p, "/"); f != nil && n > 0 {
		f.Dirs = make([]string, 0, n)
	}
	for {
		seg, rest, more := strings.Cut(p, "/")
		d, err := decodeArg("ftp url-path", seg)
		if err != nil {
			return err
		}
		if !more {
			if f != nil {
				f.Name = d
			}
			return nil
		}
		if f != nil {
			f.Dirs = append(f.Dirs, d)
		}
		p = rest
	}
}

// GopherPath is the gopher-path of a gopher: URL (RFC 1738 §3.4).
type GopherPath struct {
	Type       byte   // the item type; '1' when the path is empty
	Selector   string // decoded; sent to the server, the type never is
	Search     string // decoded text after the first %09
	HasSearch  bool
	Plus       string // the Gopher+ string after the second %09
	HasPlus    bool
	FilledForm bool // Plus holds a filled +ASK form (RFC 1738 §3.4.9)
}

// Gopher returns the Gopher view of the URL. No character is reserved in
// a gopher-path: the whole path is decoded at once and split at its first
// two TABs. CR, LF and NUL are refused, except for the CR LF pairs of a
// filled Gopher+ form.
//
// A literal "?" in a type 7 (search) URL with no %09 starts the search,
// as lynx reads it: gopher://h/7/find?two+words searches /find for "two
// words" ("+" is a space there, %2B a plus). deref writes a "?" of a
// selector as %3F (EscapeGopher), so no URL it makes is read this way.
func (u *URL) Gopher() (*GopherPath, error) {
	raw := u.URLPath()
	if u.HasAuthority {
		if sel, words, ok := lynxSearch(raw); ok {
			g, err := (&URL{Scheme: u.Scheme, HasAuthority: true, Path: "/" + sel}).Gopher()
			if err != nil {
				return nil, err
			}
			search, err := Unescape(strings.ReplaceAll(words, "+", " "))
			if err != nil {
				return nil, wrapEscape("gopher search", err)
			}
			if err := CheckArg("gopher search", search); err != nil {
				return nil, err
			}
			g.Search, g.HasSearch = search, true
			return g, nil
		}
	}
	p, err := Unescape(raw)
	if err != nil {
		return nil, wrapEscape("gopher-path", err)
	}
	g := &GopherPath{Type: '1'}
	if p == "" {
		return g, nil
	}
	g.Type, p = p[0], p[1:]
	if g.Type == '\t' {
		return nil, partErr("gopher type", "TAB is not an item type")
	}
	if err := CheckArg("gopher type", string(g.Type)); err != nil {
		return nil, err
	}
	sel, rest, hasSearch := strings.Cut(p, "\t")
	g.Selector = sel
	if err := CheckArg("gopher selector", sel); err != nil {
		return nil, err
	}
	if hasSearch {
		g.HasSearch = true
		search, plus, hasPlus := strings.Cut(rest, "\t")
		g.Search = search
		if err := CheckArg("gopher search", search); err != nil {
			return nil, err
		}
		if hasPlus {
			g.Plus, g.HasPlus = plus, true
			if err := checkPlus(g); err != nil {
				return nil, err
			}
		}
	}
	return g, nil
}

// Selector is the selector of a gopher: or gophers: URL (the item type
// aside), the path its server knows the object by, which a crawl's
// "below" and robots.txt rules compare; ok is false for other schemes.
func (u *URL) Selector() (string, bool) {
	if u.Scheme != "gopher" && u.Scheme != "gophers" {
		return "", false
	}
	g, err := u.Gopher()
	if err != nil {
		return "", false
	}
	return g.Selector, true
}

// lynxSearch splits the encoded gopher-path of a type 7 URL at a literal
// "?" when the path has no %09: the selector part and the words, still
// encoded.
func lynxSearch(raw string) (sel, words string, ok bool) {
	if len(raw) < 2 || raw[0] != '7' || strings.Contains(strings.ToUpper(raw), "%09") {
		return "", "", false
	}
	return strings.Cut(raw, "?")
}

// checkPlus allows CR and LF in a Gopher+ string only in the shape of a
// filled form: "+" TAB "1" CRLF "+-1" CRLF (value CRLF)* "." CRLF.
func checkPlus(g *GopherPath) error {
	s := g.Plus
	if strings.IndexByte(s, 0) >= 0 {
		return partErr("gopher+ string", "decoded NUL is not allowed")
	}
	if !strings.ContainsAny(s, "\r\n") {
		if strings.IndexByte(s, '\t') >= 0 {
			return partErr("gopher+ string", "TAB is allowed only in a filled form")
		}
		return nil
	}
	const head = "+\t1\r\n+-1\r\n"
	if !strings.HasPrefix(s, head) || !strings.HasSuffix(s, "\r\n.\r\n") && s != head+".\r\n" {
		return partErr("gopher+ string", "decoded CR or LF is allowed only in a filled +ASK form")
	}
	for _, line := range strings.Split(strings.TrimSuffix(s[len(head):], "\r\n"), "\r\n") {
		if strings.ContainsAny(line, "\r\n\t") {
			return partErr("gopher+ string", "a form value holds a bare CR, LF or TAB")
		}
	}
	g.FilledForm = true
	return nil
}

// NewsPath is the part of a news: URL after the colon (RFC 1738 §3.6).
type NewsPath struct {
	Group     string // a newsgroup name or, when Wildmat, a pattern
	Wildmat   bool   // Group holds "*" or "?" and names a set of groups
	MessageID string // without the enclosing "<" and ">"
	All       bool   // news:* names all groups
}

// News returns the news: view. A part with "@" is a message-id, "*" means
// every group, anything else must be a group name (letters, digits, "-",
// ".", "+", "_", starting with a letter) or a wildmat pattern of one.
func (u *URL) News() (*NewsPath, error) {
	p := u.URLPath()
	if u.HasAuthority && u.Scheme == "news" && u.Host == "" {
		return nil, partErr("news URL", `news: carries no "//"; write news:group or news:id@host`)
	}
	s, err := decodeArg("news part", p)
	if err != nil {
		return nil, err
	}
	n := new(NewsPath)
	switch {
	case s == "":
		return nil, partErr("news part", "empty; expected a group, a message-id or *")
	case s == "*":
		n.All = true
	case strings.IndexByte(s, '@') >= 0:
		if strings.ContainsAny(s, "<> \t") {
			return nil, partErr("news message-id", `must not hold "<", ">" or white space`)
		}
		at := strings.LastIndexByte(s, '@')
		if at == 0 || at == len(s)-1 {
			return nil, partErr("news message-id", "needs text on both sides of \"@\"")
		}
		n.MessageID = s
	default:
		if err := checkGroup(s, true); err != nil {
			return nil, err
		}
		n.Group = s
		n.Wildmat = strings.ContainsAny(s, "*?")
	}
	return n, nil
}

// checkGroup validates a newsgroup name (RFC 1738 §5 "group"), optionally
// with the wildmat characters "*" and "?".
func checkGroup(s string, wild bool) error {
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := classes[c]&clAlpha != 0 ||
			i > 0 && (classes[c]&clDigit != 0 || strings.IndexByte("-.+_", c) >= 0) ||
			wild && (c == '*' || c == '?')
		if !ok {
			return partErr("newsgroup", "character "+strconv.QuoteRuneToASCII(rune(c))+" is not allowed in a group name")
		}
	}
	return nil
}

// NNTPPath is the url-path of an nntp: URL (RFC 1738 §3.7).
type NNTPPath struct {
	Group      string
	HasArticle bool
	First      int64 // the article number, or the first of a range
	Last       int64 // equal to First for one article
}

// NNTP returns the nntp: view: "/group", "/group/number", or (an
// extension for listing) "/group/first-last".
func (u *URL) NNTP() (*NNTPPath, error) {
	p := u.URLPath()
	group, art, hasArt := strings.Cut(p, "/")
	g, err := decodeArg("nntp group", group)
	if err != nil {
		return nil, err
	}
	if g == "" {
		return nil, partErr("nntp group", "empty; expected nntp://host/group[/number]")
	}
	if err := checkGroup(g, false); err != nil {
		return nil, err
	}
	n := &NNTPPath{Group: g}
	if !hasArt || art == "" {
		return n, nil
	}
	first, last, isRange := strings.Cut(art, "-")
	a, err1 := strconv.ParseInt(first, 10, 64)
	b := a
	var err2 error
	if isRange {
		b, err2 = strconv.ParseInt(last, 10, 64)
	}
	if err1 != nil || err2 != nil || a < 0 || b < a || !isDigits(first) || isRange && !isDigits(last) {
		return nil, partErr("nntp article", strconv.Quote(art)+" is not an article number")
	}
	n.HasArticle, n.First, n.Last = true, a, b
	return n, nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// WAISPath is the url-path and search of a wais: URL (RFC 1738 §3.9).
type WAISPath struct {
	Database  string // decoded
	Search    string // decoded, "+" read as a space
	HasSearch bool   // a non-empty search is present
	Type      string // the wtype of a document, decoded; empty for a database or search
	Length    int64  // the document length of the four-segment form; 0 when unknown
	WPath     string // the document id, still encoded: only the WAIS decoder reads it
}

// IsDocument reports whether the URL names one document.
func (w *WAISPath) IsDocument() bool { return w.Type != "" }

// WAIS returns the WAIS view: database, database?search, or
// database/wtype[/length]/wpath.
func (u *URL) WAIS() (*WAISPath, error) {
	p := u.URLPath()
	db, rest, more := strings.Cut(p, "/")
	d, err := decodeArg("wais database", db)
	if err != nil {
		return nil, err
	}
	if d == "" {
		return nil, partErr("wais database", "empty")
	}
	w := &WAISPath{Database: d}
	if u.HasQuery && u.Query != "" {
		if more && rest != "" {
			return nil, partErr("wais search", "a search URL names only the database: wais://host/database?words")
		}
		s, err := decodeArg("wais search", strings.ReplaceAll(u.Query, "+", " "))
		if err != nil {
			return nil, err
		}
		w.Search, w.HasSearch = s, true
		return w, nil
	}
	if !more || rest == "" {
		return w, nil
	}
	wtype, r, ok := strings.Cut(rest, "/")
	if !ok || r == "" {
		return nil, partErr("wais wpath", "a document URL is wais://host/database/wtype/wpath")
	}
	if w.Type, err = decodeArg("wais wtype", wtype); err != nil {
		return nil, err
	}
	if w.Type == "" {
		return nil, partErr("wais wtype", "empty")
	}
	if j := strings.IndexByte(r, '/'); j > 0 && isDigits(r[:j]) && j+1 < len(r) {
		w.Length, _ = strconv.ParseInt(r[:j], 10, 64)
		r = r[j+1:]
	}
	if err := checkEscapes(r, 0); err != nil {
		return nil, wrapEscape("wais wpath", err)
	}
	w.WPath = r
	return w, nil
}

// FilePath is the view of a file: URL (RFC 1738 §3.10).
type FilePath struct {
	Host  string // as written; empty or "localhost" mean this machine
	Local bool   // the host names this machine
	Path  string // decoded, "/"-separated, starting with "/"
}

// File returns the file: view. A segment whose decoding holds "/" or NUL
// cannot name a local file and is an error.
func (u *URL) File() (*FilePath, error) {
	f := &FilePath{Host: u.Host, Local: u.Host == "" || strings.EqualFold(u.Host, "localhost")}
	p := u.Path
	if !strings.HasPrefix(p, "/") {
		return nil, partErr("file path", `must be absolute: file:///path or file://host/path`)
	}
	segs := strings.Split(p[1:], "/")
	for i, s := range segs {
		d, err := Unescape(s)
		if err != nil {
			return nil, wrapEscape("file path", err)
		}
		if strings.ContainsAny(d, "/\x00") {
			return nil, partErr("file path", "segment "+strconv.Quote(s)+" decodes to a \"/\" or NUL")
		}
		segs[i] = d
	}
	f.Path = "/" + strings.Join(segs, "/")
	return f, nil
}

// TelnetTarget is the view of a telnet: URL (RFC 1738 §3.8). The user and
// password are advisory only.
type TelnetTarget struct {
	User        string
	HasUser     bool
	Password    string
	HasPassword bool
	Host        string
	Port        int
}

// Telnet returns the telnet: view; anything after the final "/" is an
// error.
func (u *URL) Telnet() (*TelnetTarget, error) {
	if u.Path != "" && u.Path != "/" {
		return nil, partErr("telnet URL", `nothing may follow the final "/"`)
	}
	t := &TelnetTarget{Host: u.Hostname(), Port: u.PortNumber()}
	if u.User != nil {
		user, err := decodeArg("user", u.User.user)
		if err != nil {
			return nil, err
		}
		t.User, t.HasUser = user, true
		if pw, ok := u.User.Password(); ok {
			if CheckArg("password", pw) != nil {
				return nil, partErr("password", "decoded CR, LF or NUL is not allowed")
			}
			t.Password, t.HasPassword = pw, true
		}
	}
	return t, nil
}

// Mailto returns the decoded RFC 822 addr-spec of a mailto: URL
// (RFC 1738 §3.5).
func (u *URL) Mailto() (string, error) {
	if u.HasAuthority {
		return "", partErr("mailto address", `mailto: takes no "//"`)
	}
	a, err := decodeArg("mailto address", u.Path)
	if err != nil {
		return "", err
	}
	if a == "" {
		return "", partErr("mailto address", "empty")
	}
	return a, nil
}

// ProsperoField is one ";field=value" pair of a prospero: URL.
type ProsperoField struct{ Name, Value string }

// ProsperoPath is the view of a prospero: URL (RFC 1738 §3.11).
type ProsperoPath struct {
	HSOName string // decoded; "/" carries no meaning the client may assume
	Fields  []ProsperoField
}

// Prospero returns the prospero: view. A user name or password is not
// allowed.
func (u *URL) Prospero() (*ProsperoPath, error) {
	if u.User != nil {
		return nil, partErr("user", "prospero URLs allow no user name or password")
	}
	parts := strings.Split(u.URLPath(), ";")
	h, err := decodeArg("prospero hsoname", parts[0])
	if err != nil {
		return nil, err
	}
	p := &ProsperoPath{HSOName: h}
	for _, f := range parts[1:] {
		name, value, ok := strings.Cut(f, "=")
		if !ok || name == "" {
			return nil, partErr("prospero field", strconv.Quote(f)+" is not name=value")
		}
		n, err := decodeArg("prospero field", name)
		if err != nil {
			return nil, err
		}
		v, err := decodeArg("prospero field", value)
		if err != nil {
			return nil, err
		}
		p.Fields = append(p.Fields, ProsperoField{n, v})
	}
	return p, nil
}
