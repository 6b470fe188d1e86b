package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/mirror"
	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// result is what deref learned of one URL, for --write-out.
type result struct {
	url         string
	start       time.Time
	attempt     int   // attempts before the current one
	bytes       int64 // body bytes received by the last attempt
	written     int64 // bytes written to standard output, over all attempts (with --retry)
	contentType string
	filename    string
	etag        string // the ETag of the response written, for --etag-save
	etagSeen    bool   // a response came whole, with or without an ETag

	// For -r -N: where its bytes start and how many there are, once the
	// object's size is known.
	from, fromLen int64
	fromKnown     bool

	// For -w's curl variables: the last reply code the servers sent
	// (an HTTP status, an FTP reply), the URL the last redirect led to and
	// how many were followed, and when the object began to arrive.
	code      int
	effective string
	redirects int
	firstByte time.Duration

	// For curl's connection and timing variables, from the trace: the
	// place of the URL among the command's, the addresses of the last
	// connection, the connections made, when the name was looked up (the
	// first connection began), the connection was made, TLS was agreed
	// on, the request was sent and the last redirect came; the bytes of
	// the HTTP heads sent and received, and the last response's head.
	mu                                    sync.Mutex // segments trace at once
	n                                     int
	remote, local                         string
	connects                              int
	lookup, connect, tls, pretransfer, rd time.Duration
	sizeHeader, sizeRequest               int64
	inRequest                             bool
	httpVersion                           string
	head                                  [][2]string // the last HTTP response's fields
}

// noteTrace notes what -w reports of one trace line.
func (res *result) noteTrace(ev fetch.TraceEvent) {
	res.mu.Lock()
	defer res.mu.Unlock()
	at := time.Since(res.start)
	switch ev.Dir {
	case protocols.TraceRecv:
		if code := replyCode(ev.Text); code > 0 {
			res.code = code
		}
		if v, ok := strings.CutPrefix(ev.Text, "HTTP/"); ok && replyCode(ev.Text) > 0 {
			res.httpVersion, _, _ = strings.Cut(v, " ")
			res.head = res.head[:0]
			res.sizeHeader += int64(len(ev.Text)) + 4 // its CRLF, and the blank line that ends the head
		} else if name, value, ok := strings.Cut(ev.Text, ":"); ok && res.httpVersion != "" && !strings.ContainsAny(name, " \t") {
			res.head = append(res.head, [2]string{name, strings.TrimSpace(value)})
			res.sizeHeader += int64(len(ev.Text)) + 2
		}
	case protocols.TraceSend:
		if res.firstByte == 0 {
			res.pretransfer = at
		}
		if strings.HasSuffix(ev.Text, " HTTP/1.1") {
			res.inRequest = true
			res.sizeRequest += 2 // the blank line that ends the head
		}
		if res.inRequest {
			res.sizeRequest += int64(len(ev.Text)) + 2
		}
	case protocols.TraceInfo:
		switch {
		case strings.HasPrefix(ev.Text, "connecting to "):
			if res.lookup == 0 {
				res.lookup = at
			}
		case strings.HasPrefix(ev.Text, "connected to "):
			res.connects++
			res.connect, res.remote = at, strings.TrimPrefix(ev.Text, "connected to ")
		case strings.HasPrefix(ev.Text, "local address "):
			res.local = strings.TrimPrefix(ev.Text, "local address ")
		case strings.HasPrefix(ev.Text, "reusing the connection to "):
			res.remote = strings.TrimPrefix(ev.Text, "reusing the connection to ")
		case strings.HasPrefix(ev.Text, "TLS "):
			res.tls = at
		}
	}
}

// headerValue is the value of the last response's field name (its
// values joined by ", " where it repeats), as curl's %header{name}.
func (res *result) headerValue(name string) string {
	var vs []string
	for _, f := range res.head {
		if strings.EqualFold(f[0], name) {
			vs = append(vs, f[1])
		}
	}
	return strings.Join(vs, ", ")
}

// headerJSON is the last response's head as curl's %{header_json}
// writes it: an object of lower-case names, each with its values.
func (res *result) headerJSON() string {
	var names []string
	values := map[string][]string{}
	for _, f := range res.head {
		k := strings.ToLower(f[0])
		if _, ok := values[k]; !ok {
			names = append(names, k)
		}
		values[k] = append(values[k], f[1])
	}
	var parts []string
	for _, k := range names {
		kb, _ := json.Marshal(k)
		vb, _ := json.Marshal(values[k])
		parts = append(parts, string(kb)+":"+string(vb))
	}
	return "{" + strings.Join(parts, ",\n") + "\n}"
}

// hostPort splits an address for -w: its host (an IPv6 literal without
// brackets) and port, "" and 0 when there is none.
func hostPort(addr string) (string, int) {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0
	}
	n, _ := strconv.Atoi(p)
	return h, n
}

// watch returns the trace and redirect hooks of one attempt at res's URL
// that note what -w reports; nil, nil without -w, so that the retrieval
// keeps its untraced path.
func (res *result) watch(o *options) (func(fetch.TraceEvent), func(from, to *url.URL)) {
	if o.writeOut == "" {
		return nil, nil
	}
	redirect := func(_, to *url.URL) {
		res.mu.Lock()
		defer res.mu.Unlock()
		res.redirects++
		res.effective = to.Redacted()
		res.rd = time.Since(res.start)
	}
	return res.noteTrace, redirect
}

// started notes when the object began to arrive, unless noted already.
func (res *result) started() {
	if res.firstByte == 0 {
		res.firstByte = time.Since(res.start)
	}
}

// replyCode is the code of a server's reply line: an HTTP status line's
// ("HTTP/1.1 404 Not Found"), or the three digits that begin an FTP,
// NNTP or SMTP reply ("226 Transfer complete", "211-Features:"); 0 for
// any other line (a header field, a continuation).
func replyCode(line string) int {
	if rest, ok := strings.CutPrefix(line, "HTTP/"); ok {
		_, after, _ := strings.Cut(rest, " ")
		line = after + " "
	}
	if len(line) < 4 || line[3] != ' ' && line[3] != '-' {
		return 0
	}
	n, err := strconv.Atoi(line[:3])
	if err != nil || n < 100 {
		return 0
	}
	return n
}

// code3 is a reply code as curl's -w prints it: three digits, 000 for
// none.
type code3 int

func (c code3) String() string { return fmt.Sprintf("%03d", int(c)) }

// transferHook returns the Progress function of one transfer: it notes the
// bytes received (for -w), moves the transfer's bar (--parallel) and, with
// --limit-rate, holds the transfer back to the rate. It is nil when none of
// these is asked for.
func transferHook(ctx context.Context, o *options, res *result) func(fetch.Progress) {
	if o.writeOut == "" && o.limitRate <= 0 && o.bars == nil {
		return nil // nothing to note: the transfer keeps its fastest path
	}
	rate := o.limitRate
	started := false
	return func(p fetch.Progress) {
		res.bytes = p.Bytes
		if p.Bytes > 0 {
			res.started()
		}
		if o.bars != nil {
			if !started {
				started = true
				o.bars.event(mirror.Event{Type: mirror.EventStart, Path: res.url, Size: p.Total})
			}
			o.bars.event(mirror.Event{Type: mirror.EventProgress, Path: res.url, Bytes: p.Bytes})
		}
		if rate <= 0 || p.Done {
			return
		}
		due := p.Start.Add(time.Duration(float64(p.Bytes) / float64(rate) * float64(time.Second)))
		if d := time.Until(due); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
			}
		}
	}
}

// countingWriter counts what it passes on.
type countingWriter struct {
	w io.Writer
	n *int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	*c.n += int64(n)
	return n, err
}

// writeOutVars are the --write-out variables, as curl names them.
func writeOutVars(res *result, err error, o *options) map[string]any {
	errmsg := ""
	if err != nil {
		errmsg = errorLine(err, res.url, o)
	}
	u := url.RedactString(res.url)
	if pu, perr := parseArg(res.url); perr == nil {
		u = pu.Redacted()
	}
	effective := res.effective
	if effective == "" {
		effective = u
	}
	total := time.Since(res.start).Seconds()
	speed := 0.0
	if total > 0 {
		speed = float64(res.bytes) / total
	}
	scheme, redirectURL := "", ""
	if eu, perr := url.Parse(effective); perr == nil {
		scheme = strings.ToUpper(eu.Scheme) // as curl 7.88 writes it
		if loc := res.headerValue("Location"); loc != "" && res.code >= 300 && res.code < 400 {
			if ref, rerr := url.ParseReference(url.Canonicalize(loc)); rerr == nil {
				redirectURL = eu.ResolveReference(ref).Redacted() // a redirect not followed
			}
		}
	}
	method := "GET"
	if o.head {
		method = "HEAD"
	}
	version := res.httpVersion
	if version == "" {
		version = "0"
	}
	remoteIP, remotePort := hostPort(res.remote)
	localIP, localPort := hostPort(res.local)
	return map[string]any{
		"url":                u,
		"url_effective":      effective,
		"urlnum":             res.n,
		"num_redirects":      res.redirects,
		"redirect_url":       redirectURL,
		"http_code":          code3(res.code),
		"response_code":      code3(res.code),
		"http_version":       version,
		"method":             method,
		"scheme":             scheme,
		"exitcode":           fetch.ExitCode(err),
		"size_download":      res.bytes,
		"size_header":        res.sizeHeader,
		"size_request":       res.sizeRequest,
		"num_headers":        len(res.head),
		"num_connects":       res.connects,
		"remote_ip":          remoteIP,
		"remote_port":        remotePort,
		"local_ip":           localIP,
		"local_port":         localPort,
		"ssl_verify_result":  0, // deref goes on with verified certificates only
		"speed_download":     speed,
		"time_total":         total,
		"time_namelookup":    res.lookup.Seconds(),
		"time_connect":       res.connect.Seconds(),
		"time_appconnect":    res.tls.Seconds(),
		"time_pretransfer":   res.pretransfer.Seconds(),
		"time_redirect":      res.rd.Seconds(),
		"time_starttransfer": res.firstByte.Seconds(),
		"content_type":       res.contentType,
		"filename_effective": res.filename,
		"errormsg":           errmsg,
		"num_retries":        res.attempt,
	}
}

// writeOutResult prints --write-out FORMAT for one URL: %{name} is a
// variable, %header{name} a field of the last response's head, %% a
// percent sign, \n, \t and \r what they say; %{json} and %{header_json}
// are every variable and the head as JSON objects, %{stderr} and
// %{stdout} send what follows there, and after %{onerror} the rest is
// printed only when the retrieval failed, as curl has them. A FORMAT of
// "json" alone prints the variables as one JSON object on a line.
func writeOutResult(w, stderr io.Writer, format string, res *result, err error, o *options) {
	vars := writeOutVars(res, err, o)
	if format == "json" {
		b, _ := json.Marshal(vars)
		w.Write(append(b, '\n'))
		return
	}
	out := w
	var b strings.Builder
	flush := func() {
		io.WriteString(w, b.String())
		b.Reset()
	}
	defer flush()
	for i := 0; i < len(format); i++ {
		c := format[i]
		switch {
		case strings.HasPrefix(format[i:], "%header{"):
			end := strings.IndexByte(format[i:], '}')
			if end < 0 {
				b.WriteString(format[i:])
				i = len(format)
				continue
			}
			b.WriteString(res.headerValue(format[i+len("%header{") : i+end]))
			i += end
		case c == '%' && strings.HasPrefix(format[i:], "%{"):
			end := strings.IndexByte(format[i:], '}')
			if end < 0 {
				b.WriteString(format[i:])
				i = len(format)
				continue
			}
			name := format[i+2 : i+end]
			switch name {
			case "json":
				j, _ := json.Marshal(vars)
				b.Write(j)
				i += end
				continue
			case "header_json":
				b.WriteString(res.headerJSON())
				i += end
				continue
			case "stderr", "stdout":
				flush()
				w = out
				if name == "stderr" {
					w = stderr
				}
				i += end
				continue
			case "onerror":
				if err == nil {
					return
				}
				i += end
				continue
			}
			if v, ok := vars[name]; ok {
				switch v := v.(type) {
				case float64:
					b.WriteString(strconv.FormatFloat(v, 'f', 6, 64))
				default:
					fmt.Fprint(&b, v)
				}
			} else {
				b.WriteString(format[i : i+end+1])
			}
			i += end
		case c == '%' && i+1 < len(format) && format[i+1] == '%':
			b.WriteByte('%')
			i++
		case c == '\\' && i+1 < len(format):
			switch format[i+1] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '\\':
				b.WriteByte('\\')
			default:
				b.WriteByte(c)
				continue
			}
			i++
		default:
			b.WriteByte(c)
		}
	}
}
