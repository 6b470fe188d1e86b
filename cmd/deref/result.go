package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
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
}

// watch returns the trace and redirect hooks of one attempt at res's URL
// that note what -w reports; nil, nil without -w, so that the retrieval
// keeps its untraced path.
func (res *result) watch(o *options) (func(fetch.TraceEvent), func(from, to *url.URL)) {
	if o.writeOut == "" {
		return nil, nil
	}
	trace := func(ev fetch.TraceEvent) {
		if ev.Dir == protocols.TraceRecv {
			if code := replyCode(ev.Text); code > 0 {
				res.code = code
			}
		}
	}
	redirect := func(_, to *url.URL) {
		res.redirects++
		res.effective = to.Redacted()
	}
	return trace, redirect
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
	return map[string]any{
		"url":                u,
		"url_effective":      effective,
		"num_redirects":      res.redirects,
		"http_code":          code3(res.code),
		"response_code":      code3(res.code),
		"exitcode":           fetch.ExitCode(err),
		"size_download":      res.bytes,
		"speed_download":     speed,
		"time_total":         total,
		"time_starttransfer": res.firstByte.Seconds(),
		"content_type":       res.contentType,
		"filename_effective": res.filename,
		"errormsg":           errmsg,
		"num_retries":        res.attempt,
	}
}

// writeOutResult prints --write-out FORMAT for one URL: %{name} is a
// variable, %% a percent sign, \n, \t and \r what they say; "json" prints
// every variable as one JSON object on a line.
func writeOutResult(w io.Writer, format string, res *result, err error, o *options) {
	vars := writeOutVars(res, err, o)
	if format == "json" {
		b, _ := json.Marshal(vars)
		w.Write(append(b, '\n'))
		return
	}
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		switch {
		case c == '%' && strings.HasPrefix(format[i:], "%{"):
			end := strings.IndexByte(format[i:], '}')
			if end < 0 {
				b.WriteString(format[i:])
				i = len(format)
				continue
			}
			name := format[i+2 : i+end]
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
	io.WriteString(w, b.String())
}
