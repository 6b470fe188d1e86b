package crawl

import (
	"regexp"
	"strings"
	"testing"
)

// The rules of RFC 9309 and of the robots.txt files found in the wild:
// the groups that apply, wildcards, "$", percent-encoding, the most
// specific rule winning and a tie going to allow.
func TestRobotsRules(t *testing.T) {
	for _, tc := range []struct {
		name, txt string
		allowed   []string
		excluded  []string
	}{
		{
			name:     "a prefix",
			txt:      "User-agent: *\nDisallow: /fish\n",
			allowed:  []string{"/", "/Fish.asp", "/catfish", "/robots.txt"},
			excluded: []string{"/fish", "/fish.html", "/fish/salmon.html", "/fishheads", "/fish.php?id=anything"},
		},
		{
			name:     "a wildcard",
			txt:      "User-agent: *\nDisallow: /fish*.php\n",
			allowed:  []string{"/fish", "/Fish.PHP", "/fishheads/catfish.PHP", "/catfish.php"},
			excluded: []string{"/fish.php", "/fishheads/catfish.php?parameters"},
		},
		{
			name:     "a wildcard first",
			txt:      "User-agent: *\nDisallow: /*.php\n",
			allowed:  []string{"/", "/windows.PHP", "/index.ph"},
			excluded: []string{"/index.php", "/folder/filename.php?parameters", "/folder/any.php.file.html", "/filename.php/"},
		},
		{
			name:     "an end",
			txt:      "User-agent: *\nDisallow: /*.php$\n",
			allowed:  []string{"/filename.php?parameters", "/filename.php/", "/windows.PHP"},
			excluded: []string{"/filename.php", "/folder/filename.php", "/a.php.php"},
		},
		{
			name:     "a $ inside a pattern is a $",
			txt:      "User-agent: *\nDisallow: /price$list\n",
			allowed:  []string{"/price", "/pricelist"},
			excluded: []string{"/price$list", "/price%24list/2"},
		},
		{
			name:     "several wildcards, the last part at the end",
			txt:      "User-agent: *\nDisallow: /a*b*b$\n",
			allowed:  []string{"/ab", "/abc", "/a/b/c"},
			excluded: []string{"/abb", "/a-b-b", "/axbyb"},
		},
		{
			name:     "the longest rule wins",
			txt:      "User-agent: *\nAllow: /p\nDisallow: /\n",
			allowed:  []string{"/page", "/p"},
			excluded: []string{"/", "/other"},
		},
		{
			name:     "a tie goes to allow",
			txt:      "User-agent: *\nDisallow: /folder\nAllow: /folder\nDisallow: /folder/private\n",
			allowed:  []string{"/folder/page", "/folder"},
			excluded: []string{"/folder/private/1"},
		},
		{
			name:     "a longer wildcard beats a shorter allow",
			txt:      "User-agent: *\nAllow: /page\nDisallow: /*.htm\n",
			allowed:  []string{"/page"},
			excluded: []string{"/page.htm"},
		},
		{
			name:     "the root alone",
			txt:      "User-agent: *\nAllow: /$\nDisallow: /\n",
			allowed:  []string{"/"},
			excluded: []string{"/page.htm"},
		},
		{
			name:     "percent-encoding",
			txt:      "User-agent: *\nDisallow: /foo/bar/%62%61%7A\nDisallow: /foo/bar/ツ\nDisallow: /a%2fb\nDisallow: /file-with-a-%2A.html\n",
			allowed:  []string{"/foo/bar/ba", "/a/b", "/file-with-a-x.html"},
			excluded: []string{"/foo/bar/baz", "/foo/bar/%62az", "/foo/bar/%E3%83%84", "/foo/bar/%e3%83%84", "/a%2Fb", "/file-with-a-*.html", "/file-with-a-%2a.html"},
		},
		{
			name:     "deref's group, not the others",
			txt:      "User-agent: *\nDisallow: /\n\nUser-agent: Deref/1.0\nDisallow: /private\n\nUser-agent: derefbot\nDisallow: /public\n",
			allowed:  []string{"/", "/public"},
			excluded: []string{"/private/x"},
		},
		{
			name:     "groups naming deref are one",
			txt:      "User-agent: deref\nDisallow: /a\n\nUser-agent: other\nDisallow: /b\n\nUser-agent: DEREF\nDisallow: /c\n",
			allowed:  []string{"/b"},
			excluded: []string{"/a", "/c"},
		},
		{
			name:     "agents sharing a group, lines between them passed over",
			txt:      "User-agent: other\nCrawl-delay: 5\nUser-agent: deref\nDisallow: /x # a comment\nSitemap: http://h/s.xml\nDisallow: /y\n",
			allowed:  []string{"/z"},
			excluded: []string{"/x", "/y/1"},
		},
		{
			name:     "a byte order mark, CR line ends, upper-case keys",
			txt:      "\ufeffUSER-AGENT: *\rDISALLOW: /cr\rAllow: /cr/ok\r\nDisallow:\n",
			allowed:  []string{"/", "/cr/ok/1"},
			excluded: []string{"/cr", "/cr/no"},
		},
		{
			name:    "no group applies",
			txt:     "User-agent: other\nDisallow: /\n",
			allowed: []string{"/", "/x"},
		},
		{
			name:     "a Gopher server's selectors",
			txt:      "User-agent: *\nDisallow: /private\nDisallow: *.cgi$\n",
			allowed:  []string{"", "/public/1", "robots.txt"},
			excluded: []string{"/private/x", "/bin/search.cgi"},
		},
	} {
		r := parseRobots(strings.NewReader(tc.txt))
		for _, p := range tc.allowed {
			if !r.allowed(p) {
				t.Errorf("%s: %q excluded", tc.name, p)
			}
		}
		for _, p := range tc.excluded {
			if r.allowed(p) {
				t.Errorf("%s: %q allowed", tc.name, p)
			}
		}
	}
}

// A line longer than bufio's usual 64 KiB does not end the reading: the
// rules after it apply.
func TestRobotsLongLine(t *testing.T) {
	txt := "User-agent: *\nDisallow: /" + strings.Repeat("x", 100<<10) + "\nDisallow: /after\n"
	if r := parseRobots(strings.NewReader(txt)); r.allowed("/after") {
		t.Error("the rule after a long line was lost")
	}
}

// Any robots.txt and path are judged as a regular expression of each
// rule would judge them (RE2's, linear as the matcher is): the longest
// matching rule, allow on a tie.
func FuzzRobots(f *testing.F) {
	f.Add("User-agent: *\nDisallow: /*a*a*a*a*a*a*a*a*b$\nAllow: /%\n", "/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")
	f.Add("User-agent: deref\r\nDisallow: %zz*$$\r", "/%zz")
	f.Add("User-agent: *\nDisallow: /a*b*b$\nAllow: /a*b\n", "/axbyb")
	f.Add("User-agent: *\nDisallow: /*.php\n", "/index.html")
	f.Fuzz(func(t *testing.T, txt, path string) {
		r := parseRobots(strings.NewReader(txt))
		if path == "/robots.txt" || path == "robots.txt" {
			return // always allowed
		}
		norm := normalisePath(path, false)
		best, want := -1, true
		for i, paths := range [][]string{r.disallow, r.allow} {
			for _, p := range paths {
				if p == "" {
					continue
				}
				end := strings.HasSuffix(p, "$")
				p = normalisePath(strings.TrimSuffix(p, "$"), true)
				parts := strings.Split(p, "*")
				for k := range parts {
					parts[k] = regexp.QuoteMeta(parts[k])
				}
				expr := "^(?s)" + strings.Join(parts, ".*")
				size := len(p)
				if end {
					expr += "$"
					size++
				}
				if !regexp.MustCompile(expr).MatchString(norm) || size < best || size == best && i == 0 {
					continue
				}
				best, want = size, i == 1
			}
		}
		if got := r.allowed(path); got != want {
			t.Fatalf("%q: allowed %v, the rules' expressions say %v", path, got, want)
		}
	})
}

// Gemini's virtual user agents: deref's own group first, then the first
// of the agents that has one (archiver, then indexer...), then "*".
func TestRobotsVirtualAgents(t *testing.T) {
	txt := "User-agent: *\nDisallow: /all\n\nUser-agent: indexer\nDisallow: /idx\n\nUser-agent: archiver\nDisallow: /arc\n"
	for _, tc := range []struct {
		agents []string
		denied string
	}{{[]string{"archiver", "indexer", "researcher"}, "/arc"}, {[]string{"indexer", "researcher"}, "/idx"}, {[]string{"researcher"}, "/all"}, {nil, "/all"}} {
		r := parseRobotsAs(strings.NewReader(txt), tc.agents)
		for _, p := range []string{"/arc", "/idx", "/all"} {
			if r.allowed(p) == (p == tc.denied) {
				t.Errorf("%v: %s allowed: %v", tc.agents, p, r.allowed(p))
			}
		}
	}
	if r := parseRobotsAs(strings.NewReader(txt+"\nUser-agent: deref\nDisallow: /mine\n"), []string{"archiver"}); r.allowed("/mine") || !r.allowed("/arc") {
		t.Error("deref's own group does not come first")
	}
}
