package fetch_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	nethttp "net/http"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/crawl"
	"github.com/urlderef/deref/fetch/gateway"
	"github.com/urlderef/deref/fetch/mirror"
	"github.com/urlderef/deref/fetch/warc"
	"github.com/urlderef/deref/internal/testserver/prosperod"
	"github.com/urlderef/deref/protocols/prospero"
	"github.com/urlderef/deref/url"
)

// prosperoTree serves the notes' fixture tree on 127.0.0.1, its AFTP
// access methods naming aftp (HOST(PORT)) when it is set.
func prosperoTree(t *testing.T, aftp string) *prosperod.Server {
	t.Helper()
	s := &prosperod.Server{AFTPHost: aftp}
	startOrFail(t, s.Start, s.Close)
	return s
}

// prospero: URLs get everything the table gives with no line of the
// engine, the crawl, the WARC writer, the mirror or the gateway naming
// the scheme: crawled and archived (the conversation beside each
// object), mirrored (a rerun fetches nothing), served by the gateway,
// replayed with links kept in the archive, walked by NewFS and fetched
// by an http.Client through NewTransport.
func TestProsperoEverywhere(t *testing.T) {
	s := prosperoTree(t, "")
	files := prosperod.Fixture()
	ctx := context.Background()
	dir := t.TempDir()
	top := "prospero://" + s.Addr() + "/AFTP/pub/docs"

	w, err := warc.Create(filepath.Join(dir, "p"), warc.Options{Software: "deref/test", CDX: true})
	if err != nil {
		t.Fatal(err)
	}
	c := newClient()
	c.Recorder = &warc.Recorder{W: w}
	rep, err := crawl.Run(ctx, c, []string{top}, crawl.Options{OutputDir: filepath.Join(dir, "out")})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if rep.Fetched != 4 || rep.Failed != 0 {
		t.Fatalf("crawl: %+v", rep)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "out", s.Addr(), "AFTP", "pub", "docs", "nested", "deep.txt")); string(b) != files["ftp/pub/docs/nested/deep.txt"] {
		t.Errorf("crawled deep.txt: %q", b)
	}
	a, err := warc.Open(filepath.Join(dir, "p.warc.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	caps := a.Captures(top + "/readme.txt")
	if len(caps) != 1 || caps[0].Protocol != "prospero" || caps[0].Type != "resource" {
		t.Fatalf("captures of readme.txt: %+v", caps)
	}
	conv, err := a.Related(caps[0], "text/x-prospero-conversation")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(conv)
	conv.Close()
	if !strings.Contains(string(b), "> GET-OBJECT-INFO CONTENTS ASCII 'AFTP/pub/docs/readme.txt' 0\r\n") || strings.Contains(string(b), "The docs folder") {
		t.Errorf("conversation:\n%s", b)
	}
	if dc := a.Captures(top); len(dc) != 1 || dc[0].Mime != prospero.ListingType {
		t.Errorf("the folder's capture: %+v", dc)
	}

	// Mirrored, and a rerun fetches nothing unchanged.
	dst := filepath.Join(dir, "mirror")
	for i, want := range []mirror.Report{{New: 156}, {Unchanged: 156}} {
		mrep, err := mirror.Run(ctx, newClient(), "prospero://"+s.Addr()+"/AFTP/pub", dst, mirror.Options{})
		if err != nil || mrep.New != want.New || mrep.Unchanged != want.Unchanged || mrep.Failed != 0 {
			t.Fatalf("mirror run %d: %v: %d new, %d unchanged, %d failed", i+1, err, mrep.New, mrep.Unchanged, mrep.Failed)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "it's here.txt")); string(b) != files["ftp/pub/it's here.txt"] {
		t.Errorf("mirrored: %q", b)
	}

	// Served by the gateway: a folder's page links its entries through the
	// gateway and has no parent link (a name has no parent); a file as it
	// is; a range of it.
	live := httptest.NewServer(gateway.Handler(newClient(), gateway.Options{AllowPrivate: true}))
	defer live.Close()
	path := "/prospero/" + s.Addr() + "/AFTP/pub/docs"
	code, page := httpGet(t, live.URL+path, "")
	if code != 200 || !strings.Contains(page, `href="`+path+`/readme.txt"`) || !strings.Contains(page, `href="`+path+`/nested"`) || strings.Contains(page, `href="/prospero/`+s.Addr()+`/AFTP/pub/"`) {
		t.Errorf("gateway listing: %d\n%s", code, page)
	}
	if code, got := httpGet(t, live.URL+path+"/readme.txt", "bytes=4-7"); code != 206 || got != "docs" {
		t.Errorf("gateway range: %d %q", code, got)
	}

	// Replayed: the listing's links stay in the archive.
	replay := httptest.NewServer(gateway.Archive(map[string]*warc.Archive{"p": a}, gateway.Options{Schemes: newClient()}))
	defer replay.Close()
	ts := a.Captures(top)[0].Timestamp()
	code, page = httpGet(t, replay.URL+"/p/"+ts+"/"+top, "")
	if code != 200 || !strings.Contains(page, "/p/"+ts+"/"+top+"/readme.txt") {
		t.Errorf("replayed listing: %d\n%s", code, page)
	}

	// Walked as a file system.
	fsys, err := fetch.NewFS(ctx, newClient(), top)
	if err != nil {
		t.Fatal(err)
	}
	var walked []string
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		walked = append(walked, p)
		return err
	})
	sort.Strings(walked)
	if err != nil || strings.Join(walked, " ") != ". nested nested/deep.txt readme.txt" {
		t.Errorf("walked: %v %q", err, walked)
	}
	if b, err := fs.ReadFile(fsys, "nested/deep.txt"); err != nil || string(b) != files["ftp/pub/docs/nested/deep.txt"] {
		t.Errorf("read: %v %q", err, b)
	}

	// Through net/http.
	tr := &nethttp.Transport{}
	tr.RegisterProtocol("prospero", fetch.NewTransport(newClient()))
	resp, err := (&nethttp.Client{Transport: tr}).Get(top + "/readme.txt")
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != files["ftp/pub/docs/readme.txt"] || resp.ContentLength != 17 {
		t.Errorf("net/http: %d %q %d", resp.StatusCode, b, resp.ContentLength)
	}
}

// A file reachable both in-band and through its AFTP access method (an
// FTP server serving the same area) is the same octets both ways; the
// way is the size's: in-band up to Client.Prospero.InBandMax.
func TestProsperoBothWays(t *testing.T) {
	root := t.TempDir()
	files := prosperod.Fixture()
	for name, content := range files {
		if rest, ok := strings.CutPrefix(name, "ftp/"); ok {
			os.MkdirAll(filepath.Join(root, filepath.Dir(rest)), 0o755)
			os.WriteFile(filepath.Join(root, rest), []byte(content), 0o644)
		}
	}
	f := serveFTP(t, root)
	_, port, _ := strings.Cut(f.Addr(), ":")
	s := prosperoTree(t, "127.0.0.1("+port+")")
	for _, name := range []string{"bytes.bin", "big.txt", "it%27s%20here.txt"} {
		var got [2]string
		var via [2][]string
		for i, max := range []int64{0, 1} {
			c := newClient()
			c.Prospero.InBandMax = max
			var redirects []string
			resp, err := c.FetchWith(context.Background(), url.MustParse("prospero://"+s.Addr()+"/AFTP/pub/"+name), fetch.FetchOptions{Redirect: func(from, to *url.URL) { redirects = append(redirects, to.String()) }})
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			got[i], via[i] = string(b), redirects
		}
		if got[0] != got[1] || got[0] != files["ftp/pub/"+strings.ReplaceAll(strings.ReplaceAll(name, "%27", "'"), "%20", " ")] {
			t.Errorf("%s: in-band and AFTP differ (%d and %d bytes)", name, len(got[0]), len(got[1]))
		}
		if len(via[0]) != 0 || len(via[1]) != 1 || !strings.HasPrefix(via[1][0], "ftp://127.0.0.1:"+port+"/pub/") {
			t.Errorf("%s: ways %q and %q", name, via[0], via[1])
		}
	}
}

// FORWARDED is a redirect: followed to the server it names, under the
// redirect rules (a loop ends, and --proto-redir can refuse it).
func TestProsperoForwarded(t *testing.T) {
	b := prosperoTree(t, "")
	host, port, _ := strings.Cut(b.Addr(), ":")
	fwd := func(to string) *prosperod.Server {
		s := &prosperod.Server{Reply: func(req string) (string, bool) {
			return "FORWARDED INTERNET-D " + to + " ASCII 'AFTP/pub/hello.txt' 0\n", true
		}}
		startOrFail(t, s.Start, s.Close)
		return s
	}
	a := fwd(host + "(" + port + ")")
	if got, err := body(t, newClient(), "prospero://"+a.Addr()+"/AFTP/old/hello.txt"); err != nil || got != "Hello from the Prospero server.\n" {
		t.Errorf("forwarded: %q %v", got, err)
	}
	c := newClient()
	c.RedirectOnly = []string{"ftp"}
	if _, err := c.Get(context.Background(), "prospero://"+a.Addr()+"/AFTP/old/hello.txt"); !errors.Is(err, fetch.ErrRedirect) {
		t.Errorf("refused by the rules: %v", err)
	}
	loop := &prosperod.Server{}
	loop.Reply = func(string) (string, bool) {
		h, p, _ := strings.Cut(loop.Addr(), ":")
		return "FORWARDED INTERNET-D " + h + "(" + p + ") ASCII 'AFTP/again' 0\n", true
	}
	startOrFail(t, loop.Start, loop.Close)
	if _, err := newClient().Get(context.Background(), "prospero://"+loop.Addr()+"/AFTP/x"); !errors.Is(err, fetch.ErrRedirect) {
		t.Errorf("a loop: %v", err)
	}
}
