package mirror

import (
	"strings"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/url"
)

// TestDecide judges folders with no server and no disk: remote entries
// against local ones, under the options, one verdict per name.
func TestDecide(t *testing.T) {
	top := url.MustParse("ftp://h/pub/")
	tree, err := fetch.NewClient().Tree(top)
	if err != nil {
		t.Fatal(err)
	}
	when := time.Date(2021, 3, 4, 5, 6, 7, 0, time.UTC)
	file := func(name string, size int64) child {
		return child{name: name, size: size, mod: when, u: url.MustParse("ftp://h/pub/" + name)}
	}
	dir := func(name string) child {
		return child{name: name, dir: true, size: -1, u: url.MustParse("ftp://h/pub/" + name + "/")}
	}
	link := func(name, target string) child {
		return child{name: name, link: true, target: target, size: -1, u: url.MustParse("ftp://h/pub/" + name)}
	}
	same := func(size int64) *localFile { return &localFile{size: size, mod: when} }
	older := func(size int64) *localFile { return &localFile{size: size, mod: when.Add(-time.Hour)} }
	folder := &localFile{dir: true}

	for _, tt := range []struct {
		name   string
		o      Options
		fold   bool
		depth  int
		remote []child
		local  map[string]*localFile
		want   string // name:verdict, in order; a reason after "=" where one is checked
	}{
		{"new, unchanged, changed", Options{OnlyNewer: true},
			false, 1, []child{file("a", 5), file("b", 5), file("c", 5)},
			map[string]*localFile{"b": same(5), "c": older(5)},
			"a:fetch b:skip=same size and time c:fetch"},
		{"every file again without OnlyNewer", Options{},
			false, 1, []child{file("b", 5)}, map[string]*localFile{"b": same(5)},
			"b:fetch"},
		{"digests decide", Options{OnlyNewer: true, Checksum: true},
			false, 1, []child{file("a", 5), file("b", 5)}, map[string]*localFile{"b": same(5)},
			"a:fetch b:compare"},
		{"refusals", Options{Delete: true},
			false, 1, []child{file("..", 1), file("a", 1), file("a.part", 1), file("a.part.segments", 1), {name: "bad", refuse: "listing line not understood", size: -1}},
			map[string]*localFile{"a.part": same(1), "a.part.segments": same(1), "bad": same(1)},
			`"..":refuse=unsafe name ".." a:fetch a.part:refuse a.part.segments:refuse bad:refuse=listing line not understood`},
		{"case folding", Options{},
			true, 1, []child{file("README", 1), file("readme", 1)}, nil,
			`README:fetch readme:refuse=name collides with "README" on a file system that ignores case`},
		{"filters leave, never delete", Options{Delete: true, Exclude: []string{"*.tmp"}},
			false, 1, []child{file("a.tmp", 1)}, map[string]*localFile{"a.tmp": same(1), "b.tmp": same(1), "old": same(1)},
			"a.tmp:leave old:delete=no longer on the server"},
		{"folders", Options{Delete: true},
			false, 1, []child{dir("d"), dir("f"), file("g", 1)},
			map[string]*localFile{"f": same(1), "g": folder, "gone": folder},
			"d:descend f:fail g:fail gone:delete"},
		{"below MaxDepth", Options{MaxDepth: 2, Delete: true},
			false, 2, []child{dir("d"), file("e", 1)}, map[string]*localFile{"d": folder},
			"d:leave e:fetch"},
		{"links", Options{FollowSymlinks: true},
			false, 1, []child{file("real", 7), link("alias", "real"), link("up", "../x"), link("sub", "d"), dir("d")}, nil,
			`alias:fetch d:descend real:fetch sub:refuse=symbolic link to "d", a folder (not followed) up:refuse=symbolic link to "../x" outside the mirrored tree`},
		{"links not followed", Options{},
			false, 1, []child{link("alias", "real")}, nil,
			`alias:refuse=symbolic link to "real" (not followed)`},
		{"unfinished transfers stay with their file", Options{Delete: true},
			false, 1, []child{file("a", 1)},
			map[string]*localFile{"a.part": same(1), "a.part.segments": same(1), "z.part": same(1), ".deref-case-probe": same(0)},
			"a:fetch z.part:delete"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := &run{o: tt.o, tree: tree, fold: tt.fold}
			locals := tt.local
			if locals == nil {
				locals = map[string]*localFile{}
			}
			d := &dirNode{u: top, depth: tt.depth}
			var got []string
			for _, dec := range m.decide(d, tt.remote, locals) {
				name := dec.rel
				if dec.k.name != "" && !strings.HasPrefix(dec.rel, `"`) {
					name = dec.k.name
				}
				s := name + ":" + dec.do.String()
				if strings.Contains(tt.want, s+"=") {
					s += "=" + dec.reason
				}
				got = append(got, s)
			}
			if strings.Join(got, " ") != tt.want {
				t.Errorf("got  %s\nwant %s", strings.Join(got, " "), tt.want)
			}
		})
	}
}

// A followed link to a neighbour is fetched from the target's URL with
// the target's size and time, so that OnlyNewer can tell it unchanged.
func TestDecideLinkTakesTarget(t *testing.T) {
	top := url.MustParse("ftp://h/pub/")
	tree, _ := fetch.NewClient().Tree(top)
	when := time.Date(2021, 3, 4, 5, 6, 7, 0, time.UTC)
	m := &run{o: Options{FollowSymlinks: true, OnlyNewer: true}, tree: tree}
	kids := []child{
		{name: "real", size: 7, mod: when, u: url.MustParse("ftp://h/pub/real")},
		{name: "alias", link: true, target: "real", size: -1, u: url.MustParse("ftp://h/pub/alias")},
	}
	decs := m.decide(&dirNode{u: top, depth: 1}, kids, map[string]*localFile{"alias": {size: 7, mod: when}})
	if decs[0].do != doSkip || decs[0].k.u.String() != "ftp://h/pub/real;type=i" || decs[0].k.size != 7 {
		t.Errorf("%v %v %d", decs[0].do, decs[0].k.u, decs[0].k.size)
	}
}
