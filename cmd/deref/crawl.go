package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/crawl"
	"github.com/urlderef/deref/fetch/crawl/shared"
	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

const crawlUsage = `usage: deref crawl [flags] URL...

Walks everything reachable from the URLs within a scope: Gopher menus (every
item, h items with URL: selectors too), HTML pages, FTP folders and
newsgroups, each URL (compared canonically) fetched once, politely: one
connection per host at once unless --per-host says more, and what
robots.txt excludes left alone unless --ignore-robots. With --warc-file
everything fetched is archived (WARC/1.1, --warc-cdx for its index). A
summary goes to standard error at the end (--json: a report on standard
output). With --state FILE a crawl stopped at any point, killed included,
goes on where it was when run again with the same FILE: nothing settled is
fetched again, and the WARC files of all the runs hold each URL once.
Without --warc-file or --output-dir nothing fetched is kept, and the crawl
says so as it starts (--spider: checking links is all it is for). The
exit code is 0 when nothing failed, else the code of the first failure in
this run (see deref -h: 6 for a server that is down, 4 for a link to
nothing), or 1 when only an earlier run's are known.
`

// crawlSettings holds what deref crawl's own flags set.
type crawlSettings struct {
	opts crawl.Options
	wait float64
	// waitRetry: the first wait before a retry (--waitretry).
	waitRetry float64
	scope     string
	domains   string
	asJSON    bool
	// recursive: -r, -l or --max-depth was given (see -p).
	recursive bool
	// mirror: --mirror was given, which writes into the current folder
	// unless --output-dir says another, as wget's does.
	mirror bool
	// deleteAfter: wget's --delete-after, which keeps no files.
	deleteAfter bool
	// spider: wget's --spider, whose report lists the broken links.
	spider bool
	// nv: wget's -nv, a line a file written.
	nv bool
	// worker, lease, status, stateTimeout and stateReplicas: the shared
	// frontier's --worker, --lease, --status, --state-timeout and
	// --state-replicas.
	worker        string
	lease         float64
	status        bool
	stateTimeout  float64
	stateReplicas int
}

func runCrawl(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o := options{maxRedirs: 10, newsArticles: 100, ftpMethod: "rfc"}
	o.c.opts.Retries = 3
	pos, err := parseCommandLine(cmdCrawl, args, &o)
	if err == nil {
		closeAsides, code := openAsides(&o, stdout, &stderr, "deref crawl")
		defer closeAsides()
		if code != 0 {
			return code
		}
	}
	if err == nil && o.inputFile != "" {
		more, lerr := readList(o.inputFile, stdin)
		if lerr != nil {
			return crawlUsageError(stderr, "-i "+lerr.Error())
		}
		pos = append(pos, more...)
	}
	if o.c.mirror && o.c.opts.OutputDir == "" {
		o.c.opts.OutputDir = "." // as wget's --mirror writes
	}
	if o.c.deleteAfter {
		// wget writes each file and removes it: nothing is kept, and what
		// goes with the files has nothing to work on.
		o.c.opts.OutputDir = ""
		o.c.opts.ConvertLinks, o.c.opts.BackupConverted, o.c.opts.OnlyNewer, o.c.opts.NoClobber = false, false, false, false
	}
	if err == nil {
		warcWhole(&o, stderr, "deref crawl")
	}
	switch {
	case errors.Is(err, errHelp):
		writeHelp(stdout, cmdCrawl, crawlUsage)
		return 0
	case err != nil:
		return crawlUsageError(stderr, err.Error())
	case o.version:
		printVersion(stdout)
		return 0
	case (o.c.worker != "" || o.c.lease > 0 || o.c.status || o.c.stateTimeout > 0 || o.c.stateReplicas > 0) && !shared.IsStoreURL(o.c.opts.State):
		return crawlUsageError(stderr, "--worker, --lease, --status, --state-timeout and --state-replicas go with a shared crawl's --state redis://HOST:PORT/DB")
	case o.c.status:
		return printSharedStatus(o.c.opts.State, stdout, stderr)
	case len(pos) == 0:
		return crawlUsageError(stderr, "no URL given")
	case o.c.scope != "" && o.c.scope != "host" && o.c.scope != "prefix":
		return crawlUsageError(stderr, "--scope is host or prefix")
	case o.c.domains != "" && !o.c.opts.SpanHosts:
		return crawlUsageError(stderr, "--domains goes with --span-hosts")
	case o.c.opts.OnlyNewer && o.c.opts.OutputDir == "":
		return crawlUsageError(stderr, "-N (--timestamping, and --mirror) compares the files --output-dir (-P) writes: it goes with --output-dir")
	case o.c.opts.NoClobber && o.c.opts.OutputDir == "":
		return crawlUsageError(stderr, "-nc (--no-clobber) keeps the files --output-dir (-P) writes: it goes with --output-dir")
	case o.c.opts.ConvertLinks && (o.c.opts.OutputDir == "" || o.c.opts.State != ""):
		return crawlUsageError(stderr, "--convert-links rewrites the pages --output-dir writes: it goes with --output-dir, and not with --state")
	case len(o.cookies) > 0:
		return crawlUsageError(stderr, literalCookies)
	}
	co := o.c.opts
	co.RetryRefused = o.retryRefused
	co.RetryStatuses = o.retryStatuses
	co.Wait = seconds(o.c.wait)
	co.LimitRate = float64(o.limitRate)
	if o.c.waitRetry > 0 {
		co.RetryWait = seconds(o.c.waitRetry)
	}
	co.Prefix = o.c.scope == "prefix"
	if co.PageRequisites && !o.c.recursive {
		co.MaxDepth = -1 // wget -p without -r: the pages and what they are shown with
	}
	for _, d := range strings.Split(o.c.domains, ",") {
		if d = strings.TrimSpace(d); d != "" {
			co.Domains = append(co.Domains, d)
		}
	}
	o.memoryJar = true // the cookies servers set are sent back to them, as wget's are
	if err := warcFlagsError(&o); err != nil {
		return crawlUsageError(stderr, err.Error())
	}
	c, err := newClient(&o, stderr)
	if err != nil {
		return crawlUsageError(stderr, err.Error())
	}
	c.Progress = nil
	if shared.IsStoreURL(co.State) {
		f, err := openShared(&o, co, stderr, "deref crawl")
		if err != nil {
			fmt.Fprintln(stderr, "deref crawl: "+oneLine(err.Error()))
			return fetch.ExitCode(err)
		}
		defer f.Close()
		co.Frontier, co.State = f, ""
		if o.warcFile != "" {
			o.warcFile += "-" + f.Worker() // each worker's own series
		}
		if o.wacz != "" {
			o.wacz = strings.TrimSuffix(o.wacz, ".wacz") + "-" + f.Worker() + ".wacz"
		}
	}
	archive, err := openWARC(&o, c, cmdCrawl, args, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "deref crawl: "+oneLine(err.Error()))
		return fetch.ExitCode(fetch.WriteError(err))
	}
	if o.warcFile == "" && co.OutputDir == "" && !o.c.spider && !o.silent {
		fmt.Fprintln(stderr, "deref crawl: neither --warc-file NAME nor --output-dir DIR given: what is fetched is not kept")
	}
	ctx, stop := runContext(&o)
	defer stop()
	var status *crawlStatus
	out := stderr
	if !o.silent && !o.c.asJSON && isTerminal(stderr) {
		status = newCrawlStatus(ctx, stderr)
		out = status.p
	}
	if o.serverResponse {
		// wget's -S: what the servers said, indented, among the messages.
		own := c.Trace
		c.Trace = func(u *url.URL, ev fetch.TraceEvent) {
			if ev.Dir == protocols.TraceRecv {
				errMu.Lock()
				fmt.Fprintln(out, "  "+oneLine(ev.Text))
				errMu.Unlock()
			}
			if own != nil {
				own(u, ev)
			}
		}
	}
	// A full disk stops the crawl: its line is said, and not a line
	// "interrupted" for each URL it stops.
	var diskSaid atomic.Bool
	co.Events = func(ev crawl.Event) {
		if status != nil {
			status.event(ev)
		}
		if fetch.Unwritable(ev.Err) {
			if diskSaid.Swap(true) {
				return
			}
		} else if diskSaid.Load() && errors.Is(ev.Err, context.Canceled) {
			return
		}
		if o.c.nv && ev.Err == nil && ev.File != "" {
			errMu.Lock()
			fmt.Fprintln(out, wgetLine(time.Now(), ev, o.c.opts.OutputDir))
			errMu.Unlock()
		}
		if ev.Err == nil && !ev.Excluded && !o.verbose {
			return
		}
		errMu.Lock()
		defer errMu.Unlock()
		switch {
		case ev.Err != nil:
			cause := ev.Err
			if e, ok := ev.Err.(*fetch.Error); ok && e.URL == ev.URL {
				cause = fetch.Cause(ev.Err) // the line names the URL already
			}
			fmt.Fprintf(out, "deref: %s: %s\n", oneLine(ev.URL), oneLine(contextWords(ev.Err, cause.Error(), &o)))
		case ev.Excluded:
			fmt.Fprintf(out, "deref: skipped %s: robots.txt excludes it\n", oneLine(ev.URL))
		default:
			fmt.Fprintf(out, "%d\t%d\t%s\n", ev.Depth, ev.Bytes, oneLine(ev.URL))
		}
	}
	rep, err := crawl.Run(ctx, c, pos, co)
	if status != nil {
		status.wait()
	}
	saidArchive := false
	if werr := closeWARC(&o, archive, errors.Is(ctx.Err(), context.Canceled), stderr); werr != nil {
		fmt.Fprintln(stderr, "deref crawl: "+oneLine(werr.Error()))
		if err == nil {
			return fetch.ExitCode(werr)
		}
		saidArchive = true
	}
	if cerr := saveCookies(&o, stdout); cerr != nil {
		fmt.Fprintln(stderr, "deref crawl: -c "+oneLine(o.cookieJar+": "+cerr.Error()))
		if err == nil {
			return fetch.ExitCode(cerr)
		}
	}
	if rep != nil {
		if o.c.asJSON {
			if rep.Failures == nil {
				rep.Failures = []string{}
			}
			if werr := json.NewEncoder(stdout).Encode(rep); werr != nil {
				return 8
			}
		} else if !o.silent {
			fmt.Fprint(stderr, crawlSummary(rep))
			if o.c.spider {
				fmt.Fprint(stderr, brokenLinks(rep))
			}
		}
	}
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		return 130
	case saidArchive && errors.Is(err, fetch.ErrWrite):
		return fetch.ExitCode(err) // said on the archive's line
	case fetch.Unwritable(err) && !diskSaid.Load():
		fmt.Fprintln(stderr, "deref crawl: "+oneLine(err.Error())) // before any URL: the state file, the folder
		return fetch.ExitCode(err)
	case fetch.Unwritable(err):
		return fetch.ExitCode(err) // said on its URL's line
	case err != nil:
		fmt.Fprintln(stderr, "deref crawl: "+oneLine(contextWords(err, err.Error(), &o)))
		return fetch.ExitCode(err)
	case rep.Failed > 0 && rep.FirstError != nil:
		return fetch.ExitCode(rep.FirstError) // as the mirror's: the class of the first failure
	case rep.Failed > 0:
		return 1
	}
	return 0
}

// crawlSummary is what deref crawl says at the end: a line per server
// when there were several, then the totals.
func crawlSummary(r *crawl.Report) string {
	var b strings.Builder
	if len(r.Hosts) > 1 {
		for _, h := range r.Hosts {
			fmt.Fprintf(&b, "  %s: %d fetched, %d failed, %d excluded, %s\n", oneLine(h.Host), h.Fetched, h.Failed, h.Excluded, humanBytes(float64(h.Bytes)))
		}
	}
	resumed := ""
	if r.Resumed > 0 {
		resumed = fmt.Sprintf(" (and %d settled before, by --state)", r.Resumed)
	}
	fmt.Fprintf(&b, "deref crawl: %d fetched, %d failed, %d excluded by robots.txt, %s in %.1f s%s\n",
		r.Fetched, r.Failed, r.Excluded, humanBytes(float64(r.Bytes)), r.Seconds, resumed)
	if r.Unchanged > 0 {
		fmt.Fprintf(&b, "deref crawl: %d of them no newer than their files, or there already (-N, -nc), left as they were\n", r.Unchanged)
	}
	if r.Converted > 0 {
		fmt.Fprintf(&b, "deref crawl: the links of %d pages converted\n", r.Converted)
	}
	if r.OverQuota > 0 {
		fmt.Fprintf(&b, "deref crawl: the quota (-Q) passed, %d URLs left unfetched\n", r.OverQuota)
	}
	return b.String()
}

// wgetLine is what wget -nv writes of a file written: the time, the URL,
// the bytes (of the size the server gave), the file and the count of
// tries, as in
//
//	2026-01-02 03:04:05 URL:http://h/a/ [146/146] -> "d/h/a/index.html" [1]
func wgetLine(now time.Time, ev crawl.Event, dir string) string {
	size := strconv.FormatInt(ev.Bytes, 10)
	if ev.Size >= 0 {
		size += "/" + strconv.FormatInt(ev.Size, 10)
	}
	file := path.Join(filepath.ToSlash(dir), ev.File)
	if dir == "." {
		file = ev.File // as wget names what it writes in the current folder
	}
	return fmt.Sprintf("%s URL:%s [%s] -> %q [1]", now.Format("2006-01-02 15:04:05"), oneLine(ev.URL), size, oneLine(filepath.FromSlash(file)))
}

// brokenLinks is wget --spider's report of the URLs that failed: "Found N
// broken links.", a blank line, and the URLs, one a line.
func brokenLinks(r *crawl.Report) string {
	switch len(r.Failures) {
	case 0:
		return "Found no broken links.\n"
	case 1:
		return "Found 1 broken link.\n\n" + failedURL(r.Failures[0]) + "\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Found %d broken links.\n\n", len(r.Failures))
	for _, f := range r.Failures {
		b.WriteString(failedURL(f) + "\n")
	}
	return b.String()
}

// failedURL is the URL of a Report's failure ("URL: error").
func failedURL(f string) string {
	u, _, _ := strings.Cut(f, ": ")
	return oneLine(u)
}

// crawlStatus draws a crawl's progress on a terminal: a line per server
// (the ten most recently begun) and a total line, each with the URLs
// fetched, the bytes and the errors; the total with the URLs queued.
type crawlStatus struct {
	p *mpb.Progress

	mu    sync.Mutex // order and hosts; never held while calling mpb
	hosts map[string]*hostCount
	order []string // hosts with a line, oldest first

	cm    sync.Mutex // the counts, read by the decorators
	total hostCount
	queue int
}

// hostCount is what a status line counts.
type hostCount struct {
	bar                 *mpb.Bar
	fetched, errs, excl int
	bytes               int64
}

const crawlStatusHosts = 10

func newCrawlStatus(ctx context.Context, w io.Writer, opts ...mpb.ContainerOption) *crawlStatus {
	opts = append([]mpb.ContainerOption{mpb.WithOutput(w), mpb.WithWidth(72)}, opts...)
	s := &crawlStatus{p: mpb.NewWithContext(ctx, opts...), hosts: map[string]*hostCount{}}
	s.total.bar = s.p.New(0, mpb.NopStyle(), mpb.BarPriority(1<<30),
		mpb.PrependDecorators(decor.Any(func(decor.Statistics) string {
			s.cm.Lock()
			defer s.cm.Unlock()
			return "total " + s.total.line() + fmt.Sprintf(", %d queued", s.queue)
		})),
		mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_GO)))
	return s
}

// line is a count as a status line says it.
func (h *hostCount) line() string {
	l := fmt.Sprintf("%d fetched, %s", h.fetched, humanBytes(float64(h.bytes)))
	if h.errs > 0 {
		l += fmt.Sprintf(", %d failed", h.errs)
	}
	if h.excl > 0 {
		l += fmt.Sprintf(", %d excluded", h.excl)
	}
	return l
}

func (s *crawlStatus) event(ev crawl.Event) {
	s.mu.Lock()
	h := s.hosts[ev.Host]
	var evicted *mpb.Bar
	if h == nil {
		h = &hostCount{}
		s.hosts[ev.Host] = h
		if len(s.order) == crawlStatusHosts {
			old := s.hosts[s.order[0]]
			evicted, old.bar = old.bar, nil
			s.order = s.order[1:]
		}
		s.order = append(s.order, ev.Host)
		name := shorten(oneLine(ev.Host), 32)
		h.bar = s.p.New(0, mpb.NopStyle(), mpb.BarRemoveOnComplete(),
			mpb.PrependDecorators(decor.Any(func(decor.Statistics) string {
				s.cm.Lock()
				defer s.cm.Unlock()
				return fmt.Sprintf("%-33s", name) + h.line()
			})))
	}
	bar := h.bar
	s.mu.Unlock()
	if evicted != nil {
		evicted.SetTotal(-1, true)
	}
	s.cm.Lock()
	for _, c := range []*hostCount{h, &s.total} {
		switch {
		case ev.Excluded:
			c.excl++
		case ev.Err != nil:
			c.errs++
		default:
			c.fetched++
			c.bytes += ev.Bytes
		}
	}
	s.queue = ev.Queued
	fetched, total := h.fetched, s.total.fetched
	s.cm.Unlock()
	if bar != nil {
		bar.SetCurrent(int64(fetched))
	}
	s.total.bar.SetCurrent(int64(total))
}

// wait ends the lines.
func (s *crawlStatus) wait() {
	s.mu.Lock()
	var bars []*mpb.Bar
	for _, k := range s.order {
		if b := s.hosts[k].bar; b != nil {
			bars = append(bars, b)
		}
	}
	s.mu.Unlock()
	for _, b := range append(bars, s.total.bar) {
		b.SetTotal(-1, true)
	}
	s.p.Wait()
}

// crawlUsageError writes a usage error of deref crawl.
func crawlUsageError(stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "deref crawl: %s\nsee 'deref crawl -h'\n", oneLine(msg))
	return 1
}

// openShared opens the shared frontier --state names, for a worker of
// co's politeness; what the store says of its absence goes to stderr.
func openShared(o *options, co crawl.Options, stderr io.Writer, cmd string) (*shared.Frontier, error) {
	shared.QuietClient()
	lease := seconds(o.c.lease)
	if lease <= 0 {
		idle := seconds(o.idleTimeout)
		if idle <= 0 {
			idle = 2 * time.Minute
		}
		lease = 2 * idle
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return shared.Open(ctx, co.State, shared.Options{Worker: o.c.worker, PerHost: co.PerHost, Wait: co.Wait, RandomWait: co.RandomWait, MaxItems: co.MaxItems, Lease: lease,
		StateTimeout: seconds(o.c.stateTimeout), Replicas: o.c.stateReplicas,
		Notify: func(m string) {
			errMu.Lock()
			defer errMu.Unlock()
			fmt.Fprintln(stderr, cmd+": "+oneLine(m))
		}})
}

// printSharedStatus prints the progress of the shared crawl at raw.
func printSharedStatus(raw string, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	shared.QuietClient()
	f, err := shared.Open(ctx, raw, shared.Options{Watch: true})
	if err != nil {
		fmt.Fprintln(stderr, "deref crawl: "+oneLine(err.Error()))
		return fetch.ExitCode(err)
	}
	defer f.Close()
	st, err := f.Status(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "deref crawl: "+oneLine(err.Error()))
		return 6
	}
	if ok, err := f.Exists(ctx); err == nil && !ok {
		fmt.Fprintln(stderr, "deref crawl: "+oneLine("the store at "+f.Where()+" holds no crawl under its prefix: none began there, or the store lost it (restarted without its data, or its keys deleted)"))
		return 4
	}
	fmt.Fprintf(stdout, "%-40s %9s %7s %9s %7s %8s\n", "host", "queued", "leased", "settled", "failed", "excluded")
	for _, h := range st.Hosts {
		fmt.Fprintf(stdout, "%-40s %9d %7d %9d %7d %8d\n", oneLine(h.Host), h.Queued, h.Leased, h.Settled, h.Failed, h.Excluded)
	}
	fmt.Fprintf(stdout, "%-40s %9d %7d %9d %7d %8d\n", "all", st.Queued, st.Leased, st.Settled, st.Failed, st.Excluded)
	return 0
}
