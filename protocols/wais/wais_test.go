package wais_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/urlderef/deref/internal/testserver/waisd"
	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/protocols/wais"
	"github.com/urlderef/deref/url"
)

func start(t *testing.T) *waisd.Server {
	t.Helper()
	s := waisd.New()
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

type traced struct{ lines []string }

func (tr *traced) add(e protocols.TraceEvent) { tr.lines = append(tr.lines, e.Text) }

func fetch(t *testing.T, f *wais.Fetcher, raw string, offset int64) (*protocols.Response, error) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return f.Fetch(context.Background(), &protocols.Request{URL: u, Offset: offset})
}

func readAll(t *testing.T, r *protocols.Response) string {
	t.Helper()
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDatabaseFormIsAnIndex(t *testing.T) {
	s := start(t)
	r, err := fetch(t, &wais.Fetcher{}, "wais://"+s.Addr()+"/test", 0)
	if err != nil {
		t.Fatal(err)
	}
	if r.Kind != protocols.KindSearchIndex || !strings.Contains(r.Note, "wais://"+s.Addr()+"/test?words") {
		t.Errorf("kind %v, note %q", r.Kind, r.Note)
	}
	if s.Requests() != 0 {
		t.Errorf("%d requests sent for the database form", s.Requests())
	}
}

// The hits of the captured search, with the document URLs of notes §12.3
// (host and port of the URL searched) and the rendering of §14.
func TestSearch(t *testing.T) {
	s := start(t)
	base := "wais://" + s.Addr()
	r, err := fetch(t, &wais.Fetcher{}, base+"/test?gophers", 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []protocols.Entry{
		{Kind: protocols.KindFile, Name: "alpha.txt   /srv/wais/docs/", Size: 127, Type: "TEXT", Score: 191, Lines: 3,
			URL: base + "/test/TEXT/127/1=localhost%3A2110;2=/srv/wais/idx/test;3=0%20127%20/srv/wais/docs/alpha.txt;4=localhost%3A2110;5=/srv/wais/idx/test;6=0%20127%20/srv/wais/docs/alpha.txt;7=%00;"},
		{Kind: protocols.KindFile, Name: "gamma.txt   /srv/wais/docs/", Size: 12842, Type: "TEXT", Score: 88, Lines: 201,
			URL: base + "/test/TEXT/12842/1=localhost%3A2110;2=/srv/wais/idx/test;3=0%2012842%20/srv/wais/docs/gamma.txt;4=localhost%3A2110;5=/srv/wais/idx/test;6=0%2012842%20/srv/wais/docs/gamma.txt;7=%00;"},
	}
	if r.Kind != protocols.KindDirectory || len(r.Entries) != 2 {
		t.Fatalf("kind %v, %d entries", r.Kind, len(r.Entries))
	}
	for i, e := range want {
		if r.Entries[i] != e {
			t.Errorf("entry %d\n got %+v\nwant %+v", i, r.Entries[i], e)
		}
	}
	text := readAll(t, r)
	wantText := fmt.Sprintf("WAIS search of \"gophers\" in test at %s: 2 documents\n(score is relative to this search; best first)\n\n"+
		" 1. alpha.txt   /srv/wais/docs/\n      score 191   3 lines   127 bytes   TEXT\n      %s\n"+
		" 2. gamma.txt   /srv/wais/docs/\n      score 88   201 lines   12842 bytes   TEXT\n      %s\n", s.Addr(), want[0].URL, want[1].URL)
	if text != wantText {
		t.Errorf("rendering\n%s\nwant\n%s", text, wantText)
	}
	// Every hit can be fetched by the URL printed.
	for i, sum := range []string{"ff2ff3cda292abe2ae98f22d290aabd5f30e3065fe660dca5da18d2385485a32", "f7b29093201a141db529dd35930d3a5f47330bad498d2a6c73be4b70cc03d5ce"} {
		d, err := fetch(t, &wais.Fetcher{}, r.Entries[i].URL, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%x", sha256.Sum256([]byte(readAll(t, d)))); got != sum {
			t.Errorf("hit %d: sha256 %s", i, got)
		}
	}
}

func TestSearchWordsDecoded(t *testing.T) {
	s := start(t)
	r, err := fetch(t, &wais.Fetcher{}, "wais://"+s.Addr()+"/test?gopher+protocol", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Entries) != 1 || r.Entries[0].Score != 669 {
		t.Errorf("%+v", r.Entries)
	}
	r.Body.Close()
}

// A search that finds nothing is reported as such, with the catalog's URL,
// and the catalog can be fetched.
func TestNoMatch(t *testing.T) {
	s := start(t)
	r, err := fetch(t, &wais.Fetcher{}, "wais://"+s.Addr()+"/test?zebra", 0)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	catalog := "wais://" + s.Addr() + "/test/TEXT/357/2=test;3=0%200%20/srv/wais/idx/test.cat;7=%00;"
	if r.Note != "no documents matched; the database's catalog is "+catalog {
		t.Errorf("note %q", r.Note)
	}
	c, err := fetch(t, &wais.Fetcher{}, catalog, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, c); got != waisd.Catalog {
		t.Errorf("catalog %q", got)
	}
}

func TestUnknownDatabase(t *testing.T) {
	s := start(t)
	_, err := fetch(t, &wais.Fetcher{}, "wais://"+s.Addr()+"/nosuchdb?gophers", 0)
	if !errors.Is(err, protocols.ErrNotFound) || !strings.Contains(err.Error(), "The following database is not available: /srv/wais/idx/nosuchdb") {
		t.Errorf("%v", err)
	}
}

// Documents are fetched in 10000-byte slices: with the length of the
// four-segment form, exactly the slices it covers; without it, until the
// server signals the end.
func TestRetrieveSlices(t *testing.T) {
	s := start(t)
	gamma := "1=localhost%3A2110;2=/srv/wais/idx/test;3=0%2012842%20/srv/wais/docs/gamma.txt;4=localhost%3A2110;5=/srv/wais/idx/test;6=0%2012842%20/srv/wais/docs/gamma.txt;7=%00;"
	for _, tc := range []struct {
		path     string
		size     int64
		requests int
	}{
		{"/test/TEXT/12842/" + gamma, 12842, 3}, // Init, [0,10000), [10000,12842)
		{"/test/TEXT/" + gamma, -1, 3},          // Init, [0,10000), [10000,20000) with SF
	} {
		before := s.Requests()
		tr := &traced{}
		u := url.MustParse("wais://" + s.Addr() + tc.path)
		r, err := (&wais.Fetcher{}).Fetch(context.Background(), &protocols.Request{URL: u, Trace: tr.add})
		if err != nil {
			t.Fatal(err)
		}
		if r.Size != tc.size || r.MediaType != "text/plain" || r.Name != "gamma.txt" {
			t.Errorf("size %d, type %s, name %s", r.Size, r.MediaType, r.Name)
		}
		if got := readAll(t, r); got != waisd.Gamma() {
			t.Errorf("%s: %d bytes, not gamma.txt", tc.path, len(got))
		}
		if n := s.Requests() - before; n != tc.requests {
			t.Errorf("%s: %d requests, want %d\n%s", tc.path, n, tc.requests, strings.Join(tr.lines, "\n"))
		}
	}
}

// A document of exactly one slice, without a length: the second slice
// starts at the end and gets an empty text and SF.
func TestRetrieveExactSlice(t *testing.T) {
	s := start(t)
	s.Add("ten.txt", strings.Repeat("0123456789", 1000))
	r, err := fetch(t, &wais.Fetcher{}, "wais://"+s.Addr()+"/test/TEXT/3=0%2010000%20/srv/wais/docs/ten.txt;2=x;", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, r); len(got) != 10000 {
		t.Errorf("%d bytes", len(got))
	}
}

func TestResume(t *testing.T) {
	s := start(t)
	alpha := "/test/TEXT/127/1=localhost%3A2110;2=/srv/wais/idx/test;3=0%20127%20/srv/wais/docs/alpha.txt;7=%00;"
	r, err := fetch(t, &wais.Fetcher{}, "wais://"+s.Addr()+alpha, 100)
	if err != nil {
		t.Fatal(err)
	}
	if r.Offset != 100 || r.Size != 27 {
		t.Errorf("offset %d size %d", r.Offset, r.Size)
	}
	if got := readAll(t, r); got != waisd.Alpha[100:] {
		t.Errorf("%q", got)
	}
	r, err = fetch(t, &wais.Fetcher{}, "wais://"+s.Addr()+alpha, 127)
	if err != nil || readAll(t, r) != "" {
		t.Errorf("at the end: %v", err)
	}
	if _, err := fetch(t, &wais.Fetcher{}, "wais://"+s.Addr()+alpha, 128); !errors.Is(err, protocols.ErrRangeNotSatisfied) {
		t.Errorf("beyond the end: %v", err)
	}
}

func TestMissingDocument(t *testing.T) {
	s := start(t)
	_, err := fetch(t, &wais.Fetcher{}, "wais://"+s.Addr()+"/test/TEXT/2=test;3=0%2010%20/srv/wais/docs/nothere.txt;7=%00;", 0)
	if !errors.Is(err, protocols.ErrNotFound) || !strings.Contains(err.Error(), "Diagnostic SF: Request out of range") {
		t.Errorf("%v", err)
	}
}

func TestBadURLs(t *testing.T) {
	for _, raw := range []string{
		"wais://h/test/TEXT/1=abc",   // no ";"
		"wais://h/test/TEXT/1=a%zz;", // bad escape
		"wais://h/te%0Ast?gophers",   // LF in the database
		"wais://h/test?go%0Dphers",   // CR in the search
		"wais://h/test/TEXT",         // no wpath
		"wais://h/test/x?gophers",    // search with more than the database
		"wais://h//TEXT/1=a;",        // empty database
	} {
		u, err := url.Parse(raw)
		if err != nil {
			continue
		}
		if _, err := (&wais.Fetcher{}).Fetch(context.Background(), &protocols.Request{URL: u}); !errors.Is(err, protocols.ErrBadURL) {
			t.Errorf("%s: %v", raw, err)
		}
	}
}

// Faults scripted as the real server misbehaves (§13, §17.5): each ends
// in an error naming the step, never a hang or a panic.
func TestFaults(t *testing.T) {
	for _, tc := range []struct {
		fault waisd.Fault
		kind  error
		text  string
	}{
		{waisd.CloseFault, protocols.ErrProtocol, "wais search: server closed the connection without replying"},
		{waisd.TruncFault, protocols.ErrProtocol, "wais search: connection closed after"},
		{waisd.LengthFault, protocols.ErrProtocol, "exceeds the limit"},
		{waisd.StallFault, protocols.ErrTimeout, "wais search"},
		{waisd.GarbageFault, protocols.ErrProtocol, "malformed SearchResponse"},
		{waisd.EmptyFault, protocols.ErrProtocol, "server sent an empty reply"},
	} {
		s := start(t)
		s.Fault, s.FaultAfter = tc.fault, 1 // the Init is answered
		f := &wais.Fetcher{ReplyTimeout: 200 * time.Millisecond}
		_, err := fetch(t, f, "wais://"+s.Addr()+"/test?gophers", 0)
		if !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.text) {
			t.Errorf("fault %d: %v", tc.fault, err)
		}
	}
}

// A connection lost in the middle of a document is an error after the
// slices that arrived, never a short document.
func TestFaultMidDocument(t *testing.T) {
	s := start(t)
	s.Fault, s.FaultAfter = waisd.CloseFault, 2 // Init and the first slice
	gamma := "/test/TEXT/12842/3=0%2012842%20/srv/wais/docs/gamma.txt;2=x;"
	r, err := fetch(t, &wais.Fetcher{}, "wais://"+s.Addr()+gamma, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, err := io.ReadAll(r.Body)
	if len(b) != 10000 || !errors.Is(err, protocols.ErrProtocol) || !strings.Contains(err.Error(), "retrieve slice 2") {
		t.Errorf("%d bytes, %v", len(b), err)
	}
}

func TestCancel(t *testing.T) {
	s := start(t)
	s.Fault = waisd.StallFault
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	u := url.MustParse("wais://" + s.Addr() + "/test?gophers")
	t0 := time.Now()
	_, err := (&wais.Fetcher{}).Fetch(ctx, &protocols.Request{URL: u})
	if !errors.Is(err, context.Canceled) || time.Since(t0) > 5*time.Second {
		t.Errorf("%v after %v", err, time.Since(t0))
	}
}

func TestTrace(t *testing.T) {
	s := start(t)
	tr := &traced{}
	u := url.MustParse("wais://" + s.Addr() + "/test?gophers")
	r, err := (&wais.Fetcher{}).Fetch(context.Background(), &protocols.Request{URL: u, Trace: tr.add})
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	want := []string{"connecting to " + s.Addr(), "Init (44 bytes)", "InitResponse: accepted", `Search "gophers" in test (66 bytes)`, "SearchResponse: 2 documents, 0 diagnostics"}
	if strings.Join(tr.lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("trace\n%s", strings.Join(tr.lines, "\n"))
	}
}

// Without Init, as lynx did: the server answers the search directly.
func TestNoInit(t *testing.T) {
	s := start(t)
	r, err := fetch(t, &wais.Fetcher{NoInit: true}, "wais://"+s.Addr()+"/test?retrieval", 0)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if len(r.Entries) != 1 || r.Entries[0].Score != 177 || s.Requests() != 1 {
		t.Errorf("%+v after %d requests", r.Entries, s.Requests())
	}
}
