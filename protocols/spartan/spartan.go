// Package spartan dereferences spartan: URLs (the Spartan protocol):
// the request line "host path length" and the URL's data (its query,
// decoded) sent, a one-digit status and its META read, the body
// streamed. A gemtext page is a listing, its "=:" prompt lines entries
// that ask for input.
package spartan

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/protocols/gemini"
	"github.com/urlderef/deref/url"
)

// Fetcher dereferences spartan: URLs. The zero value is ready to use.
type Fetcher struct {
	// ReplyTimeout bounds the wait for the header; 0 means one minute.
	ReplyTimeout time.Duration
}

// Schemes describes spartan: for the engine.
func Schemes(f *Fetcher) []protocols.Scheme {
	return []protocols.Scheme{{Name: "spartan", Fetcher: f, Ports: []int{300}, Redirect: true, Tree: protocols.TreeIndexPage}}
}

// Request is u's request: the line and the data after it.
func Request(u *url.URL) (string, []byte, error) {
	if u.User != nil {
		return "", nil, fmt.Errorf("%w: spartan URLs carry no user name or password", protocols.ErrBadURL)
	}
	p := u.Path
	if p == "" {
		p = "/"
	}
	if strings.ContainsAny(p, " \r\n") {
		return "", nil, fmt.Errorf("%w: a space or line end in the spartan path", protocols.ErrBadURL)
	}
	var data []byte
	if u.HasQuery {
		d, err := url.Unescape(u.Query)
		if err != nil {
			return "", nil, fmt.Errorf("%w: spartan data: %w", protocols.ErrBadURL, err)
		}
		data = []byte(d)
	}
	return u.Hostname() + " " + p + " " + strconv.Itoa(len(data)) + "\r\n", data, nil
}

// Fetch sends the request and reads the answer.
func (f *Fetcher) Fetch(ctx context.Context, req *protocols.Request) (*protocols.Response, error) {
	line, data, err := Request(req.URL)
	if err != nil {
		return nil, err
	}
	conn, err := protocols.Send(ctx, req, strings.TrimSuffix(line, "\r\n"), data)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	fail := func(err error) (*protocols.Response, error) {
		stop()
		conn.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	timeout := f.ReplyTimeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	conn.SetReadDeadline(time.Now().Add(timeout))
	br := bufio.NewReaderSize(conn, 4096)
	h, head, err := protocols.HeaderLine(br, "spartan")
	if err != nil {
		return fail(err)
	}
	req.Tracef(protocols.TraceRecv, h)
	conn.SetReadDeadline(time.Time{})
	if len(h) < 1 || h[0] < '2' || h[0] > '5' || len(h) > 1 && h[1] != ' ' {
		return fail(fmt.Errorf("%w: spartan: a header that is not STATUS META: %q", protocols.ErrProtocol, first(h, 80)))
	}
	meta := ""
	if len(h) > 2 {
		meta = h[2:]
	}
	u := req.URL
	switch h[0] {
	case '2':
		mt, _, err := mime.ParseMediaType(meta)
		if err != nil {
			mt = "application/octet-stream"
		}
		if req.Exchange != nil { // recorded as Gemini's exchanges are
			ip, _, _ := net.SplitHostPort(conn.RemoteAddr().String())
			*req.Exchange = protocols.Exchange{Request: append([]byte(line), data...), Response: []byte(string(head)), IP: ip,
				Type: "application/spartan", Status: "2", PayloadType: mt, Protocol: []string{"spartan"}}
		}
		b := &protocols.ConnBody{Conn: conn, R: br, Stop: stop}
		resp := &protocols.Response{Kind: protocols.KindFile, Size: -1, MediaType: mt, Status: h, Name: SuggestedName(u), Body: b}
		if mt == "text/gemini" && !req.HeadOnly {
			page, err := io.ReadAll(io.LimitReader(b, req.ListingLimit()+1))
			b.Close()
			if err != nil {
				return nil, err
			}
			if int64(len(page)) > req.ListingLimit() {
				return nil, fmt.Errorf("%w: spartan: a page over %d bytes", protocols.ErrTooLarge, req.ListingLimit())
			}
			resp.Kind, resp.Size, resp.Entries, resp.Body = protocols.KindDirectory, int64(len(page)), gemini.Links(u, string(page)), io.NopCloser(bytes.NewReader(page))
		}
		return resp, nil
	case '3':
		stop()
		conn.Close()
		loc, err := url.Parse("spartan://" + u.Site() + "/" + strings.TrimPrefix(strings.TrimSpace(meta), "/"))
		if err != nil {
			return nil, fmt.Errorf("%w: spartan: a redirect to %q: %v", protocols.ErrProtocol, meta, err)
		}
		return &protocols.Response{Kind: protocols.KindRedirect, Location: loc, Status: h, Size: -1, Body: io.NopCloser(strings.NewReader(""))}, nil
	case '4':
		return fail(fmt.Errorf("%w: spartan: %s", protocols.ErrNotFound, h))
	}
	return fail(fmt.Errorf("%w: spartan: %s", protocols.ErrTemporary, h))
}

func first(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// SuggestedName is the local file name of u: its path's last element.
func SuggestedName(u *url.URL) string { return protocols.PathName(u) }

// SuggestedName is the package function (protocols.Namer).
func (f *Fetcher) SuggestedName(u *url.URL) string { return SuggestedName(u) }

// Replay reads an archived gemtext page back into its links
// (protocols.Replayer).
func (f *Fetcher) Replay(u *url.URL, mt string, at time.Time, payload io.ReadCloser, max int64) (*protocols.Response, error) {
	return (&gemini.Fetcher{}).Replay(u, mt, at, payload, max)
}

// ReplayFrom says where else u's answer is archived: nowhere.
func (f *Fetcher) ReplayFrom(*url.URL) protocols.ReplaySource { return protocols.ReplaySource{} }
