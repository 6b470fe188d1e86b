// Package gopher dereferences gopher: and gophers: URLs (RFC 1738 §3.4,
// RFC 1436, and the Gopher+ extensions).
//
// The item type of the URL is for the client only and is never sent; the
// selector (and, with %09, the search and the Gopher+ string) go to the
// server as one request line. Text items, menus and search results are
// dot-terminated: the terminator is removed, dot-stuffing undone and CRLF
// turned into LF. Binary items are read until the server closes. A reply
// to a Gopher+ request starts with a header line: "+<n>" (exactly n bytes
// follow), "+-1" (dot-terminated), "+-2" (until close), or "--1"/"--2"
// followed by an error.
//
// Servers that end a text item by closing the connection instead of a "."
// line (pygopherd does) are accepted for plain Gopher; a Gopher+ "+-1" body
// without its terminator is an error.
package gopher

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// Fetcher retrieves Gopher items. The zero value is ready to use; set Ask
// to fill in Gopher+ forms.
type Fetcher struct {
	// Ask answers the questions of an item's +ASK form, one answer per
	// question (Note lines get none). nil means a URL with the Gopher+
	// string "?" fails with an error saying a form needs answers.
	Ask func(ctx context.Context, questions []Question) ([]string, error)
}

// textTypes are the item types whose replies are dot-terminated text.
func textType(t byte) bool {
	return t == '0' || t == '1' || t == '7' || t == 'h' || t == 'i' || t == '3'
}

func menuType(t byte) bool { return t == '1' || t == '7' }

var mediaTypes = map[byte]string{
	'0': "text/plain", '1': "text/plain", '7': "text/plain", 'h': "text/html",
	'4': "application/mac-binhex40", '5': "application/octet-stream", '6': "text/x-uuencode",
	'9': "application/octet-stream", 'g': "image/gif", 'I': "image/unknown", 's': "audio/unknown",
	'd': "application/octet-stream", 'p': "image/png", 'M': "message/rfc822", ';': "video/unknown",
}

// typeWords are the words for item types (RFC 1436 and the types in wide
// use since), as menus shown to a reader name them.
var typeWords = map[byte]string{'0': "text", '1': "menu", '2': "CSO", '3': "error", '4': "binhex", '5': "archive", '6': "uuencode",
	'7': "search", '8': "telnet", '9': "binary", '+': "mirror", 'g': "GIF", 'I': "image", 'T': "tn3270", 'h': "HTML",
	's': "sound", 'd': "document", 'p': "PDF", 'r': "RTF", ';': "video", 'c': "calendar", 'M': "mail", 'P': "PDF", 'x': "XML"}

// TypeWord is the word for item type t ("menu", "search", "binary"), or ""
// for a type without one.
func TypeWord(t byte) string { return typeWords[t] }

// RequestLine returns what is sent for the URL, without the final CRLF
// (a filled Gopher+ form carries its own line ends).
func RequestLine(g *url.GopherPath) string {
	switch {
	case g.HasPlus && g.Search == "":
		// RFC 1738 §3.4.9 and Gopher+: selector TAB plus-string; the empty
		// search field is not sent.
		return g.Selector + "\t" + g.Plus
	case g.HasPlus:
		return g.Selector + "\t" + g.Search + "\t" + g.Plus
	case g.HasSearch:
		return g.Selector + "\t" + g.Search
	}
	return g.Selector
}

// Fetch sends the request the URL describes and streams the reply.
func (f *Fetcher) Fetch(ctx context.Context, req *protocols.Request) (*protocols.Response, error) {
	g, err := req.URL.Gopher()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", protocols.ErrBadURL, err)
	}
	return f.fetch(ctx, req, g)
}

// modDate asks a Gopher+ server for the item's attributes ("!") and
// returns the time of its +ADMIN Mod-Date line.
func (f *Fetcher) modDate(ctx context.Context, req *protocols.Request) (time.Time, bool) {
	au, err := WithPlus(req.URL, "!")
	if err != nil {
		return time.Time{}, false
	}
	ag, err := au.Gopher()
	if err != nil {
		return time.Time{}, false
	}
	sub := *req
	sub.URL, sub.IfModifiedSince, sub.Offset = au, time.Time{}, 0
	resp, err := f.fetch(ctx, &sub, ag)
	if err != nil {
		return time.Time{}, false
	}
	resp.Body.Close()
	return ModDate(resp.Attributes)
}

func (f *Fetcher) fetch(ctx context.Context, req *protocols.Request, g *url.GopherPath) (*protocols.Response, error) {
	if g.HasPlus && g.Plus == "?" {
		filled, err := f.fillForm(ctx, req, g)
		if err != nil {
			return nil, err
		}
		g = filled
	}
	if since := req.IfModifiedSince; !since.IsZero() && !g.HasPlus && g.Type != '1' && g.Type != '7' {
		// Gopher+ servers give an item's time in its attributes: asked
		// first, it can spare the transfer.
		if t, ok := f.modDate(ctx, req); ok && !t.After(since) {
			return nil, fmt.Errorf("%w since %s (Gopher+ Mod-Date %s)", protocols.ErrNotModified, since.UTC().Format(time.RFC3339), t.UTC().Format(time.RFC3339))
		}
	}
	var plusTime time.Time
	if g.HasPlus && strings.HasPrefix(g.Plus, "+") && !menuType(g.Type) && req.IfModifiedSince.IsZero() && !req.Verbatim {
		// A Gopher+ item's data says its length ("+N") and nothing of its
		// time: its attributes' +ADMIN Mod-Date does, asked first, so that
		// a download has its Last-Modified (not for an archive's record,
		// which holds the one exchange).
		if t, ok := f.modDate(ctx, req); ok {
			plusTime = t
		}
	}
	if g.Type == '7' && !g.HasSearch && !g.HasPlus {
		return &protocols.Response{
			Kind: protocols.KindSearchIndex, Size: 0, Name: suggestedName(req.URL),
			Body: io.NopCloser(strings.NewReader("")), MediaType: "text/plain",
		}, nil
	}
	addr := req.URL.HostPort()
	req.Tracef(protocols.TraceInfo, "connecting to "+addr)
	conn, err := req.Dialer()(ctx, "tcp", addr)
	if err != nil {
		return nil, protocols.NetError(err)
	}
	if req.URL.Scheme == "gophers" {
		cfg := &tls.Config{}
		if req.TLS != nil {
			cfg = req.TLS.Clone()
		}
		if cfg.ServerName == "" {
			cfg.ServerName = req.URL.Hostname()
		}
		tc := tls.Client(conn, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return nil, protocols.NetError(err)
		}
		conn = tc
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	line := RequestLine(g)
	req.Tracef(protocols.TraceSend, strings.TrimRight(strings.ReplaceAll(line, "\t", "<TAB>"), "\r\n"))
	if !g.FilledForm {
		line += "\r\n"
	}
	if _, err := io.WriteString(conn, line); err != nil {
		stop()
		conn.Close()
		return nil, protocols.NetError(err)
	}
	br := bufio.NewReaderSize(conn, 64<<10)
	resp, err := f.reply(req, g, conn, br)
	if err != nil {
		stop()
		conn.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	if resp.Kind == protocols.KindFile && resp.ModTime.IsZero() {
		resp.ModTime = plusTime
	}
	if !stop() && resp.Body != nil {
		resp.Body.Close()
		return nil, ctx.Err()
	}
	return resp, nil
}

func (f *Fetcher) reply(req *protocols.Request, g *url.GopherPath, conn net.Conn, br *bufio.Reader) (*protocols.Response, error) {
	resp := &protocols.Response{Kind: protocols.KindFile, Size: -1, MediaType: mediaTypes[g.Type], Name: suggestedName(req.URL)}
	limit := req.LineLimit()
	var body io.Reader = br
	length := int64(-1) // of a Gopher+ "+n" body
	dotted := textType(g.Type)
	strict := false // a missing terminator is an error
	if g.HasPlus {
		head, err := readLine(br, limit)
		if err != nil {
			return nil, err
		}
		req.Tracef(protocols.TraceRecv, head)
		switch {
		case strings.HasPrefix(head, "--"):
			return nil, plusError(br, head, limit)
		case head == "+-1":
			dotted, strict = true, true
		case head == "+-2":
			dotted = false
		case strings.HasPrefix(head, "+"):
			n, err := strconv.ParseInt(head[1:], 10, 64)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("%w: Gopher+ reply header %q", protocols.ErrProtocol, head)
			}
			body, dotted, resp.Size, length = io.LimitReader(br, n), false, n, n
		default:
			return nil, fmt.Errorf("%w: a Gopher+ reply starts with %q, not +n, +-1, +-2 or --n", protocols.ErrProtocol, head)
		}
		if g.Plus[0] == '!' || g.Plus[0] == '$' {
			return f.attributes(req, resp, conn, body, dotted, strict, limit)
		}
	}
	var wire *wireTap // the bytes as they came, for an archive (Request.Verbatim)
	if dotted && req.Verbatim {
		wire = &wireTap{r: body, hold: true}
		body = wire
	}
	if dotted {
		body = &dotReader{r: bufio.NewReaderSize(body, 4096), limit: limit, strict: strict}
	}
	if menuType(g.Type) && (!g.HasPlus || g.Plus == "+" || strings.HasPrefix(g.Plus, "+\t")) {
		held := protocols.Hold(req.Memory)
		defer held.Release()
		raw, err := readAll(body, req.ListingLimit(), held)
		conn.Close()
		if err != nil {
			return nil, err
		}
		resp.Kind = protocols.KindDirectory
		resp.Entries = ParseMenu(string(raw))
		if msg, ok := errorMenu(resp.Entries, raw); ok {
			// A menu of nothing but an error (and info lines) is the
			// error: pygopherd and gophernicus answer a selector they do
			// not have so, as plain Gopher has no other way to say it.
			return nil, fmt.Errorf("%w: %s", protocols.ErrNotFound, msg)
		}
		if g.Type == '7' {
			resp.Kind = protocols.KindDirectory
		}
		resp.Body, resp.Size = io.NopCloser(bytes.NewReader(raw)), int64(len(raw))
		if wire != nil {
			resp.Body = &tappedMenu{Reader: bytes.NewReader(raw), wire: wire.held}
		}
		return resp, nil
	}
	if dotted && g.Type != 'h' {
		// A plain-Gopher error comes back as a type 3 menu line.
		pr := body.(*dotReader)
		if peek, err := pr.peekLine(); err == nil && strings.HasPrefix(peek, "3") && strings.Count(peek, "\t") >= 2 {
			msg, _, _ := strings.Cut(peek[1:], "\t")
			return nil, fmt.Errorf("%w: %s", protocols.ErrNotFound, msg)
		}
	}
	if dotted && wire != nil {
		resp.Body = &tappedText{closer: closer{Reader: body, c: conn}, wire: wire}
	} else if dotted {
		resp.Body = &closer{Reader: body, c: conn}
	} else {
		resp.Body = &rawBody{br: br, conn: conn, left: length}
	}
	return resp, nil
}

// errorMenu reports whether a menu holds an error line (type 3) and no
// item but info lines, or is no menu at all but a text that begins with
// "Error" (gophernicus' "Error: File or directory not found!", with no
// TAB in any line), and gives the error's text.
func errorMenu(entries []protocols.Entry, raw []byte) (string, bool) {
	if first, _, _ := bytes.Cut(raw, []byte("\n")); !bytes.Contains(raw, []byte("\t")) && len(first) > 5 && strings.EqualFold(string(first[:5]), "error") {
		return strings.TrimSpace(string(first)), true
	}
	msg := ""
	for _, e := range entries {
		switch {
		case strings.HasPrefix(e.Type, "3"):
			if msg == "" {
				msg = strings.TrimSpace(e.Name)
			}
		case strings.HasPrefix(e.Type, "i"):
		default:
			return "", false
		}
	}
	if msg == "" && len(entries) > 0 && strings.HasPrefix(entries[0].Type, "3") {
		msg = "the server answered with an error"
	}
	return msg, msg != ""
}

// plusError reads a Gopher+ error: "--1" or "--2", then "<code> <admin>"
// and the message.
func plusError(br *bufio.Reader, head string, limit int) error {
	codeLine, err := readLine(br, limit)
	if err != nil {
		return fmt.Errorf("%w: Gopher+ error %s without a code", protocols.ErrProtocol, head)
	}
	var msg []string
	for i := 0; i < 20; i++ {
		l, err := readLine(br, limit)
		if err != nil || l == "." {
			break
		}
		msg = append(msg, l)
	}
	text := strings.Join(msg, " ")
	code, admin, _ := strings.Cut(codeLine, " ")
	kind := protocols.ErrProtocol
	switch code {
	case "1":
		kind = protocols.ErrNotFound
	case "2":
		kind = protocols.ErrTemporary
	case "3":
		return fmt.Errorf("%w: the item has moved: %s (%s)", protocols.ErrNotFound, text, admin)
	}
	return fmt.Errorf("%w: %s (%s)", kind, text, admin)
}

func (f *Fetcher) attributes(req *protocols.Request, resp *protocols.Response, conn net.Conn, body io.Reader, dotted, strict bool, limit int) (*protocols.Response, error) {
	if dotted {
		body = &dotReader{r: bufio.NewReaderSize(body, 4096), limit: limit, strict: strict}
	}
	held := protocols.Hold(req.Memory)
	defer held.Release()
	raw, err := readAll(body, req.ListingLimit(), held)
	conn.Close()
	if err != nil {
		return nil, err
	}
	resp.MediaType = "text/plain"
	resp.Body, resp.Size = io.NopCloser(bytes.NewReader(raw)), int64(len(raw))
	items := ParseAttributes(string(raw))
	resp.Attributes = items
	return resp, nil
}

type closer struct {
	io.Reader
	c net.Conn
}

func (c *closer) Close() error { return c.c.Close() }

func readAll(r io.Reader, max int64, held *protocols.Held) ([]byte, error) {
	b := &protocols.ListingBuffer{Max: max, Held: held}
	if _, err := b.ReadFrom(r); err != nil {
		if errors.Is(err, protocols.ErrTooLarge) && !errors.Is(err, protocols.ErrTemporary) {
			return nil, fmt.Errorf("%w: reply larger than %d bytes", protocols.ErrTooLarge, max)
		}
		return nil, err
	}
	return b.Bytes(), nil
}

// readLine reads one line without its CRLF or LF, bounded by limit.
func readLine(br *bufio.Reader, limit int) (string, error) {
	var b []byte
	for {
		chunk, err := br.ReadSlice('\n')
		b = append(b, chunk...)
		if len(b) > limit {
			return "", fmt.Errorf("%w: a line longer than %d bytes", protocols.ErrProtocol, limit)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			if len(b) > 0 && err == io.EOF {
				break
			}
			return "", mapEOF(err)
		}
		break
	}
	s := strings.TrimSuffix(string(b), "\n")
	return strings.TrimSuffix(s, "\r"), nil
}

func mapEOF(err error) error {
	if err == io.EOF {
		return fmt.Errorf("%w: the server closed the connection without a reply", protocols.ErrShortBody)
	}
	return protocols.NetError(err)
}

// The contracts it claims, checked when it compiles.
var _ protocols.Fetcher = (*Fetcher)(nil)
