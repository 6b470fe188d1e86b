// Command tour starts small servers on 127.0.0.1, one per scheme deref
// speaks, and dereferences a URL of each with the fetch library, printing
// what came back. It needs no network beyond loopback:
//
//	go run ./examples/tour
//
// With -serve it keeps the servers running instead, and prints a deref
// command for a URL of each scheme to try, until interrupted:
//
//	go run ./examples/tour -serve
//
// Each stop is one function in stops below; a protocol adds its own.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	ftpserver "github.com/fclairamb/ftpserverlib"
	"github.com/spf13/afero"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/mirror"
	"github.com/urlderef/deref/internal/testserver/geminid"
	"github.com/urlderef/deref/internal/testserver/gopherd"
	"github.com/urlderef/deref/internal/testserver/nntpd"
	"github.com/urlderef/deref/internal/testserver/prosperod"
	"github.com/urlderef/deref/internal/testserver/telnetd"
	"github.com/urlderef/deref/internal/testserver/waisd"
	"github.com/urlderef/deref/protocols/mail"
	"github.com/urlderef/deref/protocols/telnet"
	"github.com/urlderef/deref/url"
)

// stop is one scheme of the tour: it starts what it needs and returns the
// URLs to dereference, and a function to stop its servers.
type stop struct {
	name  string
	start func(t *tour) ([]string, func(), error)
}

var stops = []stop{
	{"file", startFile},
	{"http", startHTTP},
	{"https", startHTTPS},
	{"ftp", startFTP},
	{"gopher", startGopher},
	{"news", startNews},
	{"wais", startWAIS},
	{"prospero", startProspero},
	{"gemini", startGemini},
	{"telnet", startTelnet},
	{"mid", startMail},
	{"mirror", startMirror},
}

type tour struct {
	dir    string // the bundled tree, generated
	client *fetch.Client
}

func main() {
	serve := flag.Bool("serve", false, "keep the servers running and print a URL of each scheme to try with deref")
	flag.Parse()
	dir, err := os.MkdirTemp("", "deref-tour")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	if err := writeTree(dir); err != nil {
		fail(err)
	}
	t := &tour{dir: dir, client: fetch.NewClient()}
	t.client.NetrcFile = ""
	t.client.Proxy = func(*url.URL) (*url.URL, error) { return nil, nil } // loopback only
	if *serve {
		serveAll(t)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	failed := 0
	for _, s := range stops {
		urls, stopServers, err := s.start(t)
		if err != nil {
			fmt.Printf("== %s: cannot start: %v\n", s.name, err)
			failed++
			continue
		}
		for _, u := range urls {
			if err := t.show(ctx, u); err != nil {
				fmt.Printf("   error: %v\n", err)
				failed++
			}
		}
		stopServers()
	}
	if failed > 0 {
		fmt.Printf("\n%d stop(s) failed\n", failed)
		os.Exit(1)
	}
	fmt.Println("\nevery stop answered")
}

// serveAll starts every stop's servers, prints a deref command for each of
// their URLs, and waits for an interrupt.
func serveAll(t *tour) {
	var stopAll []func()
	fmt.Println("The tour's servers run on 127.0.0.1 until you press Ctrl-C. Try:")
	fmt.Println()
	for _, s := range stops {
		if s.name == "mirror" {
			continue // the mirror stop mirrors; the FTP stop's server is there to mirror from
		}
		urls, stopServers, err := s.start(t)
		if err != nil {
			fmt.Printf("# %s: cannot start: %v\n", s.name, err)
			continue
		}
		stopAll = append(stopAll, stopServers)
		flags := ""
		switch s.name {
		case "https":
			flags = "-k " // the tour's certificate is its own
		case "mid":
			flags = "--mail-dir " + t.client.Mail.Dir + " "
		case "news":
			flags = "--news-server " + t.client.NNTP.Server + " "
		case "gemini":
			flags = "--known-hosts " + t.client.Gemini.KnownHosts + " "
		}
		for _, u := range urls {
			fmt.Printf("deref %s'%s'\n", flags, u)
			if s.name == "ftp" && strings.HasSuffix(u, "/pub/") {
				fmt.Printf("deref mirror '%s' /tmp/deref-tour-copy\n", u)
			}
		}
	}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt)
	<-ch
	for _, stop := range stopAll {
		stop()
	}
}

// show dereferences u and prints its metadata and the start of its body
// or listing.
func (t *tour) show(ctx context.Context, u string) error {
	fmt.Printf("\n== %s\n", u)
	resp, err := t.client.Get(ctx, u)
	if err != nil {
		return err
	}
	if resp.Kind == fetch.KindSession {
		return t.session(ctx, u, resp)
	}
	defer resp.Body.Close()
	fmt.Printf("   kind %s, size %d, type %q, name %q", resp.Kind, resp.Size, resp.MediaType, resp.Name)
	if !resp.ModTime.IsZero() {
		fmt.Printf(", modified %s", resp.ModTime.UTC().Format(time.RFC3339))
	}
	fmt.Println()
	if resp.Note != "" {
		fmt.Printf("   note: %s\n", resp.Note)
	}
	if resp.Entries != nil {
		for _, e := range resp.Entries {
			fmt.Printf("   %s\t%s\n", e.Kind, e.URL)
		}
		return nil
	}
	head, err := io.ReadAll(io.LimitReader(resp.Body, 200))
	if err != nil {
		return err
	}
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil {
		return err
	}
	if len(head) == 0 {
		return resp.Body.Close()
	}
	if !strings.HasPrefix(resp.MediaType, "text/") && resp.MediaType != "message/rfc822" {
		fmt.Printf("   | (%d bytes of %s)\n", int64(len(head))+n, resp.MediaType)
		return resp.Body.Close()
	}
	for _, line := range strings.Split(strings.TrimRight(string(head), "\n"), "\n") {
		fmt.Printf("   | %s\n", line)
	}
	if n > 0 {
		fmt.Printf("   | ... (%d more bytes)\n", n)
	}
	return resp.Body.Close()
}

func writeTree(dir string) error {
	files := map[string]string{
		"hello.txt":            "Hello from deref's tour.\nThis file was written for the tour and served on 127.0.0.1.\n",
		"pub/README.txt":       "The pub folder of the tour.\n",
		"pub/with space.txt":   "A name with a space, written %20 in the URL.\n",
		"pub/nested/deep.txt":  "Three levels down.\n",
		"pub/data.bin":         strings.Repeat("\x00\x01\x02\x03", 4096),
		"pub/semi;colon.txt":   "A name with a semicolon.\n",
		"pub/nested/index.txt": "An index.\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func fileURL(p string) string {
	segs := strings.Split(filepath.ToSlash(p), "/")
	for i, s := range segs {
		segs[i] = url.EscapeSegment(s)
	}
	return "file://" + strings.Join(segs, "/")
}

func startFile(t *tour) ([]string, func(), error) {
	return []string{
		fileURL(filepath.Join(t.dir, "hello.txt")),
		fileURL(filepath.Join(t.dir, "pub")) + "/",
	}, func() {}, nil
}

func listen() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }

func startHTTP(t *tour) ([]string, func(), error) {
	ln, err := listen()
	if err != nil {
		return nil, nil, err
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(t.dir)), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	base := "http://" + ln.Addr().String()
	return []string{
		base + "/hello.txt",
		base + "/pub/with%20space.txt",
		base + "/pub/nested", // answered with a redirect to /pub/nested/
	}, func() { srv.Close() }, nil
}

func startHTTPS(t *tour) ([]string, func(), error) {
	s := httptest.NewTLSServer(http.FileServer(http.Dir(t.dir)))
	// The tour trusts its own server's certificate, and only that one:
	// verification stays on.
	pool := x509.NewCertPool()
	pool.AddCert(s.Certificate())
	t.client.TLSConfig = &tls.Config{RootCAs: pool}
	return []string{s.URL + "/pub/README.txt"}, s.Close, nil
}

// tourFTP serves the tree to anonymous users with
// github.com/fclairamb/ftpserverlib, an FTP server library.
type tourFTP struct{ root string }

func (d *tourFTP) GetSettings() (*ftpserver.Settings, error) {
	return &ftpserver.Settings{ListenAddr: "127.0.0.1:0"}, nil
}

func (d *tourFTP) ClientConnected(ftpserver.ClientContext) (string, error) {
	return "deref tour FTP server", nil
}

func (d *tourFTP) ClientDisconnected(ftpserver.ClientContext) {}

func (d *tourFTP) AuthUser(_ ftpserver.ClientContext, user, _ string) (ftpserver.ClientDriver, error) {
	if user != "anonymous" {
		return nil, fmt.Errorf("only anonymous logins on the tour")
	}
	return afero.NewReadOnlyFs(afero.NewBasePathFs(afero.NewOsFs(), d.root)), nil
}

func (d *tourFTP) GetTLSConfig() (*tls.Config, error) { return nil, fmt.Errorf("no TLS on the tour") }

func startFTP(t *tour) ([]string, func(), error) {
	s := ftpserver.NewFtpServer(&tourFTP{root: t.dir})
	if err := s.Listen(); err != nil {
		return nil, nil, err
	}
	go s.Serve()
	base := "ftp://" + s.Addr()
	return []string{
		base + "/pub/",                           // a listing
		base + "/pub/with%20space.txt",           // one CWD per segment, TYPE A from the suffix
		base + "/pub/nested/deep.txt;type=i",     // the typecode chooses TYPE I
		"file://" + s.Addr() + "/pub/README.txt", // a file: URL naming another host is fetched by FTP
	}, func() { s.Stop() }, nil
}

// startMirror mirrors the bundled FTP tree twice (the second run finds
// nothing changed) and shows the copy as a file: listing.
func startMirror(t *tour) ([]string, func(), error) {
	s := ftpserver.NewFtpServer(&tourFTP{root: t.dir})
	if err := s.Listen(); err != nil {
		return nil, nil, err
	}
	go s.Serve()
	dst, err := os.MkdirTemp("", "deref-tour-mirror")
	if err != nil {
		s.Stop()
		return nil, nil, err
	}
	stop := func() { s.Stop(); os.RemoveAll(dst) }
	src := "ftp://" + s.Addr() + "/pub/"
	fmt.Printf("\n== mirror %s\n", src)
	// deref mirror's way twice: the first run fetches every file, the
	// second skips those unchanged (mirror.DefaultOptions).
	for _, run := range []string{"first run", "run again"} {
		rep, err := mirror.Run(context.Background(), t.client, src, dst, mirror.DefaultOptions())
		if err != nil {
			stop()
			return nil, nil, err
		}
		fmt.Printf("   %s: %d new, %d updated, %d unchanged (skipped), %d failed, %d bytes\n", run, rep.New, rep.Updated, rep.Unchanged, rep.Failed, rep.Bytes)
		if rep.Failed > 0 {
			stop()
			return nil, nil, rep.FirstError()
		}
	}
	return []string{fileURL(dst) + "/"}, stop, nil
}

func startGopher(t *tour) ([]string, func(), error) {
	s := &gopherd.Server{Root: t.dir}
	if err := s.Start(); err != nil {
		return nil, nil, err
	}
	base := "gopher://" + s.Addr()
	return []string{
		base + "/",               // the root menu: type 1, empty selector
		base + "/0/hello.txt",    // a text item: dot-terminated on the wire
		base + "/9/pub/data.bin", // a binary item: until the server closes
		base + "/1/pub/nested",   // a sub-menu
	}, func() { s.Close() }, nil
}

// startNews starts the bundled news server with one group and points the
// Client's news: server at it.
func startNews(t *tour) ([]string, func(), error) {
	s := nntpd.New()
	s.AddGroup("local.tour", "The tour's newsgroup")
	s.Post("local.tour", "<welcome@tour.example>", []string{"From: Tour <tour@tour.example>", "Subject: Welcome", "Date: Sun, 22 Nov 2026 10:00:00 +0000"},
		"This article was posted to the tour's news server.\n.A line starting with a dot survives dot-stuffing.\n")
	s.Post("local.tour", "<second@tour.example>", []string{"From: Tour <tour@tour.example>", "Subject: A second article", "References: <welcome@tour.example>", "Date: Sun, 22 Nov 2026 11:00:00 +0000"},
		"Fetched by number: nntp://host/group/number.\n")
	if err := s.Start(); err != nil {
		return nil, nil, err
	}
	t.client.NNTP.Server = s.Addr() // news: URLs name no server
	return []string{
		"news:local.tour",                      // the group: its newest articles, from the overview
		"news:welcome@tour.example",            // an article by message-id
		"nntp://" + s.Addr() + "/local.tour/2", // an article by number
		"news:*",                               // every group
	}, func() { s.Close() }, nil
}

// session logs in to a telnet session, runs two commands and shows the
// transcript.
func (t *tour) session(ctx context.Context, u string, resp *fetch.Response) error {
	sess := resp.Session.(*telnet.Session)
	defer sess.Close()
	fmt.Printf("   kind %s (the command connects it to the terminal; here a script drives it)\n", resp.Kind)
	var out strings.Builder
	if err := sess.Login(ctx, "guest", "tour", true, &out); err != nil {
		return err
	}
	io.WriteString(sess, "term\nsize\nexit\n")
	if _, err := io.Copy(&out, sess); err != nil {
		return err
	}
	for _, line := range strings.Split(strings.TrimRight(strings.ReplaceAll(out.String(), "\r", ""), "\n"), "\n") {
		fmt.Printf("   | %s\n", line)
	}
	return nil
}

// startTelnet starts the bundled telnet server, which opens with the
// commands that trip up simple clients (NOP, DM, DO TTYPE, DO NAWS, WILL
// ECHO) before its login prompt.
func startTelnet(t *tour) ([]string, func(), error) {
	s := &telnetd.Server{User: "guest", Pass: "tour"}
	if err := s.Start(); err != nil {
		return nil, nil, err
	}
	return []string{"telnet://guest:tour@" + s.Addr() + "/"}, func() { s.Close() }, nil
}

// startMail writes the bundled sample mailbox (an mbox) and looks up a
// message by Message-ID and a part by Content-ID in it.
func startMail(t *tour) ([]string, func(), error) {
	mbox := filepath.Join(t.dir, "sample.mbox")
	if err := os.WriteFile(mbox, []byte(mail.Sample), 0o600); err != nil {
		return nil, nil, err
	}
	t.client.Mail.Dir = mbox
	return []string{
		"mid:lunch.1@example.org",                 // a message by its Message-ID
		"mid:reply.2@example.org/map@example.org", // a part of a message, by Content-ID (base64 undone)
		"cid:map@example.org",                     // the same part, in any message
	}, func() {}, nil
}

// startWAIS starts the in-process WAIS server, which answers as
// freeWAIS-sf does, with the sample database "test".
func startWAIS(t *tour) ([]string, func(), error) {
	s := waisd.New()
	if err := s.Start(); err != nil {
		return nil, nil, err
	}
	base := "wais://" + s.Addr()
	return []string{
		base + "/test",         // a searchable index: no traffic, a hint
		base + "/test?gophers", // a search: the hits, each with its URL
		base + "/test?zebra",   // no match: the catalog is offered
		// A document by the four-segment URL a search prints: fetched in
		// 10000-byte slices.
		base + "/test/TEXT/12842/1=localhost%3A2110;2=/srv/wais/idx/test;3=0%2012842%20/srv/wais/docs/gamma.txt;4=localhost%3A2110;5=/srv/wais/idx/test;6=0%2012842%20/srv/wais/docs/gamma.txt;7=%00;",
	}, func() { s.Close() }, nil
}

// startProspero starts the in-process Prospero server (ARDP over UDP),
// which answers as the Prospero 5.3 server does, with the tree of the
// protocol notes' captures.
func startProspero(t *tour) ([]string, func(), error) {
	s := &prosperod.Server{}
	if err := s.Start(); err != nil {
		return nil, nil, err
	}
	base := "prospero://" + s.Addr()
	return []string{
		base + "/AFTP/pub/docs",      // a folder: its LINK lines, each with its own URL
		base + "/AFTP/pub/hello.txt", // a file, in-band (GET-OBJECT-INFO CONTENTS)
		base + "/AFTP/pub/it%27s%20here.txt",
	}, func() { s.Close() }, nil
}

// startGemini starts an in-process Gemini server with a certificate of
// its own, which the tour trusts on first use in a known-hosts file of
// its folder (never the user's).
func startGemini(t *tour) ([]string, func(), error) {
	s := &geminid.Server{Pages: map[string]string{
		"/":          "20 text/gemini\r\n# The tour's capsule\n\n=> hello.txt A text\n=> /ask A question\n",
		"/hello.txt": "20 text/plain; charset=utf-8\r\nHello from the capsule.\n",
		"/ask":       "10 What is your name?\r\n",
	}}
	if err := s.Start(); err != nil {
		return nil, nil, err
	}
	t.client.Gemini.KnownHosts = filepath.Join(t.dir, "known_hosts")
	base := "gemini://" + s.Addr()
	return []string{
		base + "/",          // a gemtext page: its links, each with its URL
		base + "/hello.txt", // a file
		base + "/ask",       // input asked for: the prompt, and how to answer
	}, func() { s.Close() }, nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "tour:", err)
	os.Exit(1)
}
