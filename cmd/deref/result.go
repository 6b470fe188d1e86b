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
}

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
	return map[string]any{
		"url":                u,
		"exitcode":           fetch.ExitCode(err),
		"size_download":      res.bytes,
		"time_total":         time.Since(res.start).Seconds(),
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
