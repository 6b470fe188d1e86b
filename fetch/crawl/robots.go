package crawl

import (
	"bufio"
	"context"
	"io"
	"strings"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/warc"
	"github.com/urlderef/deref/url"
)

// robots are the rules of one server's robots.txt that apply to deref:
// the group naming "deref", else the group for "*" (RFC 9309).
type robots struct {
	allow, disallow []string
}

// allowed applies the longest matching rule to a path; a tie goes to
// Allow, and no rule allows.
func (r *robots) allowed(path string) bool {
	best, allow := -1, true
	for _, p := range r.disallow {
		if p != "" && strings.HasPrefix(path, p) && len(p) > best {
			best, allow = len(p), false
		}
	}
	for _, p := range r.allow {
		if strings.HasPrefix(path, p) && len(p) >= best {
			best, allow = len(p), true
		}
	}
	return allow
}

// parseRobots reads robots.txt, at most 512 KiB of it (RFC 9309 §2.5).
func parseRobots(r io.Reader) *robots {
	sc := bufio.NewScanner(io.LimitReader(r, 512<<10))
	var mine, any robots
	var groups []*robots // the groups the current user-agent lines name
	inAgents := false
	seenMine := false
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
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
			switch a := strings.ToLower(v); {
			case strings.HasPrefix(a, "deref"):
				groups, seenMine = append(groups, &mine), true
			case a == "*":
				groups = append(groups, &any)
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
		default:
			inAgents = false
		}
	}
	if seenMine {
		return &mine
	}
	return &any
}

// robotsFor fetches and remembers the robots.txt of u's server: HTTP's at
// /robots.txt, a Gopher server's at the selector robots.txt (as
// gophernicus serves it). Other schemes, and servers without one, allow
// everything.
func (m *run) robotsFor(ctx context.Context, u *url.URL) *robots {
	var raw string
	switch u.Scheme {
	case "http", "https":
		raw = u.Scheme + "://" + u.Site() + "/robots.txt"
	case "gopher", "gophers":
		raw = u.Scheme + "://" + u.Site() + "/0robots.txt"
	default:
		return nil
	}
	m.mu.Lock()
	r, ok := m.robots[raw]
	m.mu.Unlock()
	if ok {
		return r
	}
	r = &robots{}
	fctx, group := ctx, (*warc.Group)(nil)
	if m.state != nil && m.archive != nil {
		group = m.archive.NewGroup()
		fctx = group.Context(ctx)
	}
	if ru, err := url.Parse(raw); err == nil {
		if resp, err := m.c.Fetch(fctx, ru, 0); err == nil {
			if resp.Kind == fetch.KindFile {
				r = parseRobots(resp.Body)
			}
			resp.Body.Close()
		}
	}
	if ctx.Err() != nil {
		if group != nil {
			group.Drop()
		}
		return r // cut off: read again by a resumed run
	}
	m.mu.Lock()
	m.robots[raw] = r
	m.mu.Unlock()
	if m.state != nil {
		l := stateLine{Robots: raw, Allow: r.allow, Disallow: r.disallow}
		if group == nil {
			m.state.write(l)
		} else {
			m.commits.Add(1)
			group.Commit(func(string, int64) {
				defer m.commits.Done()
				m.state.write(l)
			})
		}
	}
	return r
}

// robotsPath is the part of u robots.txt rules match: an HTTP path and
// query, a Gopher selector.
func robotsPath(u *url.URL) string {
	if g, err := u.Gopher(); err == nil && (u.Scheme == "gopher" || u.Scheme == "gophers") {
		return g.Selector
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
