package mirror_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/mirror"
	"github.com/urlderef/deref/internal/testserver/ftpd"
	"github.com/urlderef/deref/internal/testserver/gopherd"
)

// serveFTP serves root over FTP on loopback through an independent
// server (ftpd) and returns the base URL.
func serveFTP(t testing.TB, root string) string {
	t.Helper()
	s, err := ftpd.Start(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s.URL()
}

var old = time.Date(2021, 3, 4, 5, 6, 7, 0, time.UTC)

// makeTree writes files (path to content) below root, dated old.
func makeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
}

// readTree returns every regular file below root: path to content. Any
// other kind of entry (a link) fails the test.
func readTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if de.IsDir() {
			return nil
		}
		if !de.Type().IsRegular() {
			t.Errorf("%s is not a regular file (%v)", p, de.Type())
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t *testing.T, got, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if g, ok := got[k]; !ok {
			t.Errorf("missing %s", k)
		} else if g != v {
			t.Errorf("%s = %q, want %q", k, trim(g), trim(v))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected %s", k)
		}
	}
}

func trim(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

var sample = map[string]string{
	"README.txt":             "top\n",
	"pub/a.txt":              "alpha\n",
	"pub/crlf.txt":           "CRLF stays\r\nas it is\r\n",
	"pub/b.bin":              "\x00\x01\x02\r\n\x03",
	"pub/with space/c d.txt": "spaced\n",
	"pub/nested/deep/e.txt":  "deep\n",
	"pub/empty":              "",
	"pub/percent%2Fname.txt": "percent\n",
	"big.bin":                strings.Repeat("0123456789abcdef", 1<<16),
}

func run(t *testing.T, src, dst string, o mirror.Options) *mirror.Report {
	t.Helper()
	rep, err := mirror.Run(context.Background(), fetch.NewClient(), src, dst, o)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return rep
}

func TestFTPMirrorAndOnlyNewer(t *testing.T) {
	root := t.TempDir()
	makeTree(t, root, sample)
	src := serveFTP(t, root)
	dst := filepath.Join(t.TempDir(), "copy")

	rep := run(t, src, dst, mirror.Options{})
	if rep.New != len(sample) || rep.Failed != 0 || rep.Refused != 0 {
		t.Fatalf("first run: %+v", rep)
	}
	sameTree(t, readTree(t, dst), sample)
	st, err := os.Stat(filepath.Join(dst, "pub", "a.txt"))
	if err != nil || !st.ModTime().Equal(old) {
		t.Errorf("local time %v, want the server's %v", st.ModTime(), old)
	}

	rep = run(t, src, dst, mirror.Options{OnlyNewer: true})
	if rep.New+rep.Updated != 0 || rep.Unchanged != len(sample) || rep.Bytes != 0 {
		t.Errorf("second --only-newer run transferred: %+v", rep)
	}

	// Change one file's content (same size, newer time), grow another,
	// remove a third.
	later := old.Add(time.Hour)
	os.WriteFile(filepath.Join(root, "pub", "a.txt"), []byte("ALPHA\n"), 0o644)
	os.Chtimes(filepath.Join(root, "pub", "a.txt"), later, later)
	os.WriteFile(filepath.Join(root, "README.txt"), []byte("top, longer\n"), 0o644)
	os.Remove(filepath.Join(root, "pub", "b.bin"))
	want := map[string]string{}
	for k, v := range sample {
		want[k] = v
	}
	want["pub/a.txt"], want["README.txt"] = "ALPHA\n", "top, longer\n"

	rep = run(t, src, dst, mirror.Options{OnlyNewer: true})
	if rep.Updated != 2 || rep.Deleted != 0 || rep.New != 0 {
		t.Errorf("after changes: %+v", rep)
	}
	sameTree(t, readTree(t, dst), want) // b.bin stays without --delete

	delete(want, "pub/b.bin")
	rep = run(t, src, dst, mirror.Options{OnlyNewer: true, Delete: true})
	if rep.Deleted != 1 || rep.Updated != 0 || len(rep.Items) != 1 || rep.Items[0].Path != "pub/b.bin" {
		t.Errorf("--delete: %+v", rep)
	}
	sameTree(t, readTree(t, dst), want)
}

func TestFiltersDepthDryRun(t *testing.T) {
	root := t.TempDir()
	makeTree(t, root, sample)
	src := "file://" + filepath.ToSlash(root) + "/"

	dst := filepath.Join(t.TempDir(), "d")
	rep := run(t, src, dst, mirror.Options{DryRun: true})
	if rep.New != len(sample) {
		t.Errorf("dry run: %+v", rep)
	}
	if _, err := os.Stat(dst); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("dry run created the destination: %v", err)
	}

	cases := []struct {
		name string
		o    mirror.Options
		want []string
	}{
		{"include by name", mirror.Options{Include: []string{"*.txt"}}, []string{"README.txt", "pub/a.txt", "pub/crlf.txt", "pub/nested/deep/e.txt", "pub/percent%2Fname.txt", "pub/with space/c d.txt"}},
		{"exclude a folder by path", mirror.Options{Exclude: []string{"pub/nested"}}, []string{"README.txt", "big.bin", "pub/a.txt", "pub/b.bin", "pub/crlf.txt", "pub/empty", "pub/percent%2Fname.txt", "pub/with space/c d.txt"}},
		{"exclude by name everywhere", mirror.Options{Exclude: []string{"*.bin", "* *"}}, []string{"README.txt", "pub/a.txt", "pub/crlf.txt", "pub/empty", "pub/nested/deep/e.txt", "pub/percent%2Fname.txt"}},
		// lftp's rules, in order, the last that matches deciding.
		{"rules: exclude, then include again", mirror.Options{Rules: []mirror.Rule{
			{Regex: regexp.MustCompile(`\.txt$`)}, {Include: true, Regex: regexp.MustCompile(`^pub/nested/`)},
		}}, []string{"big.bin", "pub/b.bin", "pub/empty", "pub/nested/deep/e.txt"}},
		{"rules: include first leaves out what none matches", mirror.Options{Rules: []mirror.Rule{
			{Include: true, Glob: "*.txt"}, {Glob: "crlf*"}, {Include: true, Regex: regexp.MustCompile(`^pub/b\.`)},
		}}, []string{"README.txt", "pub/a.txt", "pub/b.bin", "pub/nested/deep/e.txt", "pub/percent%2Fname.txt", "pub/with space/c d.txt"}},
		{"rules: a folder by its path and final slash", mirror.Options{Rules: []mirror.Rule{{Regex: regexp.MustCompile(`nested/$`)}}},
			[]string{"README.txt", "big.bin", "pub/a.txt", "pub/b.bin", "pub/crlf.txt", "pub/empty", "pub/percent%2Fname.txt", "pub/with space/c d.txt"}},
		{"depth 1", mirror.Options{MaxDepth: 1}, []string{"README.txt", "big.bin"}},
		{"depth 2", mirror.Options{MaxDepth: 2}, []string{"README.txt", "big.bin", "pub/a.txt", "pub/b.bin", "pub/crlf.txt", "pub/empty", "pub/percent%2Fname.txt"}},
	}
	for _, c := range cases {
		dst := t.TempDir()
		run(t, src, dst, c.o)
		got := slices.Sorted(mapsKeys(readTree(t, dst)))
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

func mapsKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func TestShardsSplitTheTree(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{}
	for i := range 60 {
		files[fmt.Sprintf("d%d/f%02d.txt", i%3, i)] = fmt.Sprint(i)
	}
	makeTree(t, root, files)
	src := "file://" + filepath.ToSlash(root) + "/"
	seen := map[string]int{}
	for i := range 3 {
		dst := t.TempDir()
		rep := run(t, src, dst, mirror.Options{Shard: i, Shards: 3})
		if rep.New == 0 || rep.New == len(files) {
			t.Errorf("shard %d got %d of %d files", i, rep.New, len(files))
		}
		for p := range readTree(t, dst) {
			seen[p]++
			if mirror.Shard(p, 3) != i {
				t.Errorf("%s in shard %d, hash says %d", p, i, mirror.Shard(p, 3))
			}
		}
	}
	for p := range files {
		if seen[p] != 1 {
			t.Errorf("%s mirrored by %d shards, want exactly 1", p, seen[p])
		}
	}
	if _, err := mirror.Run(context.Background(), fetch.NewClient(), src, t.TempDir(), mirror.Options{Shard: 3, Shards: 3}); err == nil {
		t.Error("shard 3 of 3 accepted")
	}
}

// events collects Events for a test.
type events struct {
	mu  sync.Mutex
	all []mirror.Event
}

func (e *events) add(ev mirror.Event) {
	e.mu.Lock()
	e.all = append(e.all, ev)
	e.mu.Unlock()
}

func (e *events) of(typ mirror.EventType) []mirror.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []mirror.Event
	for _, ev := range e.all {
		if ev.Type == typ {
			out = append(out, ev)
		}
	}
	return out
}

func TestInterruptedRunResumes(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{}
	for i := range 8 {
		files[fmt.Sprintf("f%d.bin", i)] = strings.Repeat(fmt.Sprint(i), 1<<20)
	}
	files["f0.bin"] = "small" // done first, while the others are under way
	makeTree(t, root, files)
	src := serveFTP(t, root)
	dst := t.TempDir()

	// Cancel once the small file is complete and another is half way.
	ctx, cancel := context.WithCancel(context.Background())
	c := fetch.NewClient()
	var once sync.Once
	rep, err := mirror.Run(ctx, c, src, dst, mirror.Options{Parallel: 2, LimitRate: 8 << 20, Events: func(ev mirror.Event) {
		if ev.Type == mirror.EventProgress && ev.Bytes >= 512<<10 {
			once.Do(cancel)
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run after cancel: %v", err)
	}
	if rep == nil || !rep.Interrupted {
		t.Errorf("the report does not say the run was interrupted: %+v", rep)
	}
	// No final name holds an incomplete file.
	des, _ := os.ReadDir(dst)
	parts := 0
	for _, de := range des {
		b, _ := os.ReadFile(filepath.Join(dst, de.Name()))
		if base, ok := strings.CutSuffix(de.Name(), ".part"); ok {
			parts++
			if !strings.HasPrefix(files[base], string(b)) {
				t.Errorf("%s is not a prefix of %s", de.Name(), base)
			}
			continue
		}
		if string(b) != files[de.Name()] {
			t.Errorf("%s is under its final name but incomplete (%d bytes)", de.Name(), len(b))
		}
	}
	if parts == 0 {
		t.Fatalf("the interrupted run left no partial file (%d entries)", len(des))
	}

	var ev events
	rep = run(t, src, dst, mirror.Options{OnlyNewer: true, Events: ev.add})
	if rep.Failed != 0 || rep.Interrupted {
		t.Fatalf("second run: %+v", rep)
	}
	resumed := 0
	for _, s := range ev.of(mirror.EventStart) {
		if s.Offset > 0 {
			resumed++
		}
	}
	if resumed == 0 {
		t.Errorf("%d partial files, none resumed", parts)
	}
	sameTree(t, readTree(t, dst), files) // and no .part left
}

func TestLocalLinkCannotLeadOut(t *testing.T) {
	root := t.TempDir()
	makeTree(t, root, map[string]string{"sub/x.txt": "x", "y.txt": "y"})
	src := serveFTP(t, root)
	outside := t.TempDir()
	dst := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dst, "sub")); err != nil {
		t.Skip(err)
	}
	rep := run(t, src, dst, mirror.Options{})
	if rep.Failed == 0 {
		t.Errorf("a folder that is a link out of the destination was written through: %+v", rep)
	}
	if des, _ := os.ReadDir(outside); len(des) != 0 {
		t.Errorf("wrote outside the destination: %v", des)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "y.txt")); string(b) != "y" {
		t.Errorf("y.txt = %q", b)
	}
}

func TestFollowSymlinksInsideTree(t *testing.T) {
	root := t.TempDir()
	makeTree(t, root, map[string]string{"a/target.txt": "target", "plain.txt": "p"})
	if err := os.Symlink("target.txt", filepath.Join(root, "a", "inside")); err != nil {
		t.Skip(err)
	}
	os.Symlink("../../../etc/passwd", filepath.Join(root, "a", "escape"))
	os.Symlink("/etc/passwd", filepath.Join(root, "abs"))
	os.Symlink(".", filepath.Join(root, "a", "loop"))   // a folder: its own
	os.Symlink("a/", filepath.Join(root, "folderlink")) // a folder: a neighbour
	src := "file://" + filepath.ToSlash(root) + "/"

	dst := t.TempDir()
	rep := run(t, src, dst, mirror.Options{})
	if rep.Refused != 5 {
		t.Errorf("links not followed: %+v", rep)
	}
	sameTree(t, readTree(t, dst), map[string]string{"a/target.txt": "target", "plain.txt": "p"})

	dst = t.TempDir()
	rep = run(t, src, dst, mirror.Options{FollowSymlinks: true})
	if rep.Refused != 4 || rep.Failed != 0 {
		t.Errorf("links followed: %+v", rep)
	}
	for _, it := range rep.Items {
		want := "outside the mirrored tree"
		if it.Path == "a/loop" || it.Path == "folderlink" {
			want = "a folder (not followed)"
		}
		if it.Action == mirror.ActionRefuse && !strings.Contains(it.Reason, want) {
			t.Errorf("%s: %s, want %q", it.Path, it.Reason, want)
		}
	}
	sameTree(t, readTree(t, dst), map[string]string{"a/target.txt": "target", "a/inside": "target", "plain.txt": "p"})

	// The link takes its neighbour's size and time from the listing: a
	// second run finds it unchanged instead of fetching it again.
	rep = run(t, src, dst, mirror.Options{FollowSymlinks: true, OnlyNewer: true})
	if rep.New+rep.Updated != 0 || rep.Bytes != 0 || rep.Unchanged != 3 {
		t.Errorf("second run: %+v", rep)
	}
}

func TestReportSorted(t *testing.T) {
	root := t.TempDir()
	makeTree(t, root, sample)
	rep := run(t, "file://"+filepath.ToSlash(root)+"/", t.TempDir(), mirror.Options{Parallel: 8})
	if !sort.SliceIsSorted(rep.Items, func(i, j int) bool { return rep.Items[i].Path < rep.Items[j].Path }) {
		t.Error("items not sorted by path")
	}
	var total int64
	for _, it := range rep.Items {
		total += it.Bytes
	}
	if total != rep.Bytes || !bytes.Equal([]byte(fmt.Sprint(rep.New)), []byte(fmt.Sprint(len(sample)))) {
		t.Errorf("bytes %d vs items %d; new %d", rep.Bytes, total, rep.New)
	}
}

// TestSelection: lftp's --newer-than, --older-than, --size-range and
// --only-missing, by what the listing says of each file.
func TestSelection(t *testing.T) {
	root := t.TempDir()
	makeTree(t, root, map[string]string{"old.txt": "old file\n", "small": "s", "sub/big.txt": strings.Repeat("b", 100)})
	recent := time.Now().Add(-time.Hour).Truncate(time.Second)
	os.Chtimes(filepath.Join(root, "small"), recent, recent)
	src := "file://" + filepath.ToSlash(root) + "/"
	mid := recent.Add(-24 * time.Hour)
	for _, c := range []struct {
		name string
		o    mirror.Options
		want []string
	}{
		{"newer than", mirror.Options{NewerThan: mid}, []string{"small"}},
		{"older than", mirror.Options{OlderThan: mid}, []string{"old.txt", "sub/big.txt"}},
		{"at least 5 bytes", mirror.Options{MinSize: 5}, []string{"old.txt", "sub/big.txt"}},
		{"at most 9 bytes", mirror.Options{MaxSize: 9}, []string{"old.txt", "small"}},
	} {
		dst := t.TempDir()
		run(t, src, dst, c.o)
		if got := slices.Sorted(mapsKeys(readTree(t, dst))); !slices.Equal(got, c.want) {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
	dst := t.TempDir()
	os.WriteFile(filepath.Join(dst, "small"), []byte("mine"), 0o644)
	rep := run(t, src, dst, mirror.Options{OnlyMissing: true, Delete: true})
	tree := readTree(t, dst)
	if tree["small"] != "mine" || tree["old.txt"] != "old file\n" || len(tree) != 3 || rep.New != 2 {
		t.Errorf("only missing: %q, report %+v", tree, rep)
	}
}

// With FailuresOnly the report counts every file but lists only the
// failures: a mirror of millions of files keeps no list of them.
func TestFailuresOnly(t *testing.T) {
	root := t.TempDir()
	makeTree(t, root, map[string]string{"a.txt": "a", "d/b.txt": "b", "d/c.txt": "c"})
	src := "file://" + filepath.ToSlash(root) + "/"
	for _, only := range []bool{false, true} {
		rep, err := mirror.Run(context.Background(), fetch.NewClient(), src, t.TempDir(), mirror.Options{FailuresOnly: only})
		if err != nil || rep.New != 3 {
			t.Fatalf("FailuresOnly %v: %v %+v", only, err, rep)
		}
		if want := map[bool]int{false: 3, true: 0}[only]; len(rep.Items) != want {
			t.Errorf("FailuresOnly %v: %d items, want %d", only, len(rep.Items), want)
		}
	}
}

// TestDefaultOptions: a rerun with DefaultOptions, as deref mirror's,
// fetches nothing unchanged; with the zero Options it fetches every file
// again, as the zero value's doc says.
func TestDefaultOptions(t *testing.T) {
	root := t.TempDir()
	makeTree(t, root, sample)
	src := serveFTP(t, root)
	dst := filepath.Join(t.TempDir(), "copy")
	run(t, src, dst, mirror.DefaultOptions())
	if rep := run(t, src, dst, mirror.DefaultOptions()); rep.New != 0 || rep.Updated != 0 || rep.Bytes != 0 {
		t.Errorf("a rerun with DefaultOptions: %+v", rep)
	}
	if rep := run(t, src, dst, mirror.Options{}); rep.Bytes == 0 {
		t.Errorf("a rerun with the zero Options fetched nothing: %+v", rep)
	}
}

// TestGopherRerunUnchanged: a plain Gopher menu gives no size or date, so
// a rerun fetches each file again; what comes holding the same bytes is
// unchanged, its copy left as it was (its time too), and a changed file
// is an update.
func TestGopherRerunUnchanged(t *testing.T) {
	root := t.TempDir()
	makeTree(t, root, map[string]string{"a.txt": "alpha\n", "b.bin": "\x00\x01", "sub/c.txt": "see\n"})
	gs := &gopherd.Server{Root: root}
	if err := gs.Start(); err != nil {
		t.Fatal(err)
	}
	defer gs.Close()
	src := "gopher://" + gs.Addr() + "/1/"
	dst := filepath.Join(t.TempDir(), "hole")
	if rep := run(t, src, dst, mirror.DefaultOptions()); rep.New != 3 {
		t.Fatalf("first run: %+v", rep)
	}
	then := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	os.Chtimes(filepath.Join(dst, "a.txt"), then, then)
	rep := run(t, src, dst, mirror.DefaultOptions())
	if rep.Unchanged != 3 || rep.Updated != 0 || rep.New != 0 {
		t.Errorf("a rerun with nothing changed: %+v", rep)
	}
	if st, _ := os.Stat(filepath.Join(dst, "a.txt")); !st.ModTime().Equal(then) {
		t.Errorf("an unchanged file was rewritten: its time is %v", st.ModTime())
	}
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("alpha, changed\n"), 0o644)
	if rep := run(t, src, dst, mirror.DefaultOptions()); rep.Updated != 1 || rep.Unchanged != 2 {
		t.Errorf("a rerun with a.txt changed: %+v", rep)
	}
	if got := readTree(t, dst)["a.txt"]; got != "alpha, changed\n" {
		t.Errorf("a.txt: %q", got)
	}
}
