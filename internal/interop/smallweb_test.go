//go:build interop

package interop

import (
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/crawl"
	"github.com/urlderef/deref/fetch/mirror"
	"github.com/urlderef/deref/fetch/warc"
	"github.com/urlderef/deref/protocols/gemini"
	"github.com/urlderef/deref/url"
)

// geminiClient is a Client whose keys trusted on first use go to a file
// of the test's own.
func geminiClient(t *testing.T) *fetch.Client {
	c := client()
	c.Gemini.KnownHosts = filepath.Join(t.TempDir(), "known_hosts")
	return c
}

func getBody(t *testing.T, c *fetch.Client, raw string) (*fetch.Response, string, error) {
	t.Helper()
	resp, err := c.Get(context.Background(), raw)
	if err != nil {
		return nil, "", err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b), err
}

// molly-brown, Debian's Gemini server: its pages, files, redirect,
// input page and statuses; the key trusted on first use and refused
// once changed; sessions resumed across a capsule.
func TestMollyBrown(t *testing.T) {
	base := env(t, "DEREF_INTEROP_GEMINI")
	capsule := env(t, "DEREF_INTEROP_GEMINI_CAPSULE")
	c := geminiClient(t)
	resp, page, err := getBody(t, c, base+"/")
	if err != nil || resp.Kind != fetch.KindDirectory || !strings.HasPrefix(page, "# The interop capsule\n") {
		t.Fatalf("%v %+v", err, resp)
	}
	kinds := map[string]string{}
	for _, e := range resp.Entries {
		kinds[e.URL] = e.Kind.String()
	}
	if kinds[base+"/tree/"] != "directory" || kinds[base+"/hello.txt"] != "file" || len(resp.Entries) != 6 {
		t.Errorf("entries: %v", kinds)
	}
	if _, b, err := getBody(t, c, base+"/hello.txt"); err != nil || b != "Hello from molly-brown.\n" {
		t.Errorf("hello.txt: %q %v", b, err)
	}
	if _, b, err := getBody(t, c, base+"/old.txt"); err != nil || b != "Hello from molly-brown.\n" {
		t.Errorf("the redirect: %q %v", b, err)
	}
	want, _ := os.ReadFile(filepath.Join(capsule, "big.bin"))
	if _, b, err := getBody(t, c, base+"/big.bin"); err != nil || sha256.Sum256([]byte(b)) != sha256.Sum256(want) {
		t.Errorf("big.bin: %d bytes %v", len(b), err)
	}
	resp, _, err = getBody(t, c, base+"/cgi-bin/ask")
	if err != nil || resp.Kind != fetch.KindSearchIndex || resp.Prompt != "What is your name?" {
		t.Errorf("the input page: %v %+v", err, resp)
	}
	if _, b, err := getBody(t, c, base+"/cgi-bin/ask?Gus"); err != nil || b != "Hello, Gus.\n" {
		t.Errorf("answered: %q %v", b, err)
	}
	if _, _, err := getBody(t, c, base+"/nosuch"); !errors.Is(err, fetch.ErrNotFound) {
		t.Errorf("51: %v", err)
	}
	// molly-brown's own 53 for another host name than its own.
	if _, _, err := getBody(t, c, strings.Replace(base, "127.0.0.1", "localhost", 1)+"/"); !errors.Is(err, fetch.ErrPermission) {
		t.Errorf("53: %v", err)
	}
	full, resumed := c.Gemini.Handshakes()
	if full > 2 || resumed < 5 { // the first contact, and localhost's (another host)
		t.Errorf("%d full handshakes, %d resumed", full, resumed)
	}
	// A key other than the one pinned is refused, naming the line.
	b, _ := os.ReadFile(c.Gemini.KnownHosts)
	f := strings.Fields(string(b))
	os.WriteFile(c.Gemini.KnownHosts, []byte(f[0]+" sha256/"+strings.Repeat("0", 64)+" 2099-01-01T00:00:00Z\n"), 0o600)
	c2 := client()
	c2.Gemini.KnownHosts = c.Gemini.KnownHosts
	var kc *gemini.KeyChangedError
	if _, _, err := getBody(t, c2, base+"/"); !errors.As(err, &kc) || kc.Line != 1 {
		t.Errorf("a changed key: %v", err)
	}
}

// A capsule's tree mirrored from molly-brown's own folder listings,
// and crawled into WARC as the Gemini archivers record it.
func TestMollyBrownMirrorAndArchive(t *testing.T) {
	base := env(t, "DEREF_INTEROP_GEMINI")
	capsule := env(t, "DEREF_INTEROP_GEMINI_CAPSULE")
	dst := t.TempDir()
	rep, err := mirror.Run(context.Background(), geminiClient(t), base+"/tree/", dst, mirror.Options{})
	if err != nil || rep.Failed != 0 {
		t.Fatalf("%v %+v", err, rep)
	}
	for _, rel := range []string{"top.txt", "a/one.txt", "a/b/deep.txt", "c/two.txt"} {
		want, _ := os.ReadFile(filepath.Join(capsule, "tree", rel))
		if got, err := os.ReadFile(filepath.Join(dst, rel)); err != nil || string(got) != string(want) {
			t.Errorf("%s: %q %v", rel, got, err)
		}
	}
	dir := t.TempDir()
	w, err := warc.Create(filepath.Join(dir, "capsule"), warc.Options{Software: "deref/interop", CDX: true})
	if err != nil {
		t.Fatal(err)
	}
	c := geminiClient(t)
	c.Recorder = &warc.Recorder{W: w}
	crep, err := crawl.Run(context.Background(), c, []string{base + "/"}, crawl.Options{})
	if err != nil || crep.Failed != 0 || crep.Fetched < 14 {
		t.Fatalf("crawl: %v %+v", err, crep)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	a, err := warc.Open(filepath.Join(dir, "capsule.warc.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	caps := a.Captures(base + "/hello.txt")
	// The first; the redirect of old.txt to it adds a revisit.
	if len(caps) == 0 || caps[0].Type != "response" || caps[0].Status != "20" || caps[0].Mime != "text/plain" || caps[0].Protocol != "gemini,tls/1.3" {
		t.Fatalf("hello.txt's capture: %+v", caps)
	}
	p, err := a.Open(caps[0])
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(p)
	p.Close()
	if string(b) != "Hello from molly-brown.\n" {
		t.Errorf("the payload: %q", b)
	}
	// molly-brown's "up" links have no closing slash: each costs a 31 to
	// a folder already fetched, recorded again as a revisit.
	if u := url.MustParse(base + "/tree/a/"); len(a.Captures(u.String())) == 0 {
		t.Errorf("the crawl did not reach %s", u)
	}
}

// fingerd (netkit), run by socat as inetd runs it: a user's plan, who is
// on, an unknown user; forwarding refused before anything is sent.
func TestFingerd(t *testing.T) {
	base := env(t, "DEREF_INTEROP_FINGER")
	c := client()
	for u, want := range map[string]string{
		base + "/gus":      "Plan:\r\nTo fly the next capsule.\r\n",
		base + "//W%20gus": "Name: Gus Grissom",
		base + "/":         "No one logged on.",
		base + "/nosuch":   "no such user",
	} {
		_, b, err := getBody(t, c, u)
		if err != nil || !strings.Contains(b, want) {
			t.Errorf("%s: %q %v", u, b, err)
		}
	}
	if _, _, err := getBody(t, c, base+"/gus@127.0.0.1"); !errors.Is(err, fetch.ErrPermission) {
		t.Errorf("forwarding: %v", err)
	}
}

// On a terminal, deref asks molly-brown's question and fetches the
// answer (its CGI input page, in a tmux terminal).
func TestMollyBrownQuestionOnTerminal(t *testing.T) {
	base := env(t, "DEREF_INTEROP_GEMINI")
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is not installed")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "deref")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/deref").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	script := bin + " --known-hosts " + filepath.Join(dir, "known_hosts") + " " + base + "/cgi-bin/ask; echo ASKED-OVER; sleep 30"
	exec.Command("tmux", "-L", "deref-interop", "kill-server").Run()
	tmux(t, "new-session", "-d", "-s", "deref", "-x", "120", "-y", "40", "sh", "-c", script)
	defer exec.Command("tmux", "-L", "deref-interop", "kill-server").Run()
	waitPane(t, "What is your name?")
	tmux(t, "send-keys", "-t", "deref", "Gus", "Enter")
	screen := waitPane(t, "ASKED-OVER")
	if !strings.Contains(screen, "Hello, Gus.") {
		t.Errorf("the answer's page did not come:\n%s", screen)
	}
}
