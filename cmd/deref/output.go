// What deref prints of a response: metadata (-I) and listings.

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	nethttp "net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// printHead is what -I prints, as curl -I does: the HTTP heads as they
// came (each redirect's too, as curl -IL, each ending in a blank line),
// and for the other schemes curl's header lines (Content-Length,
// Accept-ranges where the protocol can resume, Last-Modified, in curl's
// order for FTP and file:) and Content-Type where known, with no blank
// line after them, as curl has it; a folder or group has no length.
// Header lines only: a Gopher+ item's attributes are -I --json's
// (deref's own fields).
func printHead(w io.Writer, c *fetch.Client, u *url.URL, r *fetch.Response, heads string) error {
	var b strings.Builder
	if heads != "" {
		b.WriteString(heads)
	} else {
		listing := isListing(r)
		modified := ""
		if !r.ModTime.IsZero() {
			modified = "Last-Modified: " + r.ModTime.UTC().Format(nethttp.TimeFormat) + "\r\n"
		}
		timeFirst := commandSchemes[u.Scheme].timeFirst
		if timeFirst {
			b.WriteString(modified)
		}
		if r.Size >= 0 && !listing {
			fmt.Fprintf(&b, "Content-Length: %d\r\n", r.Size)
		}
		if s, _ := c.Scheme(u.Scheme); s.Ranges && !listing {
			b.WriteString("Accept-ranges: bytes\r\n")
		}
		if !timeFirst {
			b.WriteString(modified)
		}
		if r.MediaType != "" && r.Charset != "" {
			fmt.Fprintf(&b, "Content-Type: %s; charset=%s\r\n", r.MediaType, oneLine(r.Charset))
		} else if r.MediaType != "" {
			fmt.Fprintf(&b, "Content-Type: %s\r\n", r.MediaType)
		}
	}
	_, err := io.WriteString(w, b.String())
	return fetch.WriteError(err)
}

// isListing says whether r is a folder, a group or a search: it has
// entries, not a length of its own.
func isListing(r *fetch.Response) bool {
	return r.Kind == protocols.KindDirectory || r.Kind == protocols.KindArticleList || r.Kind == protocols.KindSearchIndex
}

// httpHeads gathers the HTTP heads a transfer receives, from its trace,
// as curl -I prints them: each line ending in CRLF, each head in a blank
// line.
type httpHeads struct {
	mu sync.Mutex
	b  strings.Builder
	in bool
}

// tap returns a trace function that gathers the heads and passes every
// event on to next.
func (h *httpHeads) tap(next func(fetch.TraceEvent)) func(fetch.TraceEvent) {
	return func(ev fetch.TraceEvent) {
		if ev.Dir == protocols.TraceRecv {
			h.line(ev.Text)
		}
		if next != nil {
			next(ev)
		}
	}
}

func (h *httpHeads) line(text string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case strings.HasPrefix(text, "HTTP/") && replyCode(text) > 0:
		if h.in {
			h.b.WriteString("\r\n")
		}
		h.in = true
	case !h.in:
		return // no HTTP head: another protocol's reply
	}
	h.b.WriteString(oneLine(text) + "\r\n")
}

// String is the heads gathered, the last one ended; "" when none came.
func (h *httpHeads) String() string {
	if h == nil {
		return ""
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.in {
		return ""
	}
	return h.b.String() + "\r\n"
}

// jsonMeta is what -I --json prints: one object of the metadata.
type jsonMeta struct {
	URL        string          `json:"url"`
	Kind       string          `json:"kind"`
	Size       *int64          `json:"size,omitempty"`
	Type       string          `json:"type,omitempty"`
	Modified   string          `json:"modified,omitempty"`
	Name       string          `json:"name,omitempty"`
	Status     string          `json:"status,omitempty"`
	Entries    *int            `json:"entries,omitempty"`
	Note       string          `json:"note,omitempty"`
	Attributes []jsonAttribute `json:"attributes,omitempty"`
}

type jsonAttribute struct {
	Name  string   `json:"name"`
	Value string   `json:"value"`
	Lines []string `json:"lines,omitempty"`
}

func printMetaJSON(w io.Writer, u *url.URL, r *fetch.Response) error {
	m := jsonMeta{URL: u.Redacted(), Kind: r.Kind.String(), Type: r.MediaType, Name: r.Name, Status: r.Status, Note: r.Note}
	if r.Size >= 0 && !isListing(r) { // a listing's bytes are no size of the folder
		m.Size = &r.Size
	}
	if !r.ModTime.IsZero() {
		m.Modified = r.ModTime.UTC().Format(time.RFC3339)
	}
	if r.Entries != nil {
		n := len(r.Entries)
		m.Entries = &n
	}
	for _, a := range r.Attributes {
		m.Attributes = append(m.Attributes, jsonAttribute{Name: a.Name, Value: a.Value, Lines: a.Lines})
	}
	b, err := json.Marshal(m)
	if err == nil {
		_, err = w.Write(append(b, '\n'))
	}
	return fetch.WriteError(err)
}

type jsonEntry struct {
	Kind     string `json:"kind"`
	Size     *int64 `json:"size,omitempty"`
	Modified string `json:"modified,omitempty"`
	Name     string `json:"name"`
	URL      string `json:"url,omitempty"`
	Type     string `json:"type,omitempty"`
	Selector string `json:"selector,omitempty"`
	Host     string `json:"host,omitempty"`
	Port     int    `json:"port,omitempty"`
	Score    int64  `json:"score,omitempty"`
	Lines    int64  `json:"lines,omitempty"`
	Number   int64  `json:"number,omitempty"`
	Author   string `json:"author,omitempty"`
	ID       string `json:"message_id,omitempty"`
	Desc     string `json:"description,omitempty"`
	Target   string `json:"target,omitempty"`
}

// printEntries prints a listing's entries, their URLs without the
// password of the URL listed (kept, it would be printed; the user stays,
// and a URL of an entry fetched again finds the password in ~/.netrc or
// asks for it).
func printEntries(w io.Writer, entries []fetch.Entry, asJSON bool) error {
	cloned := false
	for i := range entries {
		if u := withoutPassword(entries[i].URL); u != entries[i].URL {
			if !cloned {
				entries, cloned = slices.Clone(entries), true
			}
			entries[i].URL = u
		}
	}
	bw := bufio.NewWriter(w)
	if !asJSON {
		if err := protocols.WriteListing(bw, entries); err != nil {
			return err
		}
		return bw.Flush()
	}
	enc := json.NewEncoder(bw)
	for _, e := range entries {
		j := jsonEntry{Kind: e.Kind.String(), Name: e.Name, URL: e.URL, Type: e.Type, Selector: e.Selector, Host: e.Host, Port: e.Port, Score: e.Score, Lines: e.Lines,
			Number: e.Number, Author: e.Author, ID: e.MessageID, Desc: e.Description, Target: e.Target}
		if e.Size >= 0 {
			j.Size = &e.Size
		}
		if !e.ModTime.IsZero() {
			j.Modified = e.ModTime.UTC().Format(time.RFC3339)
		}
		if err := enc.Encode(j); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// errMu keeps the lines that transfers running at once (--parallel,
// segments, the mirror) write to standard error whole, one at a time.
var errMu sync.Mutex

// withoutPassword is raw without its password, if it holds one.
func withoutPassword(raw string) string {
	if !strings.Contains(raw, "@") {
		return raw // no user: the common case of a long listing, unparsed
	}
	u, err := url.Parse(raw)
	if err != nil {
		return url.RedactString(raw)
	}
	if u.User == nil {
		return raw
	}
	if _, ok := u.User.Password(); !ok {
		return raw
	}
	return u.WithoutPassword()
}
