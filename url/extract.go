package url

import "strings"

// Match is one URL found in running text by Extract.
type Match struct {
	Start, End int    // the byte range of the delimited text, brackets included
	Raw        string // the URL with the wrapper and white space removed
	// Alt is the URL without a hyphen that stood at a line break: the
	// hyphen may have been put there by a typesetter (RFC 1738, appendix).
	Alt string
	URL *URL  // the parsed URL, nil when it does not parse
	Err error // the parse error, when URL is nil
}

// Extract finds the URLs delimited in text the way RFC 1738's appendix
// recommends: "<URL:...>" (the prefix in any case) and a bare
// "<scheme:...>". White space inside the brackets, such as line breaks
// added to wrap long URLs, is ignored. A wrapped "<URL:...>" is reported
// even when it does not parse (Err says why); a bare "<...>" only when it
// does.
func Extract(text string) []Match {
	var out []Match
	for i := 0; i < len(text); i++ {
		if text[i] != '<' {
			continue
		}
		j := strings.IndexAny(text[i+1:], "<>")
		if j < 0 {
			break
		}
		if text[i+1+j] == '<' { // an inner "<" starts a new candidate
			i += j
			continue
		}
		end := i + 1 + j
		inner := strings.TrimLeft(text[i+1:end], " \t\r\n")
		wrapped := len(inner) >= 4 && strings.EqualFold(inner[:4], "URL:")
		if wrapped {
			inner = inner[4:]
		}
		raw, alt := joinLines(inner)
		m := Match{Start: i, End: end + 1, Raw: raw, Alt: alt}
		m.URL, m.Err = Parse(raw)
		if wrapped || m.Err == nil && schemeEnd(raw) > 0 && !strings.ContainsAny(inner, " \t") {
			out = append(out, m)
		}
		i = end
	}
	return out
}

// joinLines removes white space; where a line break follows a hyphen it
// also returns the variant without that hyphen.
func joinLines(s string) (raw, alt string) {
	var b, a strings.Builder
	hyphenBreak := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ' ' || c == '\t' || c == '\r' || c == '\n' {
			if c == '\n' && strings.HasSuffix(strings.TrimRight(s[:i], " \t\r"), "-") {
				if !hyphenBreak {
					hyphenBreak = true
					str := a.String()
					a.Reset()
					a.WriteString(strings.TrimSuffix(str, "-"))
				}
			}
			continue
		}
		b.WriteByte(c)
		a.WriteByte(c)
	}
	if !hyphenBreak {
		return b.String(), ""
	}
	return b.String(), a.String()
}
