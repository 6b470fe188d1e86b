// Command deref dereferences URLs: it speaks the protocol the URL names
// and writes the object to standard output or to a file.
//
// Run "deref -h" for the flags and the exit codes.
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	nethttp "net/http"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	_ "time/tzdata" // --ftp-timezone's IANA names where the system has no zone database

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/internal/cookiefile"
	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

const usageText = `usage: deref [flags] URL...
       deref mirror [flags] URL DIR      (deref mirror -h)
       deref crawl [flags] URL...        (deref crawl -h)
       deref serve [flags]               (deref serve -h)
       deref index WARC|CDXJ...          (deref help index)
       deref wacz create|validate ...    (deref wacz -h)
       deref completion bash|zsh|fish
       deref help [TOPIC]                (the longer topics)

Dereferences each URL and writes the object to standard output, or to a
file with -o or -O. A directory, menu or other listing prints one entry per
line: kind, size, modification time (RFC 3339, UTC), name and URL,
separated by TABs ("-" where unknown); --raw prints the server's own bytes
instead, --json one JSON object per entry. Flags may come anywhere; short
ones bundle (-sO, -C-). Long flags may also be set in the config file
($XDG_CONFIG_HOME/deref/config, else ~/.config/deref/config), one a line.
curl's -L, -f and -S are taken and change nothing: deref follows redirects,
fails on an error status without writing its page, and prints errors with
-s.
`

const exitText = `
Exit codes:
  0    success
  1    usage error, or an error of no other class
  2    bad URL (malformed, or a port of another protocol; RFC 1738 §6)
  3    unsupported scheme, or not a retrievable object (mailto:, ...)
  4    not found
  5    permission or login refused
  6    network failure or time-out
  7    protocol error (bad reply, object ended early, redirect refused)
  8    write error (local file or standard output)
  9    checksum mismatch (--checksum, --checksum-file)
  130  interrupted
`

type options struct {
	output, outputDir, resume, inputFile, proxy, netrcFile string
	outputs                                                []string // every -o, in order: one per URL when several
	remoteName, verbose, silent, head, raw, json           bool
	createDirs                                             bool
	newsServer                                             string
	knownHosts                                             string
	network                                                string // -4, -6: "tcp4", "tcp6"
	compressed                                             bool
	caCert, caPath, cert, key                              string
	noProxy                                                string
	failEarly                                              bool
	retryAll                                               bool
	resolve                                                []string // --resolve HOST:PORT:ADDRESS
	cookies                                                []string // -b NAME=VALUE
	cookieFiles                                            []string // -b FILE, --load-cookies
	cookieJar                                              string   // -c, --save-cookies
	wgetJar, keepSessions, junkSessions                    bool     // --save-cookies, --keep-session-cookies, -j
	noCookies, memoryJar                                   bool     // wget's --no-cookies; deref crawl's cookies kept in memory, as wget's
	listOnly                                               bool     // --list-only: a listing's names only
	noEPSV, traceTime, xattr                               bool     // --disable-epsv, --trace-time, --xattr
	jar                                                    *cookiefile.Jar
	dumpHeader                                             string    // -D
	timeCond                                               string    // -z, as given
	since                                                  time.Time // -z, read
	dump                                                   *headerDump
	password                                               string // wget's --password, joined to --user
	newsDescriptions, newsTLS                              bool
	newsArticles                                           int
	login                                                  bool
	tn3270, rlogin                                         string
	smtp, subject, mailDir, urnResolver                    string
	stdin                                                  io.Reader
	netrc, noNetrc, insecure, allowDowngrade               bool
	maxTime, connectTimeout, idleTimeout                   float64
	maxBytes                                               int64
	parallel                                               int
	maxRedirs                                              int
	allowPorts, redirectSchemes, ftpMethod, ftpTimeZone    string
	proto, protoRedir                                      string         // --proto, --proto-redir
	tlsMin, tlsMax                                         uint16         // --tlsv1.N, --tls-max
	stderrFile, traceFile                                  string         // --stderr, --trace-ascii
	stderrAppend                                           bool           // wget's --append-output
	serverResponse                                         bool           // wget's --server-response: -D to standard error
	wgetDir                                                bool           // wget's --directory-prefix: -O unless -o
	etagSave, etagCompare                                  string         // --etag-save, --etag-compare: file names
	httpAuth                                               fetch.HTTPAuth // --basic, --digest, --anyauth
	iface                                                  string         // --interface, --bind-address
	unixSocket                                             string         // --unix-socket, --abstract-unix-socket ("@NAME")
	connectTo                                              []string       // --connect-to
	spider                                                 bool           // wget's --spider: -I, printing nothing
	retryStatuses                                          []int          // wget's --retry-on-http-error
	skipExisting                                           bool           // --skip-existing, wget's -nc
	removeOnError                                          bool           // --remove-on-error
	getQuery                                               bool           // -G
	query                                                  []queryPiece   // -d, --data-urlencode ..., --url-query
	ifNoneMatch                                            string         // the entity tag --etag-compare's file holds
	traceOut                                               io.Writer
	bearer, proxyUser, proxyPassword                       string  // --oauth2-bearer, --proxy-user, --proxy-password
	failWithBody                                           bool    // --fail-with-body
	speedLimit                                             int64   // --speed-limit
	speedTime                                              float64 // --speed-time
	ftpSSL, ftpSync                                        bool
	headers                                                []string
	userAgent, user, referer, writeOut                     string
	retry                                                  int
	retryDelay, retryMaxTime                               float64
	retryRefused                                           bool
	limitRate                                              int64
	onlyNewer, help, version, noConfig                     bool
	configs                                                []string
	checksum, checksumFile                                 string
	segments                                               int
	segmentMin                                             int64
	warcFile, warcDedup, warcTempDir                       string
	wacz                                                   string   // --wacz
	warcHeaders                                            []string // --warc-header
	warcUncompressed, warcNoDigests                        bool
	byteRange                                              string // -r, as given
	rangeLength                                            int64  // -r FIRST-LAST: its length (FIRST is offset); 0 for FIRST-
	rangeSuffix                                            int64  // -r -N: the last N bytes
	warcMaxSize                                            int64
	warcCDX                                                bool
	sums                                                   []byte          // the --checksum-file, fetched once
	sum                                                    *fetch.Checksum // --checksum, parsed
	m                                                      mirrorSettings
	c                                                      crawlSettings
	s                                                      serveSettings
	modTimes                                               map[string]time.Time // URL as given -> exact time, asked for beforehand
	offset                                                 int64                // -C OFFSET, checked
	progress                                               *progressLine        // on a terminal, unless -s
	bars                                                   *barSet              // --parallel on a terminal: a bar per transfer
}

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		// A soft limit: the collector works harder as the heap nears it,
		// so that what many hostile servers make deref hold at once (each
		// bounded, together within the Client's memory budget) is given
		// back before the process grows past it. GOMEMLIMIT overrides it.
		debug.SetMemoryLimit(memoryLimit)
	}
	if os.Getenv("GOMAXPROCS") == "" {
		setProcessors = runtime.GOMAXPROCS
	}
	os.Exit(run(os.Args[1:], os.Stdin, discardIfNull(os.Stdout), os.Stderr))
}

// setProcessors, when set (by main, unless GOMAXPROCS is), sets how many
// processors run the program's goroutines at once.
var setProcessors func(int) int

// oneProcessor runs the transfers of deref URL URL... (more than one) and
// deref mirror on one processor, as curl, wget and lftp run: they wait on
// the network and the disk, and with more processors than work the Go
// scheduler wakes idle threads to look for work at every event, which for
// small files costs more CPU than the work itself (a quarter of it for
// 2,000 files over FTP; README, Performance). One URL keeps every
// processor (a large object is written sooner: 0.48 s for 1 GiB over FTP
// to a file, against 0.56 on one), as do segments, which read several
// large streams at once, crawl (pages parsed, records compressed) and
// serve (a server of many clients).
func oneProcessor(segments, urls int) {
	if setProcessors != nil && segments <= 1 && urls != 1 {
		setProcessors(1)
	}
}

// memoryLimit is the command's soft memory limit (runtime/debug).
const memoryLimit = 96 << 20

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "mirror" {
		return runMirror(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "crawl" {
		return runCrawl(args[1:], stdin, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "serve" {
		return runServe(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "index" {
		return runIndex(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "wacz" {
		return runWACZ(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "completion" {
		return runCompletion(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "help" {
		return runHelp(args[1:], stdout, stderr)
	}
	o := options{stdin: stdin, parallel: 1, maxRedirs: 10, newsArticles: 100, ftpMethod: "rfc"}
	urls, err := parseCommandLine(cmdGet, args, &o)
	switch {
	case errors.Is(err, errHelp):
		writeHelp(stdout, cmdGet, usageText)
		io.WriteString(stdout, exitText)
		return 0
	case err != nil:
		return usageError(stderr, err.Error())
	case o.version:
		printVersion(stdout)
		return 0
	}
	closeAsides, asideCode := openAsides(&o, stdout, &stderr, "deref")
	defer closeAsides()
	if asideCode != 0 {
		return asideCode
	}
	warcWhole(&o, stderr, "deref")
	if o.inputFile != "" {
		more, err := readList(o.inputFile, stdin)
		if err != nil {
			return usageError(stderr, "-i: "+err.Error())
		}
		urls = append(urls, more...)
	}
	if len(urls) == 0 {
		return usageError(stderr, "no URL given")
	}
	if o.wgetDir && len(o.outputs) == 0 && !o.head {
		o.remoteName = true // wget writes files
	}
	if msg := checkOptions(&o, len(urls)); msg != "" {
		return usageError(stderr, msg)
	}
	oneProcessor(o.segments, len(urls))
	if len(o.query) > 0 {
		body := slices.ContainsFunc(o.query, func(p queryPiece) bool { return p.flag != "url-query" })
		if body && !o.getQuery {
			return usageError(stderr, "deref retrieves: it sends no request body; with -G the data of -d go into the URL's query, as curl -G puts them")
		}
		q, err := queryString(o.query, stdin)
		if err != nil {
			return usageError(stderr, oneLine(err.Error()))
		}
		for i, u := range urls {
			urls[i] = withQuery(u, q)
		}
	}
	if o.etagCompare != "" {
		tag, err := readETag(o.etagCompare)
		if err != nil {
			return usageError(stderr, "--etag-compare: "+oneLine(err.Error()))
		}
		o.ifNoneMatch = tag
	}
	if o.outputDir != "" && (o.remoteName || slices.ContainsFunc(o.outputs, func(f string) bool { return f != "-" })) {
		// Made once for every URL, as wget -P does, rather than failing
		// once per URL.
		if err := os.MkdirAll(o.outputDir, 0o755); err != nil {
			fmt.Fprintln(stderr, "deref: --output-dir:", oneLine(err.Error()))
			return fetch.ExitCode(fetch.WriteError(err))
		}
	}

	if err := warcFlagsError(&o); err != nil {
		return usageError(stderr, err.Error())
	}
	c, err := newClient(&o, stderr)
	if err != nil {
		return usageError(stderr, err.Error())
	}
	if o.dumpHeader != "" || o.serverResponse {
		var w io.Writer = stdout
		switch {
		case o.dumpHeader == "":
			w = stderr
		case o.dumpHeader != "-":
			f, err := os.Create(o.dumpHeader)
			if err != nil {
				fmt.Fprintln(stderr, "deref: -D: "+oneLine(err.Error()))
				return fetch.ExitCode(fetch.WriteError(err))
			}
			defer f.Close()
			w = f
		}
		o.dump = &headerDump{w: w}
		own := c.Trace
		c.Trace = func(u *url.URL, ev fetch.TraceEvent) {
			if ev.Dir == protocols.TraceRecv {
				o.dump.line(ev.Text)
			}
			if own != nil {
				own(u, ev)
			}
		}
	}
	archive, err := openWARC(&o, c, cmdGet, args, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "deref: "+oneLine(err.Error()))
		return fetch.ExitCode(fetch.WriteError(err))
	}
	run, stop := runContext(&o)
	defer stop()
	// A full (or read-only) disk stops the run: no URL starts after it,
	// those under way end, their .part files kept, and it is said once.
	ctx, full := context.WithCancelCause(run)
	defer full(nil)
	// A closed pipe on stdout is a write error (exit 8), not a silent
	// death by SIGPIPE.
	signal.Ignore(syscall.SIGPIPE)
	var (
		mu   sync.Mutex
		code int
		wg   sync.WaitGroup
	)
	// stopped: a write failure (here or the archive's) stopped the run;
	// saidFull: an unwritable destination was said.
	stopped, saidFull := false, false
	report := func(raw string, err error) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case stopped && errors.Is(err, context.Canceled), fetch.Unwritable(err) && saidFull:
			return // said once: the rest stopped for it
		case fetch.Unwritable(err):
			stopped, saidFull = true, true
			full(err)
		}
		if o.progress != nil {
			o.progress.endLine()
		}
		fmt.Fprintln(stderr, "deref: "+errorLine(err, raw, &o))
		if code == 0 {
			code = fetch.ExitCode(err)
		}
	}
	if o.checksumFile != "" {
		sums, err := readSums(ctx, c, o.checksumFile)
		if err != nil {
			fmt.Fprintln(stderr, "deref: --checksum-file: "+errorLine(err, o.checksumFile, &o))
			return fetch.ExitCode(err)
		}
		o.sums = sums
	}
	if o.parallel > 1 && !o.silent && isTerminal(stderr) {
		o.bars = newBarSet(ctx, stderr)
		stderr = o.bars.p // messages go above the bars
		defer o.bars.wait()
	}
	if o.remoteName && len(urls) > 1 {
		o.modTimes = folderTimes(ctx, c, urls, o.parallel, o.onlyNewer)
	}
	type job struct {
		raw string
		n   int // its place among the URLs
	}
	next := make(chan job)
	for range min(o.parallel, len(urls)) { // no more workers than URLs
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				if o.failEarly {
					mu.Lock()
					failed := code != 0
					mu.Unlock()
					if failed {
						continue // --fail-early: no URL starts after a failure
					}
				}
				if archive != nil && archive.Err() != nil {
					// What is fetched now would be missing from it: the
					// run stops, and closeWARC says why.
					mu.Lock()
					stopped = true
					mu.Unlock()
					full(archive.Err())
					continue
				}
				raw := j.raw
				res := &result{url: raw, start: time.Now(), n: j.n}
				oj := &o
				if len(o.outputs) > 1 { // the URL's own -o
					paired := o
					paired.output = o.outputs[j.n]
					oj = &paired
				}
				policy := fetch.Retry{Attempts: o.retry, Wait: seconds(o.retryDelay), MaxTime: seconds(o.retryMaxTime), Refused: o.retryRefused, AllErrors: o.retryAll, Statuses: o.retryStatuses}
				err := policy.Do(ctx, func() error { return deref(ctx, c, oj, raw, stdout, stderr, res) }, func(err error, wait time.Duration) {
					res.attempt++
					mu.Lock()
					defer mu.Unlock()
					if o.progress != nil {
						o.progress.endLine()
					}
					fmt.Fprintf(stderr, "deref: %s; trying again in %v (%d of %d)\n", errorLine(err, raw, &o), wait.Round(time.Millisecond), res.attempt, o.retry)
				})
				if o.dump != nil {
					o.dump.end()
				}
				if errors.Is(err, fetch.ErrNotModified) && (o.onlyNewer || !o.since.IsZero() || o.ifNoneMatch != "") || errors.Is(err, fetch.ErrExists) {
					err = nil // -N, -z, --etag-compare, --skip-existing: the local file is as new, or the object older or the same, or the file there; nothing to do
				} else if err == nil && o.etagSave != "" && res.etagSeen {
					err = saveETag(o.etagSave, res.etag)
				}
				if err != nil && o.removeOnError {
					removePartial(oj, raw, err)
				}
				if o.bars != nil {
					o.bars.finish(raw, err)
				}
				if err != nil {
					report(raw, err)
				}
				if o.writeOut != "" {
					mu.Lock()
					writeOutResult(stdout, stderr, o.writeOut, res, err, &o)
					mu.Unlock()
				}
			}
		}()
	}
	for n, raw := range urls {
		if err := ctx.Err(); err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				report(raw, err) // --max-time ran out before this URL began: not a success
			}
			break
		}
		next <- job{raw, n}
	}
	close(next)
	wg.Wait()
	if err := closeWARC(&o, archive, errors.Is(run.Err(), context.Canceled), stderr); err != nil {
		report(o.warcFile, err)
	}
	if err := saveCookies(&o, stdout); err != nil {
		report(o.cookieJar, err)
	}
	if errors.Is(run.Err(), context.Canceled) {
		return 130
	}
	return code
}

// errorLine words err as the one line deref prints for it: naming the URL
// (passwords hidden), with "interrupted" and "timed out after N s
// (--max-time)" for what Go calls a cancelled context and an exceeded
// deadline, and server text made safe for a terminal.
func errorLine(err error, raw string, o *options) string {
	text := err.Error()
	var fe *fetch.Error
	if !errors.As(err, &fe) {
		text = url.RedactString(strings.TrimSpace(raw)) + ": " + text
	}
	return oneLine(contextWords(err, text, o))
}

// contextWords rewords text, err's, where it says what Go calls a
// cancelled context and an exceeded deadline: "interrupted", "timed out
// after N s (--max-time)".
func contextWords(err error, text string, o *options) string {
	switch {
	case errors.Is(err, context.Canceled):
		text = strings.ReplaceAll(text, context.Canceled.Error(), "interrupted")
	case errors.Is(err, context.DeadlineExceeded) && o.maxTime > 0:
		text = strings.ReplaceAll(text, context.DeadlineExceeded.Error(), fmt.Sprintf("timed out after %s s (--max-time)", strconv.FormatFloat(o.maxTime, 'f', -1, 64)))
	}
	return text
}

// checkOptions checks the flags against each other before anything is
// fetched, and returns what is wrong, or "".
func checkOptions(o *options, urls int) string {
	toFile := o.remoteName || len(o.outputs) > 0 && !slices.ContainsFunc(o.outputs, func(f string) bool { return f == "-" || isDevice(f) })
	switch {
	case len(o.outputs) == 1 && urls > 1:
		return "-o names one file; give one -o per URL, or use -O (and --output-dir), for several URLs"
	case len(o.outputs) > 1 && len(o.outputs) != urls:
		return fmt.Sprintf("%d -o files for %d URLs: give one -o per URL, in order", len(o.outputs), urls)
	case o.head && (o.remoteName || o.output != "" && o.output != "-"):
		return "-I prints metadata only; it does not go with -o or -O"
	case (o.dumpHeader != "" || o.serverResponse) && o.parallel > 1:
		return "-D and --server-response write one transfer's answers after another's: they do not go with --parallel"
	case o.parallel > 1 && !toFile:
		return "--parallel writes files: it goes with -O, or with one -o FILE per URL"
	case (o.checksum != "" || o.checksumFile != "") && !toFile:
		return "--checksum and --checksum-file check a file before it gets its name: they go with -o or -O"
	case o.checksum != "" && urls > 1:
		return "--checksum gives one digest: for several URLs, use --checksum-file"
	case o.checksum != "" && o.checksumFile != "":
		return "--checksum and --checksum-file do not go together"
	case o.skipExisting && !toFile:
		return "--skip-existing leaves a file as it is: it goes with -o or -O"
	case (o.etagSave != "" || o.etagCompare != "") && urls > 1:
		return "--etag-save and --etag-compare keep one object's entity tag: they go with one URL"
	case o.failWithBody && (o.resume != "" || o.segments > 1 || o.checksum != "" || o.checksumFile != "" || o.onlyNewer):
		return "--fail-with-body writes an error page whole, in place of the object: not with -C, -N, --segments, --checksum or --checksum-file"
	case o.segments > 1 && !toFile:
		return "--segments writes ranges of a file at their offsets: it goes with -o or -O"
	case o.segments < 0 || o.segments > 64:
		return "--segments takes 1 to 64 connections"
	}
	if o.checksum != "" {
		sum, err := fetch.ParseChecksum(o.checksum)
		if err != nil {
			return "--checksum: " + err.Error()
		}
		o.sum = &sum
	}
	if o.parallel < 1 {
		o.parallel = 1
	}
	if o.resume != "" && o.resume != "-" {
		n, err := strconv.ParseInt(o.resume, 10, 64)
		if err != nil || n < 0 {
			return fmt.Sprintf("-C: %q is not a byte offset (or - to continue a file)", o.resume)
		}
		if toFile {
			return "-C OFFSET goes with standard output; use -C - to continue a file"
		}
		o.offset = n
	}
	if o.timeCond != "" {
		if strings.HasPrefix(o.timeCond, "-") {
			return "-z: -DATE (only an object older) is not taken"
		}
		t, ok := timeCondition(o.timeCond)
		if !ok {
			return fmt.Sprintf("-z: %q is neither a date (2006-01-02, RFC 3339, HTTP's form) nor a file", o.timeCond)
		}
		o.since = t
	}
	if o.byteRange != "" {
		return checkRange(o, toFile)
	}
	return ""
}

// timeCondition reads -z: the modification time of a file of that name,
// or a date in one of the forms curl users write.
func timeCondition(v string) (time.Time, bool) {
	if st, err := os.Stat(v); err == nil {
		return st.ModTime(), true
	}
	for _, layout := range []string{time.RFC3339, nethttp.TimeFormat, time.RFC1123Z, time.RFC850, time.ANSIC, "2006-01-02 15:04:05", "2006-01-02T15:04:05", "2006-01-02", "20060102"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// checkRange reads -r into o.offset and o.rangeLength, and returns what
// is wrong with it, or "".
func checkRange(o *options, toFile bool) string {
	switch {
	case o.resume != "":
		return "-r and -C do not go together"
	case o.remoteName:
		return "-r goes with standard output or -o FILE, not -O"
	case toFile && (o.segments > 1 || o.checksum != "" || o.checksumFile != "" || o.onlyNewer):
		return "-r does not go with --segments, --checksum, --checksum-file or -N"
	case o.warcFile != "":
		return "-r does not go with --warc-file: an archive holds whole objects"
	case strings.Contains(o.byteRange, ","):
		return "-r: one range only (FIRST-LAST)"
	case strings.HasPrefix(o.byteRange, "-"):
		n, err := strconv.ParseInt(o.byteRange[1:], 10, 64)
		if err != nil || n <= 0 {
			return fmt.Sprintf("-r: %q is not -N, the last N bytes", o.byteRange)
		}
		o.rangeSuffix = n
		return ""
	}
	first, last, ok := strings.Cut(o.byteRange, "-")
	f, err := strconv.ParseInt(first, 10, 64)
	if !ok || err != nil || f < 0 {
		return fmt.Sprintf("-r: %q is not FIRST-LAST or FIRST- (byte positions from 0)", o.byteRange)
	}
	o.offset = f
	if last == "" {
		return ""
	}
	l, err := strconv.ParseInt(last, 10, 64)
	if err != nil || l < f || l == math.MaxInt64 {
		return fmt.Sprintf("-r: %q is not FIRST-LAST with LAST at least FIRST", o.byteRange)
	}
	o.rangeLength = l - f + 1
	return ""
}

// isDevice reports whether name is an existing file that is not a regular
// file or folder (/dev/null, a pipe): it is written as standard output is.
func isDevice(name string) bool {
	st, err := os.Stat(name)
	return err == nil && !st.Mode().IsRegular() && !st.IsDir()
}

// usageError writes a usage error as one line and a pointer to the help,
// and returns the exit code of usage errors.
func usageError(stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "deref: %s\nsee 'deref -h'\n", oneLine(msg))
	return 1
}

func seconds(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }

// oneLine makes server text one line that is safe on a terminal: see
// protocols.Printable.
func oneLine(s string) string { return protocols.Printable(s) }

// openAsides opens the files --stderr (wget's -o and -a) and
// --trace-ascii name, pointing stderr and o.traceOut at them ("-":
// stdout), and returns what closes them, with a non-zero exit code when
// one cannot be opened (said on stderr, after prefix).
func openAsides(o *options, stdout io.Writer, stderr *io.Writer, prefix string) (func(), int) {
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	for _, aside := range []struct {
		flag, name string
		to         *io.Writer
	}{{"--stderr", o.stderrFile, stderr}, {"--trace-ascii", o.traceFile, &o.traceOut}} {
		switch aside.name {
		case "":
		case "-":
			*aside.to = stdout
		default:
			flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
			if aside.to == stderr && o.stderrAppend {
				flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
			}
			f, err := os.OpenFile(aside.name, flags, 0o666)
			if err != nil {
				fmt.Fprintln(*stderr, prefix+": "+aside.flag+": "+oneLine(err.Error()))
				return closeAll, fetch.ExitCode(fetch.WriteError(err))
			}
			files = append(files, f)
			*aside.to = f
		}
	}
	return closeAll, 0
}

// openInput opens the file name, or is stdin for "-"; done closes it.
func openInput(name string, stdin io.Reader) (r io.Reader, done func(), err error) {
	if name == "-" {
		return stdin, func() {}, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, err
	}
	return f, func() { f.Close() }, nil
}

func readList(name string, stdin io.Reader) ([]string, error) {
	r, done, err := openInput(name, stdin)
	if err != nil {
		return nil, err
	}
	defer done()
	var urls []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line != "" && !strings.HasPrefix(line, "#") {
			urls = append(urls, line)
		}
	}
	return urls, sc.Err()
}

// parseArg parses a URL as given on the command line or in a list: it may
// be wrapped as in text, lack its scheme, or hold characters to escape.
func parseArg(raw string) (*url.URL, error) {
	return url.Parse(url.Canonicalize(guessScheme(unwrap(raw))))
}

// unwrap accepts a URL as RFC 1738's appendix writes it in text:
// "<URL:...>", "<...>" or "URL:...".
func unwrap(raw string) string {
	t := strings.TrimSpace(raw)
	if strings.HasPrefix(t, "<") && strings.HasSuffix(t, ">") {
		if ms := url.Extract(t); len(ms) == 1 && ms[0].Start == 0 {
			return ms[0].Raw
		}
	}
	if len(t) > 4 && strings.EqualFold(t[:4], "URL:") {
		return t[4:]
	}
	return raw
}

// guessScheme adds the scheme a person left out, as curl does: ftp:// for a
// host named ftp.*, http:// for any other "host/path" or "host:port/path".
// A locator that has a scheme is left alone.
func guessScheme(raw string) string {
	t := strings.TrimSpace(raw)
	if t == "" || strings.HasPrefix(t, "/") || strings.HasPrefix(t, "<") {
		return raw
	}
	host := t
	if k := strings.IndexAny(t, "/?#"); k >= 0 {
		host = t[:k]
	}
	if i := strings.IndexByte(t, ':'); i >= 0 {
		rest := t[i+1:]
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if j == 0 || j < len(rest) && rest[j] != '/' || i > len(host) {
			return raw // a scheme, not host:port
		}
	} else if !strings.Contains(host, ".") && host != "localhost" {
		return raw // not a host name: let Parse explain
	}
	if strings.HasPrefix(strings.ToLower(t), "ftp.") {
		return "ftp://" + t
	}
	return "http://" + t
}

// stopSignals end a run cleanly: SIGINT, and SIGTERM and SIGHUP (a
// service stopped, a terminal closed).
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// notifyStop is a context cancelled by the first of stopSignals. Once one
// has come, the next ends the process at once (a second ^C during the
// clean-up): what is under way is in NAME.part or NAME.warc.gz.open
// files, never under a final name.
func notifyStop() (context.Context, func()) {
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
}

// runContext is a run's context: cancelled by one of stopSignals, and past
// --max-time.
func runContext(o *options) (context.Context, func()) {
	ctx, stop := notifyStop()
	if o.maxTime <= 0 {
		return ctx, stop
	}
	ctx, cancel := context.WithTimeout(ctx, seconds(o.maxTime))
	return ctx, func() { cancel(); stop() }
}
