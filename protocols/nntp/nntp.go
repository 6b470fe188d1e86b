// Package nntp dereferences news: and nntp: URLs (RFC 1738 §3.6-3.7)
// over NNTP (RFC 3977), with AUTHINFO USER/PASS (RFC 4643), STARTTLS and
// TLS on port 563 for nntps: and snews:.
//
// news:<message-id> sends ARTICLE <message-id>; news:<group> lists the
// group's newest articles from its overview (OVER, else XOVER); news:* and
// a wildmat such as news:comp.lang.* list groups (LIST ACTIVE, with LIST
// NEWSGROUPS for descriptions when asked). nntp://host/<group>/<n> sends
// GROUP then ARTICLE <n>; nntp://host/<group> lists the group and
// nntp://host/<group>/<first>-<last> those articles.
//
// news: URLs name no server: it comes from the Fetcher, else $NNTPSERVER,
// else "news" on port 119. Articles are streamed with the dot-stuffing
// undone and CRLF read as LF; every line the server sends is bounded.
package nntp

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"net/mail"
	"net/textproto"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/protocols/internal/idleconn"
	"github.com/urlderef/deref/url"
)

// Fetcher retrieves news articles and listings. The zero value is ready to
// use.
type Fetcher struct {
	// Server is the news server of news: and snews: URLs, as host or
	// host:port; empty means $NNTPSERVER, else "news".
	Server string
	// Articles is how many of a group's newest articles a group listing
	// shows; 0 means 100.
	Articles int
	// Descriptions adds each group's description (LIST NEWSGROUPS) to
	// group listings.
	Descriptions bool
	// StartTLS upgrades plain connections with STARTTLS; a server that does
	// not offer it fails the URL.
	StartTLS bool
	// MaxIdle is the number of idle connections kept per server and login;
	// 0 means 2, negative none.
	MaxIdle int

	mu   sync.Mutex
	idle map[string][]*conn
}

// maxListing bounds the lines of a listing held for parsing.
const maxListing = 1 << 20

// maxHeader bounds an article's header block.
const maxHeader = 1 << 20

// ServerAddr returns the address to dial for u, the host name to verify
// TLS against, and whether TLS starts at once.
func (f *Fetcher) ServerAddr(u *url.URL) (addr, host string, implicitTLS bool) {
	implicitTLS = u.Scheme == "snews" || u.Scheme == "nntps"
	port := "119"
	if implicitTLS {
		port = "563"
	}
	if u.Host != "" {
		return u.HostPort(), u.Hostname(), implicitTLS
	}
	s := f.Server
	if s == "" {
		s = os.Getenv("NNTPSERVER")
	}
	if s == "" {
		s = "news"
	}
	if h, _, err := net.SplitHostPort(s); err == nil {
		return s, h, implicitTLS
	}
	h := strings.Trim(s, "[]") // a host alone, an IPv6 address with or without brackets
	return net.JoinHostPort(h, port), h, implicitTLS
}

// ServerHost is the host name of the server of u, for credentials.
func (f *Fetcher) ServerHost(u *url.URL) string {
	_, h, _ := f.ServerAddr(u)
	return h
}

func (f *Fetcher) articles() int64 {
	if f.Articles > 0 {
		return int64(f.Articles)
	}
	return 100
}

func (f *Fetcher) maxIdle() int {
	switch {
	case f.MaxIdle < 0:
		return 0
	case f.MaxIdle == 0:
		return 2
	}
	return f.MaxIdle
}

// get returns an idle connection to the server of req, or a new one.
func (f *Fetcher) get(ctx context.Context, req *protocols.Request) (*conn, bool, error) {
	addr, _, implicitTLS := f.ServerAddr(req.URL)
	key := f.poolKey(addr, req, implicitTLS)
	f.mu.Lock()
	for len(f.idle[key]) > 0 {
		l := f.idle[key]
		c := l[len(l)-1]
		f.idle[key] = l[:len(l)-1]
		f.mu.Unlock()
		if !idleconn.Usable(c.raw) {
			// Closed by the server while idle, or a reply sent unasked
			// (INN's "400 ... timeout"): dropped, and another taken.
			req.Tracef(protocols.TraceInfo, "the kept connection to "+addr+" was closed by the server while idle; not reused")
			c.raw.Close()
			f.mu.Lock()
			continue
		}
		c.req = req
		c.limit = req.LineLimit()
		req.MarkActive() // connected already: only idle time counts
		c.stop = context.AfterFunc(ctx, func() { c.raw.SetDeadline(aLongTimeAgo) })
		req.Tracef(protocols.TraceInfo, "reusing the connection to "+addr)
		return c, true, nil
	}
	f.mu.Unlock()
	c, err := f.dialFor(ctx, req)
	return c, false, err
}

// poolKey says which idle connections a request may take: those of the
// same server, TLS, user and password (kept as a digest), so that a
// connection logged in with a password never serves a request without it.
func (f *Fetcher) poolKey(addr string, req *protocols.Request, implicitTLS bool) string {
	pw := sha256.Sum256([]byte(req.Credentials.Password))
	return addr + "\x00" + req.Credentials.User + "\x00" + string(pw[:]) + "\x00" + strconv.FormatBool(implicitTLS || f.StartTLS)
}

// dialFor opens a new connection to the server of req.
func (f *Fetcher) dialFor(ctx context.Context, req *protocols.Request) (*conn, error) {
	addr, host, implicitTLS := f.ServerAddr(req.URL)
	c, err := f.dial(ctx, req, addr, host, implicitTLS)
	if err != nil && req.URL.Host == "" && f.Server == "" && os.Getenv("NNTPSERVER") == "" && errors.Is(err, protocols.ErrNetwork) {
		// The URL names no server (news:GROUP), nor does anyone else:
		// say where deref went, and how to name one.
		return nil, fmt.Errorf("%w (a news: URL names no server, none was set with $NNTPSERVER, deref's --news-server or Fetcher.Server, and the host \"news\" was tried)", err)
	}
	if err != nil {
		return nil, err
	}
	c.key = f.poolKey(addr, req, implicitTLS)
	return c, nil
}

// put keeps c for the next URL, or closes it.
func (f *Fetcher) put(c *conn) {
	if c.stop != nil {
		c.stop()
		c.stop = nil
	}
	if c.broken {
		c.raw.Close()
		return
	}
	c.raw.SetDeadline(time.Time{})
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.idle == nil {
		f.idle = map[string][]*conn{}
	}
	if len(f.idle[c.key]) >= f.maxIdle() {
		c.raw.Close()
		return
	}
	f.idle[c.key] = append(f.idle[c.key], c)
}

// CloseIdle closes the idle connections.
func (f *Fetcher) CloseIdle() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k, l := range f.idle {
		for _, c := range l {
			c.raw.Close()
		}
		delete(f.idle, k)
	}
}

// Fetch dereferences a news:, snews:, nntp: or nntps: URL.
func (f *Fetcher) Fetch(ctx context.Context, req *protocols.Request) (*protocols.Response, error) {
	op, err := f.plan(req.URL)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", protocols.ErrBadURL, err)
	}
	c, reused, err := f.get(ctx, req)
	if err != nil {
		return nil, err
	}
	resp, err := op(ctx, c)
	if err != nil && reused && !isReply(err) && ctx.Err() == nil {
		// The server dropped the idle connection: once more on a new one.
		c.broken = true
		f.put(c)
		if c, err = f.dialFor(ctx, req); err != nil {
			return nil, err
		}
		resp, err = op(ctx, c)
	}
	if err != nil {
		c.broken = c.broken || !isReply(err)
		f.put(c)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	return resp, nil
}

func isReply(err error) bool {
	var re *ReplyError
	return errors.As(err, &re)
}

type operation func(ctx context.Context, c *conn) (*protocols.Response, error)

// plan reads the URL into the operation that dereferences it, checking
// every argument before anything is sent.
func (f *Fetcher) plan(u *url.URL) (operation, error) {
	switch u.Scheme {
	case "news", "snews":
		n, err := u.News()
		if err != nil {
			return nil, err
		}
		switch {
		case n.MessageID != "":
			if err := checkMessageID(n.MessageID); err != nil {
				return nil, err
			}
			id := "<" + n.MessageID + ">"
			return func(ctx context.Context, c *conn) (*protocols.Response, error) {
				return f.article(ctx, c, u, "ARTICLE "+id, protocols.SafeName(n.MessageID))
			}, nil
		case n.All:
			return func(ctx context.Context, c *conn) (*protocols.Response, error) { return f.groups(ctx, c, u, "") }, nil
		case n.Wildmat:
			return func(ctx context.Context, c *conn) (*protocols.Response, error) { return f.groups(ctx, c, u, n.Group) }, nil
		}
		return func(ctx context.Context, c *conn) (*protocols.Response, error) {
			return f.overview(ctx, c, u, n.Group, 0, 0)
		}, nil
	case "nntp", "nntps":
		p, err := u.NNTP()
		if err != nil {
			return nil, err
		}
		switch {
		case p.HasArticle && p.First == p.Last:
			return func(ctx context.Context, c *conn) (*protocols.Response, error) {
				if _, _, _, err := c.selectGroup(ctx, p.Group); err != nil {
					return nil, err
				}
				return f.article(ctx, c, u, "ARTICLE "+strconv.FormatInt(p.First, 10), strconv.FormatInt(p.First, 10))
			}, nil
		case p.HasArticle:
			return func(ctx context.Context, c *conn) (*protocols.Response, error) {
				return f.overview(ctx, c, u, p.Group, p.First, p.Last)
			}, nil
		}
		return func(ctx context.Context, c *conn) (*protocols.Response, error) {
			return f.overview(ctx, c, u, p.Group, 0, 0)
		}, nil
	}
	return nil, fmt.Errorf("scheme %s is not news or nntp", u.Scheme)
}

// checkMessageID applies RFC 3977 §3.6: at most 250 octets with the angle
// brackets, printable US-ASCII only.
func checkMessageID(id string) error {
	if len(id)+2 > 250 {
		return errors.New("news message-id: longer than 250 octets")
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c < 0x21 || c > 0x7e || c == '>' {
			return fmt.Errorf("news message-id: byte %#02x is not allowed (RFC 3977 §3.6)", c)
		}
	}
	return nil
}

// article sends an ARTICLE command and streams the article: its header
// block is read first (bounded) for the metadata, then headers and body
// are passed on.
func (f *Fetcher) article(ctx context.Context, c *conn, u *url.URL, line, name string) (*protocols.Response, error) {
	code, text, err := c.do(ctx, line)
	if err != nil {
		return nil, err
	}
	if code != 220 {
		return nil, &ReplyError{Cmd: line, Code: code, Text: text, kind: replyKind(code)}
	}
	dot := &wireDotReader{r: c.br}
	hr := bufio.NewReaderSize(dot, 16<<10)
	head, fields, err := readHeader(hr, c.limit)
	if err != nil {
		c.broken = true
		return nil, err
	}
	resp := &protocols.Response{Kind: protocols.KindFile, Size: -1, MediaType: "message/rfc822", Name: name}
	for _, h := range []string{"Subject", "From", "Date", "Newsgroups", "Message-ID"} {
		if v := fields.Get(h); v != "" {
			resp.Attributes = append(resp.Attributes, protocols.Attribute{Name: h, Value: v})
		}
	}
	if t, err := mail.ParseDate(fields.Get("Date")); err == nil {
		resp.ModTime = t
	}
	resp.Body = &articleBody{f: f, c: c, r: io.MultiReader(bytes.NewReader(head), hr)}
	return resp, nil
}

// readHeader reads the header block of an article, up to and including
// the empty line, each line at most limit bytes and all at most maxHeader.
func readHeader(r *bufio.Reader, limit int) ([]byte, textproto.MIMEHeader, error) {
	var head []byte
	for {
		var line []byte
		for {
			frag, err := r.ReadSlice('\n')
			if len(line)+len(frag) > limit || len(head)+len(line)+len(frag) > maxHeader {
				return nil, nil, fmt.Errorf("%w: an article header line longer than %d bytes", protocols.ErrProtocol, limit)
			}
			line = append(line, frag...)
			if err == nil {
				break
			}
			if err == io.EOF && len(line) == 0 && len(head) > 0 {
				// An article without a body: headers end at the terminator.
				fields, _ := textproto.NewReader(bufio.NewReader(bytes.NewReader(append(head, '\n')))).ReadMIMEHeader()
				return head, fields, nil
			}
			if err != bufio.ErrBufferFull {
				if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
					return nil, nil, fmt.Errorf("%w: the article ended in its header", protocols.ErrShortBody)
				}
				return nil, nil, protocols.NetError(err)
			}
		}
		head = append(head, line...)
		if len(line) == 1 || len(line) == 2 && line[0] == '\r' { // the empty line
			break
		}
	}
	fields, err := textproto.NewReader(bufio.NewReader(bytes.NewReader(head))).ReadMIMEHeader()
	if err != nil && len(fields) == 0 {
		fields = textproto.MIMEHeader{}
	}
	return head, fields, nil
}

// wireDotReader reads a multi-line block as RFC 3977 §3.1.1 sends it,
// as it came: each line with its CRLF, only the dot-stuffing (which is
// transport) undone, up to the terminating "." line, which is not
// returned. An article is so the bytes the server holds, whose count is
// the one OVER gives (:bytes), and what an archive records.
type wireDotReader struct {
	r       *bufio.Reader
	pending []byte
	mid     bool // within a line longer than r's buffer
	done    bool
}

func (d *wireDotReader) Read(p []byte) (int, error) {
	for len(d.pending) == 0 {
		if d.done {
			return 0, io.EOF
		}
		frag, err := d.r.ReadSlice('\n')
		if len(frag) > 0 && !d.mid && frag[0] == '.' {
			if string(frag) == ".\r\n" || string(frag) == ".\n" {
				d.done = true
				return 0, io.EOF
			}
			frag = frag[1:]
		}
		d.mid = err == bufio.ErrBufferFull
		if err != nil && err != bufio.ErrBufferFull {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		d.pending = frag
	}
	n := copy(p, d.pending)
	d.pending = d.pending[n:]
	return n, nil
}

// articleBody streams an article and returns its connection to the pool
// once the terminating line is read.
type articleBody struct {
	f    *Fetcher
	c    *conn
	r    io.Reader
	done bool
	err  error
}

func (b *articleBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.r.Read(p)
	switch {
	case err == io.EOF:
		b.finish()
	case err != nil:
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("%w: the connection ended before the article's terminating line", protocols.ErrShortBody)
		} else {
			err = protocols.NetError(err)
		}
		b.err = err
		b.c.broken = true
		b.finish()
	}
	return n, err
}

func (b *articleBody) finish() {
	if !b.done {
		b.done = true
		b.f.put(b.c)
	}
}

// Close releases the connection; an article not read to its end leaves
// the connection unusable, so it is closed.
func (b *articleBody) Close() error {
	if !b.done {
		b.c.broken = true
		b.finish()
	}
	return nil
}

// newsURL is the news: URL of a message-id (without its brackets).
func newsURL(id string) string {
	return "news:" + url.EscapeSegment(id)
}

// overview lists articles first to last of a group (0, 0: the newest
// Articles) from OVER, or XOVER where the server lacks OVER.
func (f *Fetcher) overview(ctx context.Context, c *conn, u *url.URL, group string, first, last int64) (*protocols.Response, error) {
	count, low, high, err := c.selectGroup(ctx, group)
	if err != nil {
		return nil, err
	}
	resp := &protocols.Response{Kind: protocols.KindArticleList, Size: -1, MediaType: "text/plain", Name: protocols.SafeName(group)}
	if first == 0 && last == 0 {
		last = high
		first = max(low, high-f.articles()+1)
	}
	var lines []string
	if count > 0 && high >= low && first <= last {
		r := fmt.Sprintf("%d-%d", first, last)
		cmd := "OVER " + r
		if !c.hasOver() {
			cmd = "XOVER " + r
		}
		code, text, err := c.do(ctx, cmd)
		if err == nil && (code == 500 || code == 501) && strings.HasPrefix(cmd, "OVER") {
			cmd = "XOVER " + r
			code, text, err = c.do(ctx, cmd)
		}
		if err != nil {
			return nil, err
		}
		switch code {
		case 224:
			if lines, err = c.readLines(maxListing); err != nil {
				return nil, err
			}
		case 423, 420:
			// no articles in the range
		default:
			return nil, &ReplyError{Cmd: cmd, Code: code, Text: text, kind: replyKind(code)}
		}
	}
	base := ""
	if u.Scheme == "nntp" || u.Scheme == "nntps" {
		base = u.Scheme + "://" + u.Site() + "/" + url.EscapeSegment(group) + "/"
	}
	resp.Entries = ParseOverview(lines, base)
	f.put(c)
	resp.Body = rawListing(lines)
	return resp, nil
}

func rawListing(lines []string) io.ReadCloser {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return io.NopCloser(strings.NewReader(b.String()))
}

// ParseOverview turns overview lines (RFC 3977 §8.3: number, subject,
// from, date, message-id, references, bytes, lines, then extra fields)
// into entries. Articles get news: URLs by message-id, or base plus the
// number when base is set (an nntp: group URL). A line that does not
// parse is kept with its text as the name.
func ParseOverview(lines []string, base string) []protocols.Entry {
	entries := make([]protocols.Entry, 0, len(lines))
	for _, l := range lines {
		f := strings.Split(l, "\t")
		n, err := strconv.ParseInt(f[0], 10, 64)
		if len(f) < 8 || err != nil {
			entries = append(entries, protocols.Entry{Kind: protocols.KindInfo, Name: l, Size: -1})
			continue
		}
		e := protocols.Entry{Kind: protocols.KindFile, Number: n, Name: f[1], Author: f[2], Size: -1}
		if t, err := mail.ParseDate(f[3]); err == nil {
			e.ModTime = t.UTC()
		}
		e.MessageID = f[4]
		if b, err := strconv.ParseInt(f[6], 10, 64); err == nil {
			e.Size = b
		}
		if lc, err := strconv.ParseInt(f[7], 10, 64); err == nil {
			e.Lines = lc
		}
		id := strings.TrimSuffix(strings.TrimPrefix(f[4], "<"), ">")
		switch {
		case base != "":
			e.URL = base + f[0]
		case id != "":
			e.URL = newsURL(id)
		}
		entries = append(entries, e)
	}
	return entries
}

// groups lists the groups matching wildmat ("" for all) with LIST ACTIVE,
// and their descriptions with LIST NEWSGROUPS when asked.
func (f *Fetcher) groups(ctx context.Context, c *conn, u *url.URL, wildmat string) (*protocols.Response, error) {
	cmd := "LIST ACTIVE"
	if wildmat != "" {
		cmd += " " + wildmat
	}
	code, text, err := c.do(ctx, cmd)
	if err != nil {
		return nil, err
	}
	if code != 215 {
		return nil, &ReplyError{Cmd: cmd, Code: code, Text: text, kind: replyKind(code)}
	}
	lines, err := c.readLines(maxListing)
	if err != nil {
		return nil, err
	}
	var desc map[string]string
	if f.Descriptions {
		cmd := "LIST NEWSGROUPS"
		if wildmat != "" {
			cmd += " " + wildmat
		}
		code, _, err := c.do(ctx, cmd)
		if err != nil {
			return nil, err
		}
		if code == 215 {
			dl, err := c.readLines(maxListing)
			if err != nil {
				return nil, err
			}
			desc = ParseDescriptions(dl)
		}
	}
	f.put(c)
	prefix := "news:"
	if u.Scheme == "snews" {
		prefix = "snews:"
	}
	if u.Host != "" {
		prefix = u.Scheme + "://" + u.Site() + "/"
	}
	resp := &protocols.Response{Kind: protocols.KindDirectory, Size: -1, MediaType: "text/plain", Name: "groups"}
	resp.Entries = ParseActive(lines, prefix, desc)
	resp.Body = rawListing(lines)
	return resp, nil
}

// ParseActive turns LIST ACTIVE lines ("group high low status") into
// entries of kind articles, with URLs prefix+group and the descriptions
// given. Lines that do not parse are kept as text.
func ParseActive(lines []string, prefix string, desc map[string]string) []protocols.Entry {
	entries := make([]protocols.Entry, 0, len(lines))
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) < 4 {
			entries = append(entries, protocols.Entry{Kind: protocols.KindInfo, Name: l, Size: -1})
			continue
		}
		high, err1 := strconv.ParseInt(f[1], 10, 64)
		low, err2 := strconv.ParseInt(f[2], 10, 64)
		e := protocols.Entry{Kind: protocols.KindArticleList, Name: f[0], Size: -1, Type: f[3], URL: prefix + f[0], Description: desc[f[0]]}
		if err1 == nil && err2 == nil && high >= low {
			e.Number = high - low + 1 // an estimate of the articles, as LIST ACTIVE allows
		}
		entries = append(entries, e)
	}
	return entries
}

// ParseDescriptions reads LIST NEWSGROUPS lines: a group, white space,
// its description.
func ParseDescriptions(lines []string) map[string]string {
	m := make(map[string]string, len(lines))
	for _, l := range lines {
		i := strings.IndexAny(l, " \t")
		if i <= 0 {
			continue
		}
		m[l[:i]] = strings.TrimSpace(l[i:])
	}
	return m
}

// The contracts it claims, checked when it compiles.
var _ protocols.Fetcher = (*Fetcher)(nil)

// Refer is the URL of the article a message-id in an article's header
// names (protocols.Referrer): news:ID, which the configured news server
// answers, whatever server u's article came from.
func (f *Fetcher) Refer(_ *url.URL, id string) (*url.URL, bool) {
	if id == "" || !strings.Contains(id, "@") {
		return nil, false
	}
	u, err := url.Parse("news:" + url.EscapeSegment(id))
	return u, err == nil
}
