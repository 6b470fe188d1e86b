package prospero

import (
	"errors"
	"strings"
)

// needsQuote reports whether the server's writer quotes c (its
// vqsprintf: space, HT, FF, VT, LF, CR and / ' + ,).
func needsQuote(c byte) bool {
	switch c {
	case ' ', '\t', '\f', '\v', '\n', '\r', '/', '\'', '+', ',':
		return true
	}
	return false
}

// QuoteAsServer writes s as the server's writer does: as it is up to the
// first octet that needs quoting, a quote opened there and kept open to
// the end, each ' inside doubled; the empty string is ”.
func QuoteAsServer(s string) string {
	if s == "" {
		return "''"
	}
	i := 0
	for i < len(s) && !needsQuote(s[i]) {
		i++
	}
	if i == len(s) {
		return s
	}
	return s[:i] + "'" + strings.ReplaceAll(s[i:], "'", "''") + "'"
}

// Quote writes s as one request token, quoted whole: never split into
// two tokens or two lines, whatever it holds. Command keywords are sent
// as they are, never through Quote.
func Quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// ErrOpenQuote is a message that ends inside a quote.
var ErrOpenQuote = errors.New("a quote left open")

// Tokens splits one line into tokens by the protocol's rules: tokens are
// separated by unquoted runs of spaces and tabs; a ' opens quoted text
// anywhere in a token, in which ” is one quote and every other octet is
// itself, until the next lone '. ” alone is the empty token.
func Tokens(line string) ([]string, error) {
	var out []string
	var b strings.Builder
	in, quoted := false, false // in a token; in quoted text
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quoted && c == '\'':
			if i+1 < len(line) && line[i+1] == '\'' {
				b.WriteByte('\'')
				i++
			} else {
				quoted = false
			}
		case quoted:
			b.WriteByte(c)
		case c == '\'':
			in, quoted = true, true
		case c == ' ' || c == '\t':
			if in {
				out = append(out, b.String())
				b.Reset()
				in = false
			}
		default:
			in = true
			b.WriteByte(c)
		}
	}
	if quoted {
		return out, ErrOpenQuote
	}
	if in {
		out = append(out, b.String())
	}
	return out, nil
}

// Lines splits a message into lines at its unquoted line feeds (a CR
// before one is dropped); a last line without a line feed is a line all
// the same (VERSION-NOT-SUPPORTED comes so).
func Lines(msg string) ([]string, error) {
	var out []string
	quoted, start := false, 0
	for i := 0; i < len(msg); i++ {
		switch msg[i] {
		case '\'':
			quoted = !quoted // a doubled '' toggles twice
		case '\n':
			if !quoted {
				out = append(out, strings.TrimSuffix(msg[start:i], "\r"))
				start = i + 1
			}
		}
	}
	if quoted {
		return out, ErrOpenQuote
	}
	if start < len(msg) {
		out = append(out, strings.TrimSuffix(msg[start:], "\r"))
	}
	return out, nil
}
