package mirror_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	ftpserver "github.com/fclairamb/ftpserverlib"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/mirror"
	"github.com/urlderef/deref/internal/testserver/ftpd"
	"github.com/urlderef/deref/url"
)

func sha(s string) string { return fmt.Sprintf("%x", sha256.Sum256([]byte(s))) }

// Each file is checked against the nearest sums file that names it, as it
// arrives; a mismatch fails the file and leaves nothing under its name or
// its part name.
func TestMirrorChecksumFile(t *testing.T) {
	root := t.TempDir()
	makeTree(t, root, map[string]string{
		"a.txt":     "alpha\n",
		"c.txt":     "corrupted in transit\n",
		"free.txt":  "named by no sums file\n",
		"sub/b.txt": "beta\n",
		// The top file's line for sub/b.txt is wrong; the nearer one in
		// sub counts.
		"SHA256SUMS":     sha("alpha\n") + "  a.txt\n" + sha("the original\n") + " *c.txt\n" + sha("wrong") + "  sub/b.txt\n",
		"sub/SHA256SUMS": "SHA256 (b.txt) = " + sha("beta\n") + "\n",
	})
	src := serveFTP(t, root)
	dst := t.TempDir()
	rep := run(t, src, dst, mirror.Options{ChecksumFile: "SHA256SUMS"})
	if rep.New != 5 || rep.Failed != 1 {
		t.Errorf("report %+v", rep)
	}
	if err := rep.FirstError(); !errors.Is(err, fetch.ErrChecksum) || !strings.Contains(err.Error(), "c.txt") {
		t.Errorf("error %v", err)
	}
	got := readTree(t, dst)
	if _, ok := got["c.txt"]; ok {
		t.Error("c.txt kept")
	}
	if _, ok := got["c.txt.part"]; ok {
		t.Error("c.txt.part kept")
	}
	if got["sub/b.txt"] != "beta\n" || got["a.txt"] != "alpha\n" || got["free.txt"] == "" {
		t.Errorf("tree %v", got)
	}
}

// With OnlyNewer and Checksum, the server's digests decide: a file
// changed without a change of size or time is fetched, where size and
// time would keep it. A file the server gives no digest for is compared
// by size and time (ftpserverlib looks a name given to XSHA256 up from
// the root, not from the current folder: sub/c.txt has none); a server
// that cannot hash at all is noted once, and size and time decide there.
func TestMirrorOnlyNewerChecksum(t *testing.T) {
	root := t.TempDir()
	makeTree(t, root, map[string]string{"a.txt": "alpha\n", "b.txt": "bravo\n", "sub/c.txt": "charlie\n"})
	s, err := ftpd.Start(root, func(s *ftpserver.Settings) { s.EnableHASH = true })
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dst := t.TempDir()
	run(t, s.URL(), dst, mirror.Options{})
	// Same size, same time, other bytes: on the server, and locally.
	makeTree(t, root, map[string]string{"a.txt": "ALPHA\n"})
	makeTree(t, dst, map[string]string{"sub/c.txt": "CHARLIE\n"})

	rep := run(t, s.URL(), dst, mirror.Options{OnlyNewer: true})
	if rep.Updated != 0 || rep.Unchanged != 3 {
		t.Fatalf("by size and time: %+v", rep)
	}
	var mu sync.Mutex
	var reasons, notes []string
	events := func(ev mirror.Event) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case ev.Type == mirror.EventNote:
			notes = append(notes, ev.Reason)
		case ev.Type == mirror.EventDone && ev.Action == mirror.ActionUnchanged:
			reasons = append(reasons, ev.Path+": "+ev.Reason)
		}
	}
	rep = run(t, s.URL(), dst, mirror.Options{OnlyNewer: true, Checksum: true, Events: events})
	if rep.Updated != 1 || rep.Unchanged != 2 || len(notes) != 0 {
		t.Errorf("by digest: %+v, notes %q", rep, notes)
	}
	slices.Sort(reasons)
	if strings.Join(reasons, "|") != "b.txt: same sha256 digest|sub/c.txt: same size and time" {
		t.Errorf("unchanged: %q", reasons)
	}
	if got := readTree(t, dst); got["a.txt"] != "ALPHA\n" || got["sub/c.txt"] != "CHARLIE\n" {
		t.Errorf("tree %v", got)
	}

	// A server without digests.
	plain := serveFTP(t, root)
	notes, reasons = nil, nil
	rep = run(t, plain, dst, mirror.Options{OnlyNewer: true, Checksum: true, Events: events})
	if rep.Updated != 0 || rep.Unchanged != 3 || len(notes) != 1 || !strings.Contains(notes[0], "cannot tell digests") {
		t.Errorf("without digests: %+v, notes %q", rep, notes)
	}
}

// Files of at least SegmentMin come over Segments connections (FTP REST
// at each range's start; fewer where a range would be under 1 MiB),
// inside the destination; smaller ones over one.
func TestMirrorSegments(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 3<<16) // 3 MiB
	root := t.TempDir()
	makeTree(t, root, map[string]string{"big.bin": big, "sub/big2.bin": big[:5<<19], "small.txt": "small\n"})
	src := serveFTP(t, root)
	c := fetch.NewClient()
	var mu sync.Mutex
	var rest []string
	c.Trace = func(u *url.URL, ev fetch.TraceEvent) {
		if strings.HasPrefix(ev.Text, "REST ") {
			mu.Lock()
			rest = append(rest, u.Path+" "+ev.Text)
			mu.Unlock()
		}
	}
	dst := t.TempDir()
	rep, err := mirror.Run(context.Background(), c, src, dst, mirror.Options{Segments: 3, SegmentMin: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if rep.New != 3 || rep.Failed != 0 {
		t.Errorf("report %+v", rep)
	}
	got := readTree(t, dst)
	if got["big.bin"] != big || got["sub/big2.bin"] != big[:5<<19] || got["small.txt"] != "small\n" || len(got) != 3 {
		t.Errorf("tree of %d files", len(got))
	}
	slices.Sort(rest)
	if want := "/big.bin;type=i REST 1048576|/big.bin;type=i REST 2097152|/sub/big2.bin;type=i REST 1310720"; strings.Join(rest, "|") != want {
		t.Errorf("REST sent: %q", rest)
	}
}
