package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/gateway"
	"github.com/urlderef/deref/fetch/warc"
	"github.com/urlderef/deref/url"
)

const serveUsage = `usage: deref serve [flags]

Runs a gateway that puts Gopher, FTP, news, NNTP and WAIS in any browser:
an HTTP server (on 127.0.0.1:8070 unless --listen says otherwise) whose
page /gopher/HOST[:PORT]/PATH shows gopher://HOST:PORT/PATH (and /ftp/...,
/news/GROUP, /nntp/..., /wais/...), menus and listings as lists and tables,
searches as forms, text as text, anything else as it is. Clients that use
it as a proxy (gopher_proxy=http://127.0.0.1:8070/) get the raw object.
Pages never lead to private, loopback or link-local addresses unless
--allow-private, nor to file: unless --allow-file DIR. It prints its
address on standard output, logs each request on standard error (Common
Log Format, or JSON with --log-json) and stops on an interrupt.

With --archive PATH (WARC files, or folders of them, as deref --warc-file
and wget --warc-file write them; WACZ files, read in place; CDXJ or ZipNum
indexes) it is a Wayback Machine instead: each
PATH is a collection named after it, /COLL/TIMESTAMP/URL shows the
capture of URL nearest that time as the live gateway would, every link
leading to its capture at that time (or to a page saying it was not
archived), never to a live server.
`

// serveSettings holds what deref serve's own flags set.
type serveSettings struct {
	opts     gateway.Options
	listen   string
	allow    []string
	trusted  []string // --trust-proxy
	archives []string // --archive: collections to replay
	// What a client may hold of the server (gateway.Limits): the
	// time-outs in seconds, the sizes in bytes.
	limits                                gateway.Limits
	headerTimeout, keepAlive, sendTimeout float64
	maxHeader, maxURL                     int64
}

func runServe(args []string, stdout, stderr io.Writer) int {
	o := options{maxRedirs: 10, newsArticles: 100, ftpMethod: "rfc"}
	o.s.listen = "127.0.0.1:8070"
	pos, err := parseCommandLine(cmdServe, args, &o)
	switch {
	case errors.Is(err, errHelp):
		writeHelp(stdout, cmdServe, serveUsage)
		return 0
	case err != nil:
		return serveUsageError(stderr, err.Error())
	case o.version:
		printVersion(stdout)
		return 0
	case len(pos) > 0:
		return serveUsageError(stderr, "deref serve takes no URL: it serves what its pages ask for")
	}
	o.silent = true // no progress lines
	o.noNetrc = true
	c, err := newClient(&o, stderr)
	if err != nil {
		return serveUsageError(stderr, err.Error())
	}
	// A gateway answers for others: never with this machine's credentials,
	// its proxies or questions on its terminal.
	c.NetrcFile, c.Prompt, c.Gopher.Ask = "", nil, nil
	c.Proxy = func(*url.URL) (*url.URL, error) { return nil, nil }
	c.Gateways = nil
	so := o.s.opts
	for _, a := range o.s.allow {
		for _, p := range strings.Split(a, ",") {
			if p = strings.TrimSpace(p); p != "" {
				so.Allow = append(so.Allow, p)
			}
		}
	}
	if so.Home != "" {
		if _, err := url.Parse(so.Home); err != nil {
			return serveUsageError(stderr, "--home: "+url.RedactString(err.Error()))
		}
	}
	for _, a := range o.s.trusted {
		for _, p := range strings.Split(a, ",") {
			if p = strings.TrimSpace(p); p == "" {
				continue
			}
			if _, err := netip.ParsePrefix(p); err != nil {
				if _, err := netip.ParseAddr(p); err != nil {
					return serveUsageError(stderr, "--trust-proxy: "+p+" is neither an address nor a CIDR network")
				}
			}
			so.TrustedProxies = append(so.TrustedProxies, p)
		}
	}
	if so.BasePath != "" && !strings.HasPrefix(so.BasePath, "/") {
		return serveUsageError(stderr, "--base-path: "+so.BasePath+" does not begin with /")
	}
	if so.AllowFile != "" {
		if st, err := os.Stat(so.AllowFile); err != nil || !st.IsDir() {
			return serveUsageError(stderr, "--allow-file: "+so.AllowFile+" is not a folder")
		}
	}
	so.Timeout = seconds(o.maxTime)
	so.Log = stderr
	handler := gateway.Handler(c, so)
	if len(o.s.archives) > 0 {
		colls, err := openCollections(o.s.archives, stderr)
		if err != nil {
			fmt.Fprintln(stderr, "deref serve: "+oneLine(err.Error()))
			return fetch.ExitCode(err)
		}
		if _, ok := colls["live"]; ok {
			for _, a := range colls {
				a.Close()
			}
			return serveUsageError(stderr, "--archive: a collection may not be named live: /live/ is the live gateway's")
		}
		// The live gateway answers under /live/, where a replayed page's
		// "live" link leads (a Gopher menu's page, which a browser can
		// open); the rest is the archive's.
		lo := so
		lo.BasePath = strings.TrimSuffix(so.BasePath, "/") + "/live"
		live := gateway.Handler(c, lo)
		so.LivePath = lo.BasePath
		archive := gateway.Archive(colls, so)
		livePrefix := "/" + strings.Trim(lo.BasePath, "/") + "/"
		handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, livePrefix) && !r.URL.IsAbs() {
				live.ServeHTTP(w, r)
				return
			}
			archive.ServeHTTP(w, r)
		})
		defer func() {
			for _, a := range colls {
				a.Close() // the indexes made at start
			}
		}()
	}
	ln, err := net.Listen("tcp", o.s.listen)
	if err != nil {
		// A network failure (6), naming the address and the flag that
		// sets it: a port in use, an address not this machine's.
		why := err.Error()
		var se *os.SyscallError
		if errors.As(err, &se) {
			why = se.Err.Error()
		}
		fmt.Fprintf(stderr, "deref serve: cannot listen on %s: %s (choose another with --listen HOST:PORT)\n", o.s.listen, oneLine(why))
		return 6
	}
	fmt.Fprintf(stdout, "deref serve: http://%s/\n", ln.Addr())
	if f, ok := stdout.(*os.File); ok {
		f.Sync()
	}
	l := o.s.limits
	l.HeaderTimeout, l.IdleTimeout, l.SendTimeout = seconds(o.s.headerTimeout), seconds(o.s.keepAlive), seconds(o.s.sendTimeout)
	l.MaxHeaderBytes, l.MaxURL = int(min(o.s.maxHeader, 1<<30)), int(min(o.s.maxURL, 1<<30))
	srv := l.Server(handler)
	srv.ErrorLog = log.New(io.Discard, "", 0) // a client's broken request is its own affair, not the log's
	ln = l.Listen(ln)
	ctx, stop := notifyStop()
	defer stop()
	// A stop signal lets the requests under way end, for up to 5 s; a
	// second one ends the process at once.
	shutDown := make(chan struct{})
	go func() {
		defer close(shutDown)
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shut)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(stderr, "deref serve: "+oneLine(err.Error()))
		return 7
	}
	<-shutDown
	return 0
}

// openCollections opens each --archive PATH as a collection named after
// it (pub for pub.warc.gz or a folder pub/, the folder's own name for
// "."), saying what it could not read of each. The first file of a
// series (NAME.warc.gz) brings the rest of it (NAME-00001.warc.gz, ...,
// as --warc-file continues one), and paths of one series are one
// collection. A path with no capture in it is refused.
func openCollections(paths []string, stderr io.Writer) (map[string]*warc.Archive, error) {
	var names []string
	members := map[string][]string{}
	for _, p := range paths {
		name, series := collectionName(p)
		if _, dup := members[name]; dup && !series {
			return nil, fmt.Errorf("--archive: two collections named %s", name)
		}
		if _, dup := members[name]; !dup {
			names = append(names, name)
		}
		members[name] = append(members[name], filepath.Clean(p))
		if series {
			members[name] = append(members[name], seriesFiles(p)...)
		}
	}
	colls := map[string]*warc.Archive{}
	for _, name := range names {
		ps := slices.Compact(slices.Sorted(slices.Values(members[name])))
		a, err := warc.Open(ps...)
		if err != nil {
			for _, a := range colls {
				a.Close()
			}
			return nil, fmt.Errorf("--archive: %w", err)
		}
		for _, s := range a.Skipped {
			fmt.Fprintln(stderr, "deref serve: skipped "+oneLine(s))
		}
		if a.Empty() {
			a.Close()
			for _, a := range colls {
				a.Close()
			}
			return nil, fmt.Errorf("--archive %s: no capture in it to serve", strings.Join(members[name][:1], ""))
		}
		colls[name] = a
	}
	return colls, nil
}

// collectionName is the name a path's collection is served under, and
// whether the path is a file of a WARC series (NAME.warc.gz or
// NAME-NNNNN.warc.gz), whose name is NAME.
func collectionName(p string) (string, bool) {
	base := filepath.Base(filepath.Clean(p))
	if base == "." || base == ".." || base == string(filepath.Separator) {
		if abs, err := filepath.Abs(p); err == nil {
			base = filepath.Base(abs)
		}
	}
	if base == "" || base == "." || base == string(filepath.Separator) || strings.ContainsAny(base, "/\\") {
		base = "archive"
	}
	name := base
	for _, ext := range []string{".wacz", ".idx", ".cdxj", ".cdx", ".gz", ".warc"} {
		name = strings.TrimSuffix(name, ext)
	}
	st, err := os.Stat(p)
	if err != nil || st.IsDir() || !strings.HasSuffix(base, ".warc") && !strings.HasSuffix(base, ".warc.gz") {
		return name, false
	}
	if stem, num, ok := cutLast(name, "-"); ok && len(num) == 5 && strings.Trim(num, "0123456789") == "" {
		return stem, true
	}
	return name, true
}

func cutLast(s, sep string) (before, after string, found bool) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):], true
	}
	return s, "", false
}

// seriesFiles lists the files of the series p belongs to, in its folder:
// NAME.warc.gz and NAME-NNNNN.warc.gz (or .warc, as p is).
func seriesFiles(p string) []string {
	dir := filepath.Dir(p)
	name, _ := collectionName(p)
	ext := ".warc.gz"
	if !strings.HasSuffix(p, ext) {
		ext = ".warc"
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, de := range des {
		n := de.Name()
		if de.IsDir() || !strings.HasSuffix(n, ext) {
			continue
		}
		stem := strings.TrimSuffix(n, ext)
		if num, ok := strings.CutPrefix(stem, name+"-"); stem == name || ok && len(num) == 5 && strings.Trim(num, "0123456789") == "" {
			out = append(out, filepath.Join(dir, n))
		}
	}
	return out
}

// serveUsageError writes a usage error of deref serve.
func serveUsageError(stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "deref serve: %s\nsee 'deref serve -h'\n", oneLine(msg))
	return 1
}
