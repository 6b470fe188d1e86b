package prospero

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// Fetcher dereferences prospero: URLs. The zero value is ready to use.
type Fetcher struct {
	// Timeout is the first wait for a reply before the request is sent
	// again; each retry waits twice as long, and progress (a packet that
	// extends the reply) starts the count again. 0 means 4 s, ARDP's.
	Timeout time.Duration
	// Retries is how many times a request is sent again; 0 means 2
	// (transmissions at 0, 4 and 12 s, failure at 28 s), -1 none.
	Retries int
	// MaxWait is the longest wait a server may ask for (ARDP's wait
	// hint) before the retrieval gives up as a temporary failure; 0
	// means one minute.
	MaxWait time.Duration
	// Window is the window of packets asked of the server (ARDP's flag
	// 0x08); 0 means 64, -1 the server's default (16).
	Window int
	// InBandMax is the largest file fetched in-band (PROSPERO-CONTENTS)
	// when the object offers another access method as well (AFTP, FTP,
	// GOPHER, WAIS); 0 means 64 KiB, where the two cost the same on
	// loopback (UDP datagrams of 1250 octets against a TCP stream: a MiB
	// takes 7 times as long in-band, fetch's BenchmarkProsperoMiB). A file
	// is in-band whatever its size when it offers no other way, up to
	// ARDP's 65535 packets.
	InBandMax int64
}

func (f *Fetcher) timeout() time.Duration {
	if f.Timeout > 0 {
		return f.Timeout
	}
	return 4 * time.Second
}

func (f *Fetcher) retries() int {
	switch {
	case f.Retries < 0:
		return 0
	case f.Retries == 0:
		return 2
	}
	return f.Retries
}

func (f *Fetcher) maxWait() time.Duration {
	if f.MaxWait > 0 {
		return f.MaxWait
	}
	return time.Minute
}

func (f *Fetcher) window() int {
	switch {
	case f.Window < 0:
		return 0
	case f.Window == 0:
		return 64
	}
	return min(f.Window, 256)
}

func (f *Fetcher) inBandMax() int64 {
	if f.InBandMax > 0 {
		return f.InBandMax
	}
	return 64 << 10
}

// ListingType is the media type of a folder's reply as the server sent
// it, which is its Body and its archived record.
const ListingType = "application/x-prospero-listing"

// maxHSOName is the longest hsoname sent: the reference server dies on
// longer ones (a request of two packets).
const maxHSOName = 1024

// target is what a URL asks for: an hsoname and its version.
type target struct {
	host    string // HOST:PORT
	hsoname string
	version string
}

func parseTarget(u *url.URL) (target, error) {
	p, err := u.Prospero()
	if err != nil {
		return target{}, fmt.Errorf("%w: %w", protocols.ErrBadURL, err)
	}
	t := target{host: u.HostPort(), hsoname: p.HSOName, version: "0"}
	for _, f := range p.Fields {
		switch strings.ToUpper(f.Name) {
		case "OBJECT-VERSION":
			if _, err := strconv.ParseUint(f.Value, 10, 32); err != nil {
				return t, fmt.Errorf("%w: prospero field OBJECT-VERSION: %q is not a version number", protocols.ErrBadURL, f.Value)
			}
			t.version = f.Value
		default:
			return t, fmt.Errorf("%w: prospero field %s: not one deref honours (OBJECT-VERSION is)", protocols.ErrBadURL, printable(f.Name))
		}
	}
	if len(t.hsoname) > maxHSOName {
		return t, fmt.Errorf("%w: prospero hsoname: %d octets, more than the %d a server takes", protocols.ErrBadURL, len(t.hsoname), maxHSOName)
	}
	return t, nil
}

// preamble opens every request: the protocol's version and an anonymous
// identity (never the user's name).
const preamble = "VERSION 5 deref\nAUTHENTICATE '' UNAUTHENTICATED anonymous\n"

// InfoRequest asks for an object's attributes and, unless head, for its
// entries should it be a folder: one exchange tells a file from a folder
// and lists a folder (a file's DIRECTORY answers NOT-A-DIRECTORY, after
// its attributes).
func InfoRequest(hsoname, version string, head bool) string {
	s := preamble + "GET-OBJECT-INFO #ALL ASCII " + Quote(hsoname) + " " + version + "\n"
	if !head {
		s += "DIRECTORY ASCII " + Quote(hsoname) + "\nLIST ATTRIBUTES COMPONENTS\n"
	}
	return s
}

// ContentsRequest asks for a file's bytes in-band.
func ContentsRequest(hsoname, version string) string {
	return preamble + "GET-OBJECT-INFO CONTENTS ASCII " + Quote(hsoname) + " " + version + "\n"
}

func (f *Fetcher) traceRequest(req *protocols.Request, text string) {
	if req.Trace == nil {
		return
	}
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		req.Tracef(protocols.TraceSend, l)
	}
}

// Fetch dereferences a prospero: URL: a file's bytes, a folder's
// entries, a FORWARDED object's new name as a redirect.
func (f *Fetcher) Fetch(ctx context.Context, req *protocols.Request) (*protocols.Response, error) {
	t, err := parseTarget(req.URL)
	if err != nil {
		return nil, err
	}
	text := InfoRequest(t.hsoname, t.version, req.HeadOnly)
	req.Tracef(protocols.TraceInfo, "sending to "+t.host+" (UDP)")
	f.traceRequest(req, text)
	x, err := f.newExchange(ctx, req, t.host, []byte(text), req.ListingLimit())
	if err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(x)
	x.close()
	if err != nil {
		return nil, err
	}
	if req.Trace != nil {
		lines, _ := Lines(string(raw))
		for _, l := range lines {
			req.Tracef(protocols.TraceRecv, l)
		}
	}
	r, err := ParseReply(string(raw))
	if err != nil {
		return nil, err
	}
	note := strings.Join(r.Warnings, "; ")
	if r.Forwarded != nil {
		loc, err := forwardURL(r.Forwarded)
		if err != nil {
			return nil, err
		}
		return &protocols.Response{Kind: protocols.KindRedirect, Location: loc, Status: "FORWARDED", Size: -1, Body: io.NopCloser(strings.NewReader("")), Note: note}, nil
	}
	if r.Failure != nil && r.Failure.Code == "NOT-A-DIRECTORY" && len(r.Attributes) == 0 && !req.HeadOnly {
		// Neither attributes nor entries: a link whose target is gone.
		return nil, &Error{Line: r.Failure.Line + " (and no attributes: nothing there)", Code: r.Failure.Code, Kind: protocols.ErrNotFound}
	}
	if r.Failure != nil && !(r.Failure.Code == "NOT-A-DIRECTORY" && len(r.Attributes) > 0) {
		return nil, r.Failure
	}
	if len(r.Unresolved) > 0 {
		note = strings.TrimPrefix(note+"; the server left unresolved: "+strings.Join(r.Unresolved, " "), "; ")
	}
	resp := &protocols.Response{Size: Size(r.Attributes), ModTime: ModTime(r.Attributes), Name: SuggestedName(req.URL), Note: note}
	folder := r.Failure == nil && !req.HeadOnly || req.HeadOnly && IsFolder(r.Attributes) && len(r.Attributes) > 0
	if folder {
		resp.Kind, resp.Size, resp.MediaType = protocols.KindDirectory, int64(len(raw)), ListingType
		for _, l := range r.Links {
			if e, ok := EntryOf(l); ok {
				resp.Entries = append(resp.Entries, e)
			}
		}
		if req.HeadOnly {
			resp.Size = -1
		}
		resp.Body = io.NopCloser(bytes.NewReader(raw))
		return resp, nil
	}
	if len(r.Attributes) == 0 {
		return nil, protoErr("no attributes for %s", printable(t.hsoname))
	}
	resp.Kind, resp.MediaType = protocols.KindFile, mediaType(t.hsoname)
	if req.HeadOnly {
		resp.Body = io.NopCloser(strings.NewReader(""))
		return resp, nil
	}
	inBand, other, names := choose(Methods(r.Attributes), t)
	if inBand && other != nil && !(resp.Size >= 0 && resp.Size <= f.inBandMax()) && !reachable(ctx, req, other) {
		req.Tracef(protocols.TraceInfo, fmt.Sprintf("%s names %s, where nothing answers: in-band instead", names[0], other.HostPort()))
		other = nil
	}
	switch {
	case inBand && (other == nil || resp.Size >= 0 && resp.Size <= f.inBandMax()):
		req.Tracef(protocols.TraceInfo, "in-band (PROSPERO-CONTENTS), "+why(other, resp.Size, f.inBandMax()))
		return f.contents(ctx, req, t, resp)
	case other != nil:
		req.Tracef(protocols.TraceInfo, "access method "+names[0]+": "+other.Redacted())
		return &protocols.Response{Kind: protocols.KindRedirect, Location: other, Status: "ACCESS-METHOD " + names[0], Size: -1, Body: io.NopCloser(strings.NewReader("")), Note: note}, nil
	}
	return nil, fmt.Errorf("%w: prospero: %s offers no access method deref can use (%s)", protocols.ErrNotRetrievable, printable(t.hsoname), strings.Join(names, ", "))
}

// reachable says whether a connection to u's server opens, within 2 s
// or the connect time-out: an access method that names a server where
// nothing listens (an FTP area no FTP server serves) is no way to the
// object when the server holding it sends it in-band.
func reachable(ctx context.Context, req *protocols.Request, u *url.URL) bool {
	d := 2 * time.Second
	if req.ConnectTimeout > 0 {
		d = min(d, req.ConnectTimeout)
	}
	cctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	c, err := req.Dialer()(cctx, "tcp", u.HostPort())
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// why says why the in-band method was chosen.
func why(other *url.URL, size, limit int64) string {
	if other == nil {
		return "the only access method deref can use that answers"
	}
	return fmt.Sprintf("%d bytes, at most the %d fetched in-band when another way is offered", size, limit)
}

// choose reads an object's access methods in the server's order: whether
// it can be read in-band, the URL of the first other method deref can
// use, and the names of the methods (the usable other one first).
func choose(methods [][]string, t target) (inBand bool, other *url.URL, names []string) {
	for _, m := range methods {
		switch m[0] {
		case "PROSPERO-CONTENTS":
			inBand = true
			continue
		}
		if other == nil {
			if u := MethodURL(m, t.host, t.hsoname); u != nil {
				other = u
				names = append([]string{m[0]}, names...)
				continue
			}
		}
		names = append(names, m[0])
	}
	if inBand {
		names = append(names, "PROSPERO-CONTENTS")
	}
	return inBand, other, names
}

// MethodURL is the URL of an ACCESS-METHOD tuple deref fetches with its
// own client (the notes' 4.5): AFTP as an anonymous ftp:// URL, FTP as an
// ftp:// URL from the root, GOPHER and WAIS as theirs. linkHost and
// linkName stand for an empty host and hsoname (the object's own). nil
// for the methods deref never uses (LOCAL names the client's own files;
// AFS, NFS) and for tuples short of their fields.
func MethodURL(m []string, linkHost, linkName string) *url.URL {
	if len(m) < 5 {
		return nil
	}
	host, name := m[2], m[4]
	if host == "" {
		host = linkHost
	} else {
		host = hostPort(host)
	}
	if name == "" {
		name = linkName
	}
	if host == "" || strings.ContainsAny(host, "/@?#") {
		return nil
	}
	var s string
	switch m[0] {
	case "AFTP", "FTP":
		segs := strings.Split(strings.TrimPrefix(name, "/"), "/")
		for i, seg := range segs {
			segs[i] = url.EscapeSegment(seg)
		}
		p := strings.Join(segs, "/")
		if m[0] == "FTP" {
			p = "%2F" + p // a full path, from the root after logging in
		}
		typ := "i"
		if len(m) > 5 && m[5] == "TEXT" {
			typ = "a"
		}
		s = "ftp://" + host + "/" + p + ";type=" + typ
	case "GOPHER":
		typ, sel := "", name
		if len(m) > 5 {
			switch t := m[5]; {
			case t == "BINARY":
				typ = "9"
			case t == "TEXT":
				typ = "0"
			case len(t) == 1:
				typ = t
			}
		}
		if typ == "" {
			if sel == "" {
				return nil
			}
			typ = sel[:1] // the selector whole, its first character its type
		}
		s = "gopher://" + host + "/" + typ + url.EscapeGopher(sel)
	case "WAIS":
		s = "wais://" + host + "/" + EscapeHSOName(strings.TrimPrefix(name, "/"))
	default:
		return nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil
	}
	return u
}

// hostPort turns a host as the server writes it, NAME or NAME(PORT), into
// NAME or NAME:PORT, in lower case.
func hostPort(h string) string {
	h = strings.ToLower(h)
	if name, port, ok := strings.Cut(h, "("); ok && strings.HasSuffix(port, ")") {
		port = strings.TrimSuffix(port, ")")
		if n, err := strconv.Atoi(port); err == nil && n > 0 && n < 65536 {
			if n == DefaultPort {
				return name
			}
			return name + ":" + port
		}
		return ""
	}
	return h
}

// EscapeHSOName encodes an hsoname for a prospero: URL (the notes' 2.3):
// "/" stays, as part of the name; "%", ";", "?", space, the octets
// outside 0x21-0x7e and the unsafe characters are %-encoded.
func EscapeHSOName(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= 0x20 || c >= 0x7f || strings.IndexByte("%;?\"#<>\\^`{|}[]", c) >= 0 {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// ObjectURL is the prospero: URL of an object of a server as a LINK line
// names them: host NAME or NAME(PORT), the hsoname.
func ObjectURL(host, hsoname string) (*url.URL, error) {
	h := hostPort(host)
	if h == "" || strings.ContainsAny(h, "/@?#;") {
		return nil, protoErr("a host that is none: %s", host)
	}
	return url.Parse("prospero://" + h + "/" + EscapeHSOName(hsoname))
}

func forwardURL(f *Forward) (*url.URL, error) {
	if f.HostType != "INTERNET-D" {
		return nil, protoErr("FORWARDED to a host of type %s", f.HostType)
	}
	u, err := ObjectURL(f.Host, f.HSOName)
	if err != nil {
		return nil, err
	}
	if f.Version != "" && f.Version != "0" {
		if _, err := strconv.ParseUint(f.Version, 10, 32); err == nil {
			u.Path += ";OBJECT-VERSION=" + f.Version
			return url.Parse(u.String())
		}
	}
	return u, nil
}

// EntryOf is the listing entry of a LINK line with its attributes (the
// notes' section 7); ok is false for a link the client may not read
// (NULL).
func EntryOf(l Link) (protocols.Entry, bool) {
	e := protocols.Entry{Name: l.Name, Size: -1, ModTime: ModTime(l.Attributes), Type: l.Target}
	switch l.Target {
	case "NULL":
		return e, false
	case "DIRECTORY", "DIRECTORY+FILE":
		e.Kind = protocols.KindDirectory
	case "SYMBOLIC":
		e.Kind, e.Target = protocols.KindLink, l.HSOName
		return e, true
	case "EXTERNAL":
		e.Kind, e.Size = protocols.KindFile, Size(l.Attributes)
		for _, m := range Methods(l.Attributes) {
			if u := MethodURL(m, "", ""); u != nil {
				e.URL = u.String()
				break
			}
		}
		return e, true
	default: // FILE, OBJECT
		e.Kind, e.Size = protocols.KindFile, Size(l.Attributes)
	}
	if l.HostType == "INTERNET-D" {
		if u, err := ObjectURL(l.Host, l.HSOName); err == nil {
			e.URL = u.String()
			e.Host, e.Port = u.Hostname(), u.PortNumber()
		}
	}
	return e, true
}

// SuggestedName is the local file name of u: the hsoname's last
// element, "/" being the convention of the servers deref knows.
func SuggestedName(u *url.URL) string {
	p, err := u.Prospero()
	if err != nil {
		return ""
	}
	return path.Base("/" + strings.TrimRight(p.HSOName, "/"))
}

// SuggestedName is the package function (protocols.Namer).
func (f *Fetcher) SuggestedName(u *url.URL) string { return SuggestedName(u) }

// mediaType guesses from the name's suffix, as for FTP: the protocol
// gives none.
func mediaType(name string) string {
	if ext := path.Ext(name); ext != "" {
		if t := mime.TypeByExtension(ext); t != "" {
			if mt, _, err := mime.ParseMediaType(t); err == nil {
				return mt
			}
		}
	}
	return ""
}

// contents fetches a file in-band: its CONTENTS attribute, one token of
// every octet, unquoted as it streams in.
func (f *Fetcher) contents(ctx context.Context, req *protocols.Request, t target, resp *protocols.Response) (*protocols.Response, error) {
	text := ContentsRequest(t.hsoname, t.version)
	f.traceRequest(req, text)
	// The reply is the prefix, the octets with each ' doubled, two quotes
	// and a line feed: at most twice the size and a little.
	limit := int64(0)
	if resp.Size >= 0 {
		limit = 2*resp.Size + 256
	}
	x, err := f.newExchange(ctx, req, t.host, []byte(text), limit)
	if err != nil {
		return nil, err
	}
	body := &contentsBody{x: x, br: bufio.NewReaderSize(x, 32<<10), size: resp.Size, req: req}
	if err := body.start(); err != nil {
		x.close()
		return nil, err
	}
	if req.Offset > 0 {
		if _, err := io.CopyN(io.Discard, body, req.Offset); err != nil {
			x.close()
			if err == io.EOF {
				return nil, fmt.Errorf("%w: offset %d of %d bytes", protocols.ErrRangeNotSatisfied, req.Offset, body.n)
			}
			return nil, err
		}
		resp.Offset = req.Offset
		if resp.Size >= 0 {
			resp.Size -= req.Offset
		}
	}
	resp.Body = body
	return resp, nil
}

// contentsPrefix is what the one line of a CONTENTS reply begins with.
var contentsPrefix = []string{"ATTRIBUTE", "OBJECT", "INTRINSIC", "CONTENTS", "SEQUENCE", "DATA"}

// contentsBody unquotes the DATA token of a CONTENTS reply as it comes.
type contentsBody struct {
	x      *exchange
	br     *bufio.Reader
	req    *protocols.Request
	size   int64 // SIZE; -1 unknown
	n      int64 // octets given
	quoted bool
	end    bool
	err    error
}

// start reads the line's prefix, up to the DATA token's first octet; a
// reply that is not a CONTENTS line is read whole and said.
func (b *contentsBody) start() error {
	var tok []byte
	var got []string
	for len(got) < len(contentsPrefix) {
		c, err := b.br.ReadByte()
		if err != nil {
			if err == io.EOF {
				return b.other(string(tok), got)
			}
			return err
		}
		switch {
		case c == ' ' || c == '\t':
			if len(tok) > 0 {
				got = append(got, string(tok))
				tok = tok[:0]
				if got[len(got)-1] != contentsPrefix[len(got)-1] {
					return b.other("", got)
				}
			}
		case c == '\n' || c == '\'' || len(tok) > 64:
			tok = append(tok, c)
			return b.other(string(tok), got)
		default:
			tok = append(tok, c)
		}
	}
	for {
		c, err := b.br.ReadByte()
		if err != nil {
			return b.other("", got)
		}
		if c != ' ' && c != '\t' {
			b.br.UnreadByte()
			break
		}
	}
	if b.req.Trace != nil {
		b.req.Tracef(protocols.TraceRecv, strings.Join(contentsPrefix, " ")+" (the file's octets, quoted)")
	}
	return nil
}

// other reads the rest of a reply that is not the CONTENTS line and says
// what it is: a FAILURE, NONE-FOUND (a folder, a dangling link), or not
// the protocol's.
func (b *contentsBody) other(head string, got []string) error {
	rest, err := io.ReadAll(io.LimitReader(b.br, 64<<10))
	if err != nil {
		return err
	}
	msg := strings.Join(got, " ")
	if len(got) > 0 {
		msg += " "
	}
	msg += head + string(rest)
	if b.req.Trace != nil {
		lines, _ := Lines(msg)
		for _, l := range lines {
			b.req.Tracef(protocols.TraceRecv, l)
		}
	}
	r, err := ParseReply(msg)
	switch {
	case err != nil:
		return err
	case r.Failure != nil:
		return r.Failure
	case r.NoneFound > 0:
		return &Error{Line: "NONE-FOUND: the object has no contents", Kind: protocols.ErrNotRetrievable}
	}
	return protoErr("no CONTENTS line in the reply: %s", strings.TrimSpace(msg))
}

// Read gives the file's octets.
func (b *contentsBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n := 0
	for n < len(p) && !b.end {
		if !b.quoted {
			c, err := b.br.ReadByte()
			if err != nil {
				if err == io.EOF {
					b.end = true
					break
				}
				b.err = err
				return n, err
			}
			switch c {
			case '\'':
				b.quoted = true
			case ' ', '\t', '\n':
				b.end = true
				if err := b.finish(); err != nil {
					b.err = err
				}
			default:
				p[n] = c
				n++
			}
			continue
		}
		buf, err := b.br.Peek(max(1, b.br.Buffered()))
		if len(buf) == 0 {
			if err == io.EOF {
				err = protoErr("the file's octets end inside a quote")
			}
			b.err = err
			return n, err
		}
		i := indexQuote(buf)
		k := copy(p[n:], buf[:i])
		b.br.Discard(k)
		n += k
		if k < i || i == len(buf) {
			continue
		}
		two, err := b.br.Peek(2)
		switch {
		case len(two) == 2 && two[1] == '\'':
			p[n] = '\''
			n++
			b.br.Discard(2)
		case len(two) == 2 || err == io.EOF:
			b.br.Discard(1)
			b.quoted = false
		default:
			b.err = err
			return n, err
		}
	}
	b.n += int64(n)
	if b.size >= 0 && b.n > b.size {
		b.err = protoErr("the file's octets run past its SIZE of %d", b.size)
		return n, b.err
	}
	if b.end && b.err == nil {
		if b.size >= 0 && b.n < b.size {
			b.err = fmt.Errorf("%w: %d of %d bytes (prospero CONTENTS)", protocols.ErrShortBody, b.n, b.size)
		} else {
			b.err = io.EOF
		}
	}
	if n > 0 {
		return n, nil
	}
	return 0, b.err
}

func indexQuote(b []byte) int {
	for i, c := range b {
		if c == '\'' {
			return i
		}
	}
	return len(b)
}

// finish checks that the message ends after the token.
func (b *contentsBody) finish() error {
	rest, err := io.ReadAll(io.LimitReader(b.br, 4096))
	if err != nil {
		return err
	}
	if s := strings.TrimSpace(string(rest)); s != "" {
		return protoErr("more after the file's octets: %s", s)
	}
	return nil
}

// Close ends the exchange; a reply left unread is cancelled.
func (b *contentsBody) Close() error {
	if !b.x.done {
		b.x.cancel()
	}
	b.x.close()
	return nil
}

// Abort breaks a Read under way (protocols.Aborter).
func (b *contentsBody) Abort() { b.x.Abort() }
