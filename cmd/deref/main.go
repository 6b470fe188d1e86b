// Command deref dereferences URLs: it speaks the protocol the URL names
// and writes the object to standard output or to a file.
//
// Run "deref -h" for the flags and the exit codes.
package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	_ "time/tzdata" // --ftp-timezone's IANA names where the system has no zone database

	"golang.org/x/term"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/protocols/ftp"
	"github.com/urlderef/deref/protocols/gopher"
	"github.com/urlderef/deref/url"
)

const usageText = `usage: deref [flags] URL...
       deref mirror [flags] URL DIR      (deref mirror -h)
       deref completion bash|zsh|fish

Dereferences each URL and writes the object to standard output, or to a
file with -o or -O. A directory, menu or other listing prints one entry per
line: kind, size, modification time (RFC 3339, UTC), name and URL,
separated by TABs ("-" where unknown); --raw prints the server's own bytes
instead, --json one JSON object per entry. Flags may come anywhere; short
ones bundle (-sO, -C-). Long flags may also be set in the config file
($XDG_CONFIG_HOME/deref/config, else ~/.config/deref/config), one a line.
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
  130  interrupted
`

type options struct {
	output, outputDir, resume, inputFile, proxy, netrcFile string
	remoteName, verbose, silent, head, raw, json           bool
	createDirs                                             bool
	newsServer                                             string
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
	ftpSSL, ftpSync                                        bool
	headers                                                []string
	userAgent, user, referer, writeOut                     string
	retry                                                  int
	retryDelay, retryMaxTime                               float64
	limitRate                                              int64
	onlyNewer, help, version, noConfig                     bool
	configs                                                []string
	m                                                      mirrorSettings
	modTimes                                               map[string]time.Time // URL as given -> exact time, asked for beforehand
	offset                                                 int64                // -C OFFSET, checked
	progress                                               *progressLine        // on a terminal, unless -s
	bars                                                   *barSet              // --parallel on a terminal: a bar per transfer
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, discardIfNull(os.Stdout), os.Stderr))
}

// discard is a writer that drops everything, as /dev/null does, without a
// system call per write. It has no ReadFrom, so the copy reads with its own
// large buffer.
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// discardIfNull returns discard for a file that is /dev/null (as GNU tar
// does, since writing there has no effect), and f otherwise.
func discardIfNull(f *os.File) io.Writer {
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return f
	}
	if null, err := os.Stat(os.DevNull); err == nil && os.SameFile(st, null) {
		return discard{}
	}
	return f
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "mirror" {
		return runMirror(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "completion" {
		return runCompletion(args[1:], stdout, stderr)
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
	if msg := checkOptions(&o, len(urls)); msg != "" {
		return usageError(stderr, msg)
	}
	if o.outputDir != "" && (o.remoteName || o.output != "" && o.output != "-") {
		// Made once for every URL, as wget -P does, rather than failing
		// once per URL.
		if err := os.MkdirAll(o.outputDir, 0o755); err != nil {
			fmt.Fprintln(stderr, "deref: --output-dir:", oneLine(err.Error()))
			return fetch.ExitCode(fetch.WriteError(err))
		}
	}

	c, err := newClient(&o, stderr)
	if err != nil {
		return usageError(stderr, err.Error())
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// A closed pipe on stdout is a write error (exit 8), not a silent
	// death by SIGPIPE.
	signal.Ignore(syscall.SIGPIPE)
	if o.maxTime > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, seconds(o.maxTime))
		defer cancel()
	}
	var (
		mu   sync.Mutex
		code int
		wg   sync.WaitGroup
	)
	report := func(raw string, err error) {
		mu.Lock()
		defer mu.Unlock()
		if o.progress != nil {
			o.progress.endLine()
		}
		fmt.Fprintln(stderr, "deref: "+errorLine(err, raw, &o))
		if code == 0 {
			code = fetch.ExitCode(err)
		}
	}
	if o.parallel > 1 && !o.silent && isTerminal(stderr) {
		o.bars = newBarSet(ctx, stderr)
		stderr = o.bars.p // messages go above the bars
		defer o.bars.wait()
	}
	if o.remoteName && len(urls) > 1 {
		o.modTimes = folderTimes(ctx, c, urls, o.parallel)
	}
	next := make(chan string)
	for range o.parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for raw := range next {
				res := &result{url: raw, start: time.Now()}
				policy := fetch.Retry{Attempts: o.retry, Wait: seconds(o.retryDelay), MaxTime: seconds(o.retryMaxTime)}
				err := policy.Do(ctx, func() error { return deref(ctx, c, &o, raw, stdout, stderr, res) }, func(err error, wait time.Duration) {
					res.attempt++
					mu.Lock()
					defer mu.Unlock()
					if o.progress != nil {
						o.progress.endLine()
					}
					fmt.Fprintf(stderr, "deref: %s; trying again in %v (%d of %d)\n", errorLine(err, raw, &o), wait.Round(time.Millisecond), res.attempt, o.retry)
				})
				if errors.Is(err, fetch.ErrNotModified) && o.onlyNewer {
					err = nil // -N: the local file is as new; nothing to do
				}
				if o.bars != nil {
					o.bars.finish(raw, err)
				}
				if err != nil {
					report(raw, err)
				}
				if o.writeOut != "" {
					mu.Lock()
					writeOutResult(stdout, o.writeOut, res, err, &o)
					mu.Unlock()
				}
			}
		}()
	}
	for _, raw := range urls {
		if ctx.Err() != nil {
			break
		}
		next <- raw
	}
	close(next)
	wg.Wait()
	if errors.Is(ctx.Err(), context.Canceled) {
		return 130
	}
	return code
}

// folderTimes asks for the exact times of the FTP files among urls that
// share a folder, in one pipelined exchange per folder, up to parallel
// folders at once: their transfers then need no MDTM round trip of their
// own. What cannot be asked is left to each transfer.
func folderTimes(ctx context.Context, c *fetch.Client, urls []string, parallel int) map[string]time.Time {
	type folder struct {
		u    *url.URL
		raws map[string][]string // name -> the URLs as given
	}
	folders := map[string]*folder{}
	var order []string
	for _, raw := range urls {
		u, err := parseArg(raw)
		if err != nil || u.Scheme != "ftp" && u.Scheme != "ftps" {
			continue
		}
		fp, err := u.FTP()
		if err != nil || fp.Name == "" || fp.Type == 'd' {
			continue
		}
		dot, err := url.ParseReference("./")
		if err != nil {
			continue
		}
		dir := u.ResolveReference(dot)
		key := dir.String()
		f := folders[key]
		if f == nil {
			f = &folder{u: dir, raws: map[string][]string{}}
			folders[key] = f
			order = append(order, key)
		}
		f.raws[fp.Name] = append(f.raws[fp.Name], raw)
	}
	out := map[string]time.Time{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	slots := make(chan struct{}, max(parallel, 1))
	for _, key := range order {
		f := folders[key]
		if len(f.raws) < 2 {
			continue
		}
		names := make([]string, 0, len(f.raws))
		for n := range f.raws {
			names = append(names, n)
		}
		sort.Strings(names)
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			times, err := c.ModTimes(ctx, f.u, names)
			if err != nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			for n, t := range times {
				for _, raw := range f.raws[n] {
					out[raw] = t
				}
			}
		}()
	}
	wg.Wait()
	return out
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
	switch {
	case errors.Is(err, context.Canceled):
		text = strings.ReplaceAll(text, context.Canceled.Error(), "interrupted")
	case errors.Is(err, context.DeadlineExceeded) && o.maxTime > 0:
		text = strings.ReplaceAll(text, context.DeadlineExceeded.Error(), fmt.Sprintf("timed out after %s s (--max-time)", strconv.FormatFloat(o.maxTime, 'f', -1, 64)))
	}
	return oneLine(text)
}

// checkOptions checks the flags against each other before anything is
// fetched, and returns what is wrong, or "".
func checkOptions(o *options, urls int) string {
	toFile := o.remoteName || o.output != "" && o.output != "-" && !isDevice(o.output)
	switch {
	case o.output != "" && urls > 1:
		return "-o names one file; use -O (and --output-dir) for several URLs"
	case o.head && (o.remoteName || o.output != "" && o.output != "-"):
		return "-I prints metadata only; it does not go with -o or -O"
	case o.parallel > 1 && !o.remoteName:
		return "--parallel writes files: it goes with -O"
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

func readList(name string, stdin io.Reader) ([]string, error) {
	r := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
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

func newClient(o *options, stderr io.Writer) (*fetch.Client, error) {
	c := fetch.NewClient()
	c.ConnectTimeout = seconds(o.connectTimeout)
	c.IdleTimeout = seconds(o.idleTimeout)
	if c.IdleTimeout > 0 {
		c.WAIS.ReplyTimeout = c.IdleTimeout
	}
	c.Mail.Dir, c.URNResolver = o.mailDir, o.urnResolver
	c.NNTP.Server, c.NNTP.Descriptions, c.NNTP.StartTLS, c.NNTP.Articles = o.newsServer, o.newsDescriptions, o.newsTLS, o.newsArticles
	c.MaxBytes = o.maxBytes
	c.MaxRedirects = o.maxRedirs
	if o.maxRedirs == 0 {
		c.MaxRedirects = -1
	}
	c.AllowDowngrade = o.allowDowngrade
	if o.redirectSchemes != "" {
		c.RedirectSchemes = strings.Split(strings.ToLower(o.redirectSchemes), ",")
	}
	for _, p := range strings.FieldsFunc(o.allowPorts, func(r rune) bool { return r == ',' }) {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("--allow-port: %q is not a port number", p)
		}
		c.AllowPorts = append(c.AllowPorts, n)
	}
	switch {
	case o.noNetrc:
		c.NetrcFile = ""
	case o.netrcFile != "":
		c.NetrcFile = o.netrcFile
	}
	if o.insecure {
		c.TLSConfig = &tls.Config{InsecureSkipVerify: true}
	}
	switch o.ftpMethod {
	case "rfc", "single", "none", "auto":
		c.FTP.Method = o.ftpMethod
	default:
		return nil, fmt.Errorf("--ftp-method: %q is not rfc, single, none or auto", o.ftpMethod)
	}
	c.FTP.ExplicitTLS = o.ftpSSL
	c.FTP.NoPipelining = o.ftpSync
	if o.user != "" {
		user, pw, hasPw := strings.Cut(o.user, ":")
		if err := url.CheckArg("--user", o.user); err != nil || user == "" {
			return nil, fmt.Errorf("--user: want USER[:PASSWORD], without CR, LF or NUL")
		}
		c.User, c.Password, c.HasPassword = user, pw, hasPw
	}
	if o.userAgent != "" {
		c.Header = append(c.Header, [2]string{"User-Agent", o.userAgent})
	}
	if o.referer != "" {
		c.Header = append(c.Header, [2]string{"Referer", o.referer})
	}
	for _, h := range o.headers {
		name, value, ok := strings.Cut(h, ":")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || name == "" || strings.ContainsAny(name, " \t") || strings.ContainsAny(h, "\r\n\x00") {
			return nil, fmt.Errorf("--header: %q is not 'NAME: VALUE'", h)
		}
		c.Header = append(c.Header, [2]string{name, value})
	}
	for _, h := range c.Header {
		if strings.ContainsAny(h[1], "\r\n\x00") {
			return nil, fmt.Errorf("%s: CR, LF or NUL in a header value", h[0])
		}
	}
	if o.ftpTimeZone != "" {
		loc, err := ftp.ParseZone(o.ftpTimeZone)
		if err != nil {
			return nil, fmt.Errorf("--ftp-timezone: %w", err)
		}
		c.FTP.TimeZone = loc
	}
	c.FTP.MaxIdle = max(4, o.parallel) // every worker keeps its control connection
	switch o.proxy {
	case "":
	case "-":
		c.Proxy = func(*url.URL) (*url.URL, error) { return nil, nil }
	default:
		raw := o.proxy
		if !strings.Contains(raw, "://") {
			raw = "http://" + raw
		}
		p, err := url.Parse(url.Canonicalize(raw))
		if err != nil {
			return nil, fmt.Errorf("--proxy: %w", err)
		}
		c.Proxy = func(u *url.URL) (*url.URL, error) {
			if u.Scheme == "file" {
				return nil, nil
			}
			return p, nil
		}
	}
	if o.verbose {
		c.Trace = func(u *url.URL, ev fetch.TraceEvent) {
			prefix := "* "
			switch ev.Dir {
			case protocols.TraceSend:
				prefix = "> "
			case protocols.TraceRecv:
				prefix = "< "
			}
			fmt.Fprintln(stderr, prefix+oneLine(ev.Text))
		}
	}
	if f, ok := stderr.(*os.File); ok && !o.silent && o.parallel <= 1 && term.IsTerminal(int(f.Fd())) {
		o.progress = newProgressLine(f)
		c.Progress = o.progress.update
	}
	if _, _, closeTTY, err := openTTY(); err == nil {
		closeTTY()
		c.Prompt = promptPassword // no terminal: the netrc file answers instead
		c.Gopher.Ask = askOnTerminal
	}
	return c, nil
}

// promptPassword asks on the terminal, without echo.
func promptPassword(ctx context.Context, u *url.URL, user string) (string, error) {
	in, out, closeTTY, err := openTTY()
	if err != nil {
		return "", fmt.Errorf("%w: a password is needed for %s and there is no terminal to ask on", fetch.ErrAuth, user)
	}
	defer closeTTY()
	fmt.Fprintf(out, "Password for %s@%s: ", user, u.Host)
	pw, err := term.ReadPassword(int(in.Fd()))
	fmt.Fprintln(out)
	if err != nil {
		return "", fmt.Errorf("%w: reading the password: %w", fetch.ErrAuth, err)
	}
	return string(pw), nil
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

// askOnTerminal asks the questions of a Gopher+ form on the terminal.
func askOnTerminal(ctx context.Context, qs []gopher.Question) ([]string, error) {
	ttyIn, tty, closeTTY, err := openTTY()
	if err != nil {
		return nil, fmt.Errorf("%w: a form needs answers and there is no terminal to ask on", fetch.ErrNotRetrievable)
	}
	defer closeTTY()
	in := bufio.NewReader(ttyIn)
	var answers []string
	for _, q := range qs {
		if !q.NeedsAnswer() {
			fmt.Fprintln(tty, q.Prompt)
			continue
		}
		prompt := q.Prompt
		if len(q.Choices) > 0 {
			prompt += " [" + strings.Join(q.Choices, "/") + "]"
		}
		fmt.Fprint(tty, prompt+" ")
		var a string
		if q.Kind == "AskP" {
			b, err := term.ReadPassword(int(ttyIn.Fd()))
			fmt.Fprintln(tty)
			if err != nil {
				return nil, err
			}
			a = string(b)
		} else {
			line, err := in.ReadString('\n')
			if err != nil && line == "" {
				return nil, err
			}
			a = strings.TrimRight(line, "\r\n")
		}
		if a == "" && len(q.Choices) > 0 {
			a = q.Choices[0]
		}
		answers = append(answers, a)
	}
	return answers, nil
}

// deref retrieves one URL into its destination, noting in res what -w
// reports; res.attempt counts the attempts before this one (--retry).
func deref(ctx context.Context, c *fetch.Client, o *options, raw string, stdout, stderr io.Writer, res *result) error {
	u, err := parseArg(raw)
	if err != nil {
		return &fetch.Error{Op: "get", URL: url.RedactString(raw), Err: fmt.Errorf("%w: %w", fetch.ErrBadURL, err)}
	}
	progress := transferHook(ctx, o, res)
	if o.output != "" && o.output != "-" && !o.remoteName {
		// A device or pipe (-o /dev/null) is written directly, as curl does:
		// it has no final name to protect.
		if st, err := os.Stat(o.output); err == nil && !st.Mode().IsRegular() && !st.IsDir() {
			f, err := os.OpenFile(o.output, os.O_WRONLY, 0)
			if err != nil {
				return fetch.WriteError(err)
			}
			defer f.Close()
			stdout = discardIfNull(f)
			o = &options{output: "-", resume: o.resume, offset: o.offset, head: o.head, raw: o.raw, json: o.json, stdin: o.stdin, login: o.login, limitRate: o.limitRate, retry: o.retry}
		}
	}
	if (o.output != "" && o.output != "-") || o.remoteName {
		dir, name := o.outputDir, ""
		if o.output != "" {
			name = filepath.Base(o.output)
			dir = filepath.Join(o.outputDir, filepath.Dir(o.output))
		}
		if dir == "" {
			dir = "."
		}
		if o.createDirs {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fetch.WriteError(err)
			}
		}
		if name != "" {
			if st, err := os.Stat(filepath.Join(dir, name)); err == nil && st.IsDir() {
				return fetch.WriteError(fmt.Errorf("%s is a folder", filepath.Join(dir, name)))
			}
		}
		resume := o.resume == "-"
		if res.attempt > 0 {
			// A retry continues what the failed attempt left in NAME.part.
			part := name
			if part == "" {
				part = fetch.SuggestedName(u)
			}
			if _, err := os.Stat(filepath.Join(dir, part+fetch.PartSuffix)); err == nil {
				resume = true
			}
		}
		path, err := c.DownloadWith(ctx, u.String(), dir, fetch.DownloadOptions{Name: name, Resume: resume, ModTimeHint: o.modTimes[raw], OnlyNewer: o.onlyNewer, Progress: progress})
		res.filename = path
		return err
	}
	switch u.Scheme {
	case "tn3270":
		return handOver(ctx, u, o.tn3270, o.stdin, stdout, stderr)
	case "rlogin":
		return handOver(ctx, u, o.rlogin, o.stdin, stdout, stderr)
	case "mailto":
		return sendMail(ctx, u, o, c, stderr)
	}
	offset := o.offset + res.written // a retry goes on where standard output stopped
	resp, err := c.FetchWith(ctx, u, fetch.FetchOptions{Offset: offset, HeadOnly: o.head, Progress: progress})
	if err != nil {
		return err
	}
	res.contentType = resp.MediaType
	if resp.Offset != offset && resp.Kind == protocols.KindFile {
		if resp.Offset != 0 {
			resp.Body.Close()
			return &fetch.Error{Op: "get", URL: u.Redacted(), Err: fmt.Errorf("%w: -C %d: the server sent from byte %d", fetch.ErrProtocol, offset, resp.Offset)}
		}
		// The server ignored the offset and sends the whole object: its
		// first bytes are read and dropped here, so that standard output
		// still gets the object from the offset on.
		if _, err := io.CopyN(io.Discard, resp.Body, offset); err != nil {
			resp.Body.Close()
			if errors.Is(err, io.EOF) {
				return &fetch.Error{Op: "get", URL: u.Redacted(), Err: fmt.Errorf("%w: byte %d is beyond the end of the object", fetch.ErrRangeNotSatisfied, offset)}
			}
			return err
		}
	}
	if resp.Kind == protocols.KindSession {
		return interact(ctx, resp, u, o, stdout, stderr)
	}
	defer resp.Body.Close()
	if o.head {
		resp.Body.Close()
		gopherPlusMeta(ctx, c, u, resp)
		if o.json {
			return printMetaJSON(stdout, u, resp)
		}
		return printMeta(stdout, u, resp)
	}
	if resp.Note != "" && resp.Kind != protocols.KindSearchIndex {
		fmt.Fprintln(stderr, "deref: "+resp.Note)
	}
	switch {
	case (resp.Kind == protocols.KindDirectory || resp.Kind == protocols.KindArticleList) && !o.raw:
		if err := printEntries(stdout, resp.Entries, o.json); err != nil {
			return fetch.WriteError(err)
		}
		return resp.Body.Close()
	case resp.Kind == protocols.KindSearchIndex:
		fmt.Fprintln(stderr, "deref: "+u.Redacted()+" is a searchable index; add ?words to search it")
	}

	out := stdout
	if o.retry > 0 {
		out = &countingWriter{w: stdout, n: &res.written} // only then: counting costs the copy its fast paths
	}
	if _, err := io.Copy(out, resp.Body); err != nil {
		return err
	}
	return resp.Body.Close()
}

// gopherPlusMeta asks a Gopher+ server for what plain Gopher lacks: the
// item's size (the "+" view's length header) and its attributes ("!").
// A server that does not speak Gopher+ leaves r as it was.
func gopherPlusMeta(ctx context.Context, c *fetch.Client, u *url.URL, r *fetch.Response) {
	g, err := u.Gopher()
	if err != nil || (u.Scheme != "gopher" && u.Scheme != "gophers") || g.HasPlus || g.Type == '7' {
		return
	}
	if g.Type != '1' {
		if pu, err := gopher.WithPlus(u, "+"); err == nil {
			if pr, err := c.Fetch(ctx, pu, 0); err == nil {
				pr.Body.Close()
				if pr.Size >= 0 {
					r.Size = pr.Size
				}
			}
		}
	}
	if au, err := gopher.WithPlus(u, "!"); err == nil {
		if ar, err := c.Fetch(ctx, au, 0); err == nil {
			ar.Body.Close()
			r.Attributes = ar.Attributes
			if t, ok := gopher.ModDate(ar.Attributes); ok && r.ModTime.IsZero() {
				r.ModTime = t
			}
		}
	}
}

func printMeta(w io.Writer, u *url.URL, r *fetch.Response) error {
	var b strings.Builder
	fmt.Fprintf(&b, "URL: %s\nKind: %s\n", u.Redacted(), r.Kind)
	if r.Size >= 0 {
		fmt.Fprintf(&b, "Size: %d\n", r.Size)
	}
	if r.MediaType != "" {
		fmt.Fprintf(&b, "Type: %s\n", r.MediaType)
	}
	if !r.ModTime.IsZero() {
		fmt.Fprintf(&b, "Modified: %s\n", r.ModTime.UTC().Format(time.RFC3339))
	}
	if r.Name != "" {
		fmt.Fprintf(&b, "Name: %s\n", r.Name)
	}
	if r.Entries != nil {
		fmt.Fprintf(&b, "Entries: %d\n", len(r.Entries))
	}
	if r.Note != "" {
		fmt.Fprintf(&b, "Note: %s\n", r.Note)
	}
	for _, a := range r.Attributes {
		fmt.Fprintf(&b, "+%s: %s\n", a.Name, oneLine(a.Value))
		for _, l := range a.Lines {
			fmt.Fprintf(&b, "  %s\n", oneLine(l))
		}
	}
	_, err := io.WriteString(w, b.String())
	return fetch.WriteError(err)
}

// jsonMeta is what -I --json prints: one object of the metadata.
type jsonMeta struct {
	URL        string          `json:"url"`
	Kind       string          `json:"kind"`
	Size       *int64          `json:"size,omitempty"`
	Type       string          `json:"type,omitempty"`
	Modified   string          `json:"modified,omitempty"`
	Name       string          `json:"name,omitempty"`
	Status     string          `json:"status,omitempty"`
	Entries    *int            `json:"entries,omitempty"`
	Note       string          `json:"note,omitempty"`
	Attributes []jsonAttribute `json:"attributes,omitempty"`
}

type jsonAttribute struct {
	Name  string   `json:"name"`
	Value string   `json:"value"`
	Lines []string `json:"lines,omitempty"`
}

func printMetaJSON(w io.Writer, u *url.URL, r *fetch.Response) error {
	m := jsonMeta{URL: u.Redacted(), Kind: r.Kind.String(), Type: r.MediaType, Name: r.Name, Status: r.Status, Note: r.Note}
	if r.Size >= 0 {
		m.Size = &r.Size
	}
	if !r.ModTime.IsZero() {
		m.Modified = r.ModTime.UTC().Format(time.RFC3339)
	}
	if r.Entries != nil {
		n := len(r.Entries)
		m.Entries = &n
	}
	for _, a := range r.Attributes {
		m.Attributes = append(m.Attributes, jsonAttribute{Name: a.Name, Value: a.Value, Lines: a.Lines})
	}
	b, err := json.Marshal(m)
	if err == nil {
		_, err = w.Write(append(b, '\n'))
	}
	return fetch.WriteError(err)
}

type jsonEntry struct {
	Kind     string `json:"kind"`
	Size     *int64 `json:"size,omitempty"`
	Modified string `json:"modified,omitempty"`
	Name     string `json:"name"`
	URL      string `json:"url,omitempty"`
	Type     string `json:"type,omitempty"`
	Selector string `json:"selector,omitempty"`
	Host     string `json:"host,omitempty"`
	Port     int    `json:"port,omitempty"`
	Score    int64  `json:"score,omitempty"`
	Lines    int64  `json:"lines,omitempty"`
	Number   int64  `json:"number,omitempty"`
	Author   string `json:"author,omitempty"`
	ID       string `json:"message_id,omitempty"`
	Desc     string `json:"description,omitempty"`
	Target   string `json:"target,omitempty"`
}

func printEntries(w io.Writer, entries []fetch.Entry, asJSON bool) error {
	bw := bufio.NewWriter(w)
	if !asJSON {
		if err := protocols.WriteListing(bw, entries); err != nil {
			return err
		}
		return bw.Flush()
	}
	enc := json.NewEncoder(bw)
	for _, e := range entries {
		j := jsonEntry{Kind: e.Kind.String(), Name: e.Name, URL: e.URL, Type: e.Type, Selector: e.Selector, Host: e.Host, Port: e.Port, Score: e.Score, Lines: e.Lines,
			Number: e.Number, Author: e.Author, ID: e.MessageID, Desc: e.Description, Target: e.Target}
		if e.Size >= 0 {
			j.Size = &e.Size
		}
		if !e.ModTime.IsZero() {
			j.Modified = e.ModTime.UTC().Format(time.RFC3339)
		}
		if err := enc.Encode(j); err != nil {
			return err
		}
	}
	return bw.Flush()
}
