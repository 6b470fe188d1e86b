package crawl

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"strconv"
	"strings"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/warc"
	"github.com/urlderef/deref/url"
)

// robots are the rules of one server's robots.txt that apply to deref:
// the groups naming deref, else those for "*" (RFC 9309).
type robots struct {
	// The rules' paths as robots.txt gives them, kept in a crawl's state.
	allow, disallow []string
	rules           []rule
}

// rule is an allow or disallow rule made ready for matching.
type rule struct {
	allow bool
	// parts are the pattern's literal parts, normalised (see
	// normalisePath), between its "*"s: the first at the path's start, the
	// others each after the one before.
	parts []string
	// end is set by a "$" ending the pattern: the last part then ends the
	// path.
	end bool
	// size is the pattern's length, normalised: the longest matching
	// pattern is the most specific.
	size int
}

// newRobots makes the rules of a group's allow and disallow paths; an
// empty path is no rule.
func newRobots(allow, disallow []string) *robots {
	r := &robots{allow: allow, disallow: disallow}
	for i, paths := range [][]string{disallow, allow} {
		for _, p := range paths {
			if p == "" {
				continue
			}
			ru := rule{allow: i == 1}
			if strings.HasSuffix(p, "$") {
				ru.end, p = true, p[:len(p)-1]
			}
			p = normalisePath(p, true)
			ru.size = len(p)
			if ru.end {
				ru.size++
			}
			ru.parts = strings.Split(p, "*")
			r.rules = append(r.rules, ru)
		}
	}
	return r
}

// allowed applies the most specific rule matching a path (its pattern the
// longest); a tie goes to allow, and no rule allows. robots.txt itself is
// always allowed.
func (r *robots) allowed(path string) bool {
	if path == "/robots.txt" || path == "robots.txt" || len(r.rules) == 0 {
		return true
	}
	path = normalisePath(path, false)
	best, allow := -1, true
	for _, ru := range r.rules {
		if ru.size < best || ru.size == best && !ru.allow || !ru.matches(path) {
			continue
		}
		best, allow = ru.size, ru.allow
	}
	return allow
}

// matches says whether the rule's pattern matches the start of path (the
// whole of it when the pattern ends with "$"). Each part after a "*" is
// taken where it first comes: a later place never matches more. The cost
// is linear in the path's length for each part, whatever the pattern.
func (ru *rule) matches(path string) bool {
	first := ru.parts[0]
	if !strings.HasPrefix(path, first) {
		return false
	}
	rest := path[len(first):]
	last := len(ru.parts) - 1
	if last == 0 {
		return !ru.end || rest == ""
	}
	for _, part := range ru.parts[1:last] {
		i := strings.Index(rest, part)
		if i < 0 {
			return false
		}
		rest = rest[i+len(part):]
	}
	if ru.end {
		return strings.HasSuffix(rest, ru.parts[last])
	}
	return strings.Contains(rest, ru.parts[last])
}

// normalisePath writes a path, or a rule's pattern, in the one form in
// which RFC 9309 compares them: an escape of an unreserved character
// decoded ("%7E" is "~"), the others' hex digits in upper case, and
// octets past ASCII, controls, spaces and a "%" that begins no escape
// escaped. In a path, "*" and "$" are escaped too: a pattern names them
// so ("%2A"), its own "*" being a wildcard.
func normalisePath(s string, pattern bool) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				i += 2
				if c = byte(v); unreserved(c) {
					b.WriteByte(c)
				} else {
					writeEscape(&b, c)
				}
				continue
			}
		}
		if c == '%' || c <= ' ' || c >= 0x7f || c == '$' || !pattern && c == '*' {
			writeEscape(&b, c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// writeEscape writes c as a "%" and two upper-case hexadecimal digits.
func writeEscape(b *strings.Builder, c byte) {
	const hex = "0123456789ABCDEF"
	b.WriteByte('%')
	b.WriteByte(hex[c>>4])
	b.WriteByte(hex[c&15])
}

// unreserved is RFC 3986's unreserved set: letters, digits, "-._~".
func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// robotsLimit is how much of a robots.txt is read: RFC 9309 §2.5 asks
// for at least 500 KiB.
const robotsLimit = 512 << 10

// parseRobots reads robots.txt, robotsLimit of it at most. A group is
// one or more user-agent lines and the rules that follow them; those of
// every group naming deref apply, else those of every group for "*"
// (RFC 9309 §2.2.1). Lines end with CR, LF or CR LF; other lines than
// user-agent, allow and disallow (sitemap, crawl-delay) are passed over.
func parseRobots(r io.Reader) *robots { return parseRobotsAs(r, nil) }

// parseRobotsAs is parseRobots where the scheme's servers name crawlers
// by virtual user agents as well (Gemini's archiver, indexer,
// researcher): after deref's own groups, the first of agents that has
// groups applies, before "*".
func parseRobotsAs(r io.Reader, agents []string) *robots {
	sc := bufio.NewScanner(io.LimitReader(r, robotsLimit))
	sc.Buffer(make([]byte, 0, 4096), robotsLimit+1)
	sc.Split(scanRobotsLines)
	var mine, any robots // their allow and disallow paths
	virtual := make([]robots, len(agents))
	seenVirtual := make([]bool, len(agents))
	var groups []*robots // the groups the current user-agent lines name
	inAgents := false
	seenMine := false
	first := true
	for sc.Scan() {
		text := sc.Text()
		if first {
			text, first = strings.TrimPrefix(text, "\ufeff"), false // a byte order mark
		}
		line, _, _ := strings.Cut(text, "#")
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		switch k {
		case "user-agent":
			if !inAgents {
				groups, inAgents = nil, true
			}
			switch {
			case strings.EqualFold(productToken(v), "deref"):
				groups, seenMine = append(groups, &mine), true
			case v == "*":
				groups = append(groups, &any)
			default:
				for i, a := range agents {
					if strings.EqualFold(productToken(v), a) {
						groups, seenVirtual[i] = append(groups, &virtual[i]), true
					}
				}
			}
		case "allow", "disallow":
			inAgents = false
			for _, g := range groups {
				if k == "allow" {
					g.allow = append(g.allow, v)
				} else {
					g.disallow = append(g.disallow, v)
				}
			}
		}
	}
	if seenMine {
		return newRobots(mine.allow, mine.disallow)
	}
	for i := range agents {
		if seenVirtual[i] {
			return newRobots(virtual[i].allow, virtual[i].disallow)
		}
	}
	return newRobots(any.allow, any.disallow)
}

// productToken is the name a user-agent line gives: its letters, "_" and
// "-" up to any other character ("deref" of "deref/1.0").
func productToken(v string) string {
	i := strings.IndexFunc(v, func(r rune) bool {
		return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || r == '_' || r == '-')
	})
	if i < 0 {
		return v
	}
	return v[:i]
}

// scanRobotsLines splits robots.txt into lines ending with CR, LF or CR
// LF.
func scanRobotsLines(data []byte, atEOF bool) (int, []byte, error) {
	i := bytes.IndexAny(data, "\r\n")
	switch {
	case i < 0 && atEOF && len(data) > 0:
		return len(data), data, nil
	case i < 0:
		return 0, nil, nil
	case data[i] == '\r' && i+1 == len(data) && !atEOF:
		return 0, nil, nil // a LF may follow
	case data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n':
		return i + 2, data[:i], nil
	}
	return i + 1, data[:i], nil
}

// robotsFor fetches and remembers the robots.txt of u's server: HTTP's at
// /robots.txt, a Gopher server's at the selector robots.txt (as
// gophernicus serves it). Other schemes, and servers without one, allow
// everything. The rules are kept by the frontier, when it keeps them
// (RobotsKeeper), for the other workers of the crawl and a resumed run.
// asked says a request went to the server for them.
func (m *run) robotsFor(ctx context.Context, u *url.URL) (r *robots, asked bool) {
	sc, _ := m.c.Scheme(u.Scheme)
	if sc.Robots == "" {
		return nil, false
	}
	raw := u.Scheme + "://" + u.Site() + sc.Robots
	m.mu.Lock()
	r, ok := m.robots[raw]
	m.mu.Unlock()
	if ok {
		return r, false
	}
	keeper, _ := m.front.(RobotsKeeper)
	if keeper != nil {
		if allow, disallow, ok, err := keeper.Robots(ctx, raw); err == nil && ok {
			r = newRobots(allow, disallow)
			m.mu.Lock()
			m.robots[raw] = r
			m.mu.Unlock()
			return r, false
		}
	}
	r = newRobots(nil, nil)
	fctx, group := ctx, (*warc.Group)(nil)
	if m.durable && m.archive != nil {
		group = m.archive.NewGroup()
		fctx = group.Context(ctx)
	}
	var err error
	if ru, perr := url.Parse(raw); perr == nil {
		// A failure that may pass (a 503, a time-out) is tried again as a
		// page is: one that stays, like a 404, leaves everything allowed.
		policy := fetch.Retry{Attempts: m.o.Retries, Wait: m.o.RetryWait, Refused: m.o.RetryRefused}
		err = policy.Do(ctx, func() error {
			resp, err := m.c.Fetch(fctx, ru, 0)
			if err != nil {
				return err
			}
			if resp.Kind == fetch.KindFile || resp.Kind == fetch.KindDirectory {
				r = parseRobotsAs(resp.Body, m.agents(sc))
			}
			return resp.Body.Close()
		}, nil)
	}
	if ctx.Err() != nil {
		if group != nil {
			group.Drop()
		}
		return r, true // cut off: read again by a resumed run
	}
	m.mu.Lock()
	m.robots[raw] = r
	m.mu.Unlock()
	if err != nil && (fetch.Temporary(err) || fetch.Refused(err)) {
		// Everything is allowed for this run, as a page that failed so is
		// not settled: a resumed run, which may find the server back,
		// reads its robots.txt again.
		if group != nil {
			group.Drop()
		}
		return r, true
	}
	if keeper != nil {
		keep := func() {
			if err := keeper.KeepRobots(context.WithoutCancel(ctx), raw, r.allow, r.disallow); err != nil {
				m.stopFor(errState(err))
			}
		}
		if group == nil {
			keep()
		} else {
			m.commits.Add(1)
			group.Commit(func(string, int64) {
				defer m.commits.Done()
				keep()
			})
		}
	}
	return r, true
}

// robotsPath is the part of u robots.txt rules match: an HTTP path and
// query, a Gopher selector.
func robotsPath(u *url.URL) string {
	if sel, ok := u.Selector(); ok {
		return sel
	}
	p := u.Path
	if p == "" {
		p = "/"
	}
	if u.HasQuery {
		p += "?" + u.Query
	}
	return p
}

// agents are the virtual user agents a scheme's robots.txt names this
// crawl by (protocols.Scheme.RobotsAgents): "archiver" only when it
// writes an archive.
func (m *run) agents(sc fetch.Scheme) []string {
	var out []string
	for _, a := range sc.RobotsAgents {
		if a == "archiver" && m.c.Recorder == nil {
			continue
		}
		out = append(out, a)
	}
	return out
}
