package fetch_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/crawl"
	"github.com/urlderef/deref/fetch/gateway"
	"github.com/urlderef/deref/fetch/mirror"
	"github.com/urlderef/deref/fetch/warc"
	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// wireMem is memFetcher with a wire form for its listings, a line per
// entry ("d NAME" or "f NAME SIZE"), which it also reads back from an
// archive (protocols.Replayer): what a protocol's package provides.
type wireMem struct{ memFetcher }

func (m wireMem) Fetch(ctx context.Context, req *protocols.Request) (*protocols.Response, error) {
	resp, err := m.memFetcher.Fetch(ctx, req)
	if err != nil || resp.Kind != protocols.KindDirectory {
		return resp, err
	}
	var b strings.Builder
	for _, e := range resp.Entries {
		if e.Kind == protocols.KindDirectory {
			fmt.Fprintf(&b, "d %s\n", e.Name)
		} else {
			fmt.Fprintf(&b, "f %s %d\n", e.Name, e.Size)
		}
	}
	resp.Body, resp.MediaType = io.NopCloser(strings.NewReader(b.String())), "text/x-mem-listing"
	return resp, nil
}

func (wireMem) Replay(u *url.URL, _ string, at time.Time, payload io.ReadCloser, max int64) (*protocols.Response, error) {
	defer payload.Close()
	b, err := io.ReadAll(io.LimitReader(payload, max))
	if err != nil {
		return nil, err
	}
	resp := &protocols.Response{Kind: protocols.KindDirectory, Size: -1, ModTime: at, Body: io.NopCloser(strings.NewReader(""))}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		e := protocols.Entry{Kind: protocols.KindFile, Name: f[1], URL: u.String() + f[1]}
		if f[0] == "d" {
			e.Kind, e.Size, e.URL = protocols.KindDirectory, -1, e.URL+"/"
		} else if len(f) == 3 {
			e.Size, _ = strconv.ParseInt(f[2], 10, 64)
		}
		resp.Entries = append(resp.Entries, e)
	}
	return resp, nil
}

func (wireMem) ReplayFrom(*url.URL) protocols.ReplaySource { return protocols.ReplaySource{} }

// A scheme made up here, described by its table row alone (a Fetcher
// and its optional interfaces, the kind of tree it has, what its records
// are called), is crawled,
// archived, mirrored, served by the gateway and replayed from the
// archive, with no line of the engine, the crawl, the WARC writer or the
// gateway taught about it.
func TestMadeUpSchemeEverywhere(t *testing.T) {
	files := map[string]string{"a.txt": "alpha\n", "sub/b.txt": "bravo\n", "sub/deep/c.txt": "charlie\n"}
	row := fetch.Scheme{Name: "mem", Fetcher: wireMem{memFetcher{files}}, Tree: protocols.TreeListing, WARCProtocol: "mem", Ranges: true}
	newMem := func() *fetch.Client {
		c := newClient()
		c.Register(row)
		return c
	}
	ctx := context.Background()
	dir := t.TempDir()

	// Crawled and archived.
	w, err := warc.Create(filepath.Join(dir, "mem"), warc.Options{Software: "deref/test", CDX: true})
	if err != nil {
		t.Fatal(err)
	}
	c := newMem()
	c.Recorder = &warc.Recorder{W: w}
	out := filepath.Join(dir, "out")
	rep, err := crawl.Run(ctx, c, []string{"mem://tree/"}, crawl.Options{OutputDir: out})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// The root, sub/, sub/deep/ and the three files.
	if rep.Fetched != 6 || rep.Failed != 0 {
		t.Fatalf("crawl: %+v", rep)
	}
	for name, content := range files {
		if b, err := os.ReadFile(filepath.Join(out, "tree", filepath.FromSlash(name))); string(b) != content {
			t.Errorf("crawled %s: %q %v", name, b, err)
		}
	}
	a, err := warc.Open(filepath.Join(dir, "mem.warc.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for _, u := range []string{"mem://tree/", "mem://tree/sub/", "mem://tree/a.txt", "mem://tree/sub/deep/c.txt"} {
		if len(a.Captures(u)) != 1 {
			t.Errorf("%s: %d captures", u, len(a.Captures(u)))
		}
	}
	bc := a.Captures("mem://tree/sub/b.txt")
	if len(bc) != 1 || bc[0].Type != "resource" || bc[0].Protocol != "mem" {
		t.Fatalf("capture of b.txt: %+v", bc)
	}
	p, err := a.Open(bc[0])
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(p); string(b) != "bravo\n" {
		t.Errorf("recorded b.txt: %q", b)
	}
	p.Close()
	if p, err = a.Open(a.Captures("mem://tree/sub/")[0]); err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(p); string(b) != "f b.txt 6\nd deep\n" {
		t.Errorf("recorded listing: %q", b) // the protocol's own bytes
	}
	p.Close()

	// Mirrored.
	dst := filepath.Join(dir, "mirror")
	mrep, err := mirror.Run(ctx, newMem(), "mem://tree/sub/", dst, mirror.Options{})
	if err != nil || mrep.New != 2 || mrep.Failed != 0 {
		t.Fatalf("mirror: %v %+v", err, mrep)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "deep", "c.txt")); string(b) != "charlie\n" {
		t.Errorf("mirrored c.txt: %q", b)
	}

	// Served by the gateway: the listing as a page linking its entries
	// through the gateway, a file as it is, a range of it.
	live := httptest.NewServer(gateway.Handler(newMem(), gateway.Options{}))
	defer live.Close()
	code, page := httpGet(t, live.URL+"/mem/tree/sub/", "")
	if code != 200 || !strings.Contains(page, `href="/mem/tree/sub/b.txt"`) || !strings.Contains(page, `href="/mem/tree/sub/deep/"`) {
		t.Errorf("gateway listing: %d\n%s", code, page)
	}
	if code, front := httpGet(t, live.URL+"/", ""); code != 200 || !strings.Contains(front, "gopher, mem, news") {
		t.Errorf("gateway front page: %d, the schemes it names not from the table\n%s", code, front)
	}
	if code, got := httpGet(t, live.URL+"/mem/tree/sub/b.txt", ""); code != 200 || got != "bravo\n" {
		t.Errorf("gateway file: %d %q", code, got)
	}
	if code, got := httpGet(t, live.URL+"/mem/tree/sub/deep/c.txt", "bytes=2-4"); code != 206 || got != "arl" {
		t.Errorf("gateway range: %d %q", code, got)
	}

	// Replayed from the archive: the listing with its links kept inside
	// the archive, the file's bytes as recorded.
	replay := httptest.NewServer(gateway.Archive(map[string]*warc.Archive{"m": a}, gateway.Options{Schemes: newMem()}))
	defer replay.Close()
	ts := a.Captures("mem://tree/sub/")[0].Timestamp()
	code, page = httpGet(t, replay.URL+"/m/"+ts+"/mem://tree/sub/", "")
	if code != 200 || !strings.Contains(page, "/m/"+ts+"/mem://tree/sub/b.txt") {
		t.Errorf("replayed listing: %d\n%s", code, page)
	}
	ts = a.Captures("mem://tree/sub/b.txt")[0].Timestamp()
	if code, got := httpGet(t, replay.URL+"/m/"+ts+"id_/mem://tree/sub/b.txt", ""); code != 200 || got != "bravo\n" {
		t.Errorf("replayed file: %d %q", code, got)
	}
}

// httpGet gets u (with a Range header when rng is set) and returns the
// status and the body.
func httpGet(t *testing.T, u, rng string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rng != "" {
		req.Header.Set("Range", rng)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}
