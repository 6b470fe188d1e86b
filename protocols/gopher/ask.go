package gopher

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// Question is one line of a Gopher+ +ASK form.
type Question struct {
	Kind    string   // "Ask", "AskP" (a password), "AskL" (long text), "Choose", "Select", "Note", ...
	Prompt  string   // the question
	Choices []string // for Choose and Select; for Ask, the default answer if any
}

// NeedsAnswer reports whether the question takes an answer (a Note does
// not).
func (q Question) NeedsAnswer() bool { return q.Kind != "Note" }

// ParseAsk reads the questions of a +ASK block.
func ParseAsk(attrs []protocols.Attribute) []Question {
	var qs []Question
	for _, a := range attrs {
		if a.Name != "ASK" {
			continue
		}
		for _, l := range a.Lines {
			kind, rest, ok := strings.Cut(l, ":")
			if !ok {
				continue
			}
			parts := strings.Split(strings.TrimSpace(rest), "\t")
			qs = append(qs, Question{Kind: strings.TrimSpace(kind), Prompt: parts[0], Choices: parts[1:]})
		}
	}
	return qs
}

// fillForm fetches the item's +ASK form, has Ask answer it, and returns
// the request of the filled form (RFC 1738 §3.4.9).
func (f *Fetcher) fillForm(ctx context.Context, req *protocols.Request, g *url.GopherPath) (*url.GopherPath, error) {
	ask := *g
	ask.Plus = "!+ASK"
	resp, err := f.fetch(ctx, req, &ask)
	if err != nil {
		return nil, fmt.Errorf("fetching the item's form: %w", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	qs := ParseAsk(resp.Attributes)
	if len(qs) == 0 {
		return nil, fmt.Errorf("%w: the item has no +ASK form", protocols.ErrProtocol)
	}
	if f.Ask == nil || req.Anonymous {
		return nil, fmt.Errorf("%w: the item is a form of %d questions, and nothing is set to answer them", protocols.ErrNotRetrievable, len(qs))
	}
	answers, err := f.Ask(ctx, qs)
	if err != nil {
		return nil, err
	}
	return FilledForm(g, qs, answers)
}

// FilledForm is the item g with its +ASK form filled in, as RFC 1738
// §3.4.9 sends it: the Gopher+ string "+<TAB>1" and a data block of the
// answers, one line each, to the questions that take one, in order (an
// answer missing is empty). An answer with CR, LF or NUL is an error.
func FilledForm(g *url.GopherPath, qs []Question, answers []string) (*url.GopherPath, error) {
	var b strings.Builder
	b.WriteString("+\t1\r\n+-1\r\n")
	i := 0
	for _, q := range qs {
		if !q.NeedsAnswer() {
			continue
		}
		a := ""
		if i < len(answers) {
			a = answers[i]
		}
		i++
		if strings.ContainsAny(a, "\r\n\x00") {
			return nil, fmt.Errorf("%w: an answer holds CR, LF or NUL", protocols.ErrBadURL)
		}
		b.WriteString(a + "\r\n")
	}
	b.WriteString(".\r\n")
	filled := *g
	filled.Search, filled.Plus, filled.FilledForm = "", b.String(), true
	return &filled, nil
}
