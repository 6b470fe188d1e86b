// Package crawl walks everything reachable from start URLs within a
// scope: Gopher menus (every item, h items with URL: selectors too), HTML
// pages, FTP folders and newsgroups, each URL (compared canonically)
// fetched once, politely: one connection per host at once by default,
// with an optional wait between a host's requests. Set Client.Recorder
// (fetch/warc) to archive what it fetches. Its workers take their URLs
// from a Frontier: the state file's, in memory by default, or one that
// many processes share (fetch/crawl/shared, in Redis or Valkey).
//
// The crawl's flags and output: deref crawl -h, and deref help warc for
// what its archive holds (cmd/deref/help/warc.md).
package crawl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/links"
	"github.com/urlderef/deref/fetch/warc"
	"github.com/urlderef/deref/internal/keylock"
	"github.com/urlderef/deref/internal/walk"
	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/protocols/gopher"
	"github.com/urlderef/deref/url"
)

// Options adjust a Run.
type Options struct {
	// Parallel is how many retrievals run at once, across hosts; 0 means 4.
	// PerHost caps those to one host; 0 means 1.
	Parallel, PerHost int
	// Wait is the pause after each request before the host's next one;
	// with RandomWait, a random pause from half of Wait to one and a half
	// times it, as wget's --random-wait.
	Wait       time.Duration
	RandomWait bool
	// Retries is how many more times a URL that failed for a reason that
	// may pass (fetch.Temporary: FTP 4xx, HTTP 429 and 5xx, a network
	// failure) is tried, after a backoff (fetch.Retry, as the mirror's)
	// whose first wait is RetryWait (0: one second); the host's slot is
	// kept meanwhile. A refused connection is tried again only with
	// RetryRefused (fetch.Retry's Refused), an HTTP status otherwise
	// final only when RetryStatuses holds it (fetch.Retry's Statuses,
	// wget's --retry-on-http-error).
	Retries       int
	RetryWait     time.Duration
	RetryRefused  bool
	RetryStatuses []int
	// MaxDepth > 0 stops following links that far from a start URL (its
	// links are at depth 1); MaxDepth < 0 follows none (but, with
	// PageRequisites, what the start pages are shown with). MaxItems > 0
	// stops after that many URLs.
	MaxDepth, MaxItems int
	// PageRequisites also fetches what each page fetched is shown with
	// (links.Link's Inline: images, style sheets and what they load,
	// scripts, frames, media), as wget's --page-requisites does: on the
	// start URLs' hosts (or, with SpanHosts, where it may go) even outside
	// Prefix, and past MaxDepth, where a page's other links are not
	// followed.
	PageRequisites bool
	// Prefix keeps the crawl below the start URLs (their canonical form as
	// a prefix) instead of on their hosts and ports.
	Prefix bool
	// SpanHosts lets the crawl go to other hosts and schemes whose host is
	// one of Domains or below one; without Domains, anywhere.
	SpanHosts bool
	Domains   []string
	// OutputDir, when set, is where every object fetched is also written,
	// as a browsable tree: DIR/HOST/PATH (HOST:PORT for a port not the
	// scheme's own; a Gopher URL's path is its selector), with the query
	// after the name (PATH?QUERY), the names made as FileNames says. A URL
	// whose path ends at a folder, and a listing, is written as the
	// folder's index (index.html for HTTP, index for the rest; an FTP
	// listing only with FTPListings, as .listing). A file is
	// written as NAME.part and renamed when whole, through an os.Root on
	// DIR; a URL that would need a name this system cannot hold as one
	// file (a device name on Windows) is not written, and says so.
	OutputDir string
	// FTPListings writes each FTP folder's listing (the server's LIST
	// reply) as .listing in the folder, as wget's --no-remove-listing
	// keeps it; without it, as wget, no listing is written (a file of the
	// folder named index is then the folder's file). Other schemes'
	// listings (Gopher menus, newsgroups) are written as index.
	FTPListings bool
	// FileNames is how a URL's host, path and query become names below
	// OutputDir, as wget's --restrict-file-names; the zero value is
	// wget's default on this system.
	FileNames FileNames
	// NoHostDirs leaves HOST out of OutputDir's paths (wget's -nH), and
	// CutDirs leaves out the first CutDirs folders of PATH (wget's
	// --cut-dirs; never the file's own name). Objects of two hosts, or of
	// two folders cut away, may then share a path: the last written stays.
	NoHostDirs bool
	CutDirs    int
	// NoDirectories writes every file at the top of OutputDir, under its
	// own name (wget's -nd); a name an earlier file of the run took gets
	// .1, .2, ... after it, as wget numbers them. (A file of an earlier
	// run is written over, as the tree's are.)
	NoDirectories bool
	// OnlyNewer, with OutputDir, fetches an object whose file is there
	// already (from an earlier run) only when the server's copy is newer
	// than the file or of another size, as wget's -N (HTTP's
	// If-Modified-Since, FTP's MDTM, Gopher+'s Mod-Date); a file written
	// gets the server's modification time, as wget gives it. A page or
	// style sheet left as it is gives its links from the file. With
	// ConvertLinks, whose pages are rewritten, pages and style sheets are
	// fetched again, as wget's are unless it keeps the originals.
	OnlyNewer bool
	// NoClobber, with OutputDir, fetches nothing whose file is there
	// already, as wget's -nc with -r: a page or style sheet gives its links
	// from the file. With ConvertLinks, pages and style sheets are fetched
	// (their files were rewritten).
	NoClobber bool
	// LimitRate caps the bytes per second of all transfers together; 0
	// means no cap.
	LimitRate float64
	// Accept and Reject are wget's -A and -R: lists of file-name
	// suffixes, or of shell patterns (path.Match) where an entry holds *,
	// ? or [, that the name of a URL's file (the last element of its path)
	// must match, one of Accept when it has any, and none of Reject. A
	// link to a file that does not pass is not followed, unless its name
	// ends in .html or .htm and its links may be followed in turn (it is
	// not at MaxDepth, or PageRequisites); such a page, and a start URL's,
	// is fetched for its links and not written under OutputDir. A
	// folder's URL is fetched, and its index written only if it passes.
	Accept, Reject []string
	// AcceptRegex and RejectRegex, when set, are what a link's URL (as
	// the crawl has it, normalised and without its fragment) must match,
	// and must not, to be followed, as wget's --accept-regex and
	// --reject-regex; pages are not excepted.
	AcceptRegex, RejectRegex *regexp.Regexp
	// IncludeDirs and ExcludeDirs are wget's -I and -X: folders a link's
	// path must be in (one of IncludeDirs, when it has any), and must not
	// be in (ExcludeDirs), to be followed: a folder of the path and those
	// below it, or a shell pattern with *, ? or [ that the path's folders
	// match whole ("/a*/b" is /abc/b).
	IncludeDirs, ExcludeDirs []string
	// IgnoreCase matches Accept, Reject, IncludeDirs and ExcludeDirs
	// without regard to case (wget's --ignore-case).
	IgnoreCase bool
	// ExcludeDomains are domains whose hosts, and those below them, a
	// link is never followed to (wget's --exclude-domains).
	ExcludeDomains []string
	// AdjustExtension names an HTML page written NAME.html and a style
	// sheet NAME.css where its name ends otherwise (wget's -E), so that a
	// browser opening the tree's files takes them for what they are.
	AdjustExtension bool
	// ConvertLinks, with OutputDir, rewrites the links of the HTML pages
	// and style sheets written (their url( )s and @imports, and those of
	// a page's <style> elements) once the crawl is over, as wget's
	// --convert-links does: a
	// link to an object written leads to its file, relative to the
	// page's (a <base href> becomes "."); a relative link to what was not
	// written becomes absolute, so that it still leads to the server. A
	// page is rewritten through NAME.part and renamed over; one with a
	// token past 1 MiB is left as it is. It does not go with State: the
	// pages an earlier run wrote are not known to a resumed one.
	ConvertLinks bool
	// BackupConverted keeps each page ConvertLinks rewrites, as it came,
	// as NAME.orig (wget's -K); OnlyNewer and NoClobber then judge the
	// page by its original and take its links from it, rather than
	// fetching it again.
	BackupConverted bool
	// HTTPSOnly follows only links to https URLs (wget's --https-only);
	// the start URLs are fetched whatever their scheme.
	HTTPSOnly bool
	// RelativeOnly follows only the links of pages and style sheets that
	// name no scheme (wget's --relative: "/x", "x" and "../x", not
	// "http://host/x"); listings' links are followed as they are.
	RelativeOnly bool
	// TrustServerNames names a file written after the URL the last
	// redirect led to, not the one asked for (wget's --trust-server-names).
	TrustServerNames bool
	// DefaultPage is the name of an HTTP folder's page (a URL whose path
	// ends at a folder) below OutputDir; "" is index.html (wget's
	// --default-page).
	DefaultPage string
	// ProtocolDirs puts each file below a folder named after its URL's
	// scheme: DIR/SCHEME/HOST/PATH (wget's --protocol-directories).
	ProtocolDirs bool
	// Quota, when positive, is how many bytes the crawl may fetch: once
	// more than Quota are, it starts no more retrievals (wget's -Q); the
	// ones under way end whole. With State, the URLs left wait for the
	// next run.
	Quota int64
	// IgnoreRobots fetches what a server's robots.txt excludes (HTTP's,
	// and a Gopher server's where it serves one, as gophernicus does);
	// otherwise such URLs are skipped and reported.
	IgnoreRobots bool
	// State, when set, is a file recording the crawl as it goes: the URLs
	// queued, those settled and the links each gave, the robots.txt rules
	// read (JSON lines; see the package's state.go). A crawl stopped at any
	// point, killed included, and run again with the same state file and
	// start URLs goes on from where it was: what was settled is not fetched
	// again, what failed or was cut off is. With a fetch/warc Recorder on
	// the client, each URL's records are held back and written together
	// with its line (warc.Group), and a resumed run first cuts the earlier
	// run's last WARC file after the last records its state names, so that
	// the WARC files of all the runs hold each URL once; the writer should
	// then be created with warc.Options.Numbered, to write beside them.
	State string
	// Frontier, when set, keeps the crawl's URLs in place of State (see
	// Frontier): a store that many processes share, such as package
	// fetch/crawl/shared's. Every URL's records are then held back and
	// written together with its settling, as with State, and a Frontier
	// that is an ArchiveKeeper has its worker's WARC files mended first.
	Frontier Frontier
	// Events, when set, is called for each URL settled; calls may come
	// from several goroutines at once.
	Events func(Event)
}

// Event is one URL settled.
type Event struct {
	URL string // password hidden
	// Host is the server it is on: scheme://host:port.
	Host  string
	Depth int
	Bytes int64
	// Size is the object's size as the server gave it, -1 when it gave
	// none; File is where it was written below OutputDir, "/"-separated,
	// "" when it was not.
	Size  int64
	File  string
	Links int   // the links it gave that were queued
	Err   error // nil when it was fetched
	// Excluded says robots.txt excludes the URL: it was not fetched.
	Excluded bool
	// Queued is how many URLs wait to be fetched, across hosts.
	Queued int
}

// Report sums up a Run.
type Report struct {
	Fetched int `json:"fetched"`
	Failed  int `json:"failed"`
	// Excluded counts the URLs robots.txt kept the crawl from.
	Excluded int     `json:"excluded"`
	Bytes    int64   `json:"bytes"`
	Seconds  float64 `json:"seconds"`
	// Resumed counts the URLs an earlier run had settled, by its State.
	Resumed int `json:"resumed"`
	// Converted counts the pages whose links ConvertLinks rewrote.
	Converted int `json:"converted"`
	// Unchanged counts the URLs OnlyNewer found no newer than their files,
	// which were not fetched again (they count as fetched too).
	Unchanged int `json:"unchanged"`
	// OverQuota counts the URLs left unfetched because Quota was passed.
	OverQuota int `json:"over_quota"`
	// Failures lists the URLs that failed, sorted, with their errors.
	Failures []string `json:"failures"`
	// FirstError is the error of the first URL that failed in this run
	// (nil when none did, or only an earlier run's URLs are known).
	FirstError error `json:"-"`
	// Hosts sums up each server, sorted by Host.
	Hosts []HostReport `json:"hosts"`
}

// HostReport sums up one server of a Run.
type HostReport struct {
	Host     string `json:"host"` // scheme://host:port
	Fetched  int    `json:"fetched"`
	Failed   int    `json:"failed"`
	Excluded int    `json:"excluded"`
	Bytes    int64  `json:"bytes"`
}

type job struct {
	u     *url.URL
	depth int
	plus  bool     // a Gopher+ item: its attribute block is archived too
	from  *url.URL // the page whose link it was, if known: its Referer
}

type run struct {
	c      *fetch.Client
	o      Options
	starts []*url.URL
	front  Frontier
	// durable: the frontier outlives the run (a state file, a shared
	// store), and each URL's records are written with its settling.
	durable bool
	// stop ends the crawl; full (under mu) is the disk-full failure that
	// ended it.
	stop func(error)
	full error

	mu sync.Mutex
	// reached holds the URLs redirects led to, fetched there: a job for
	// one of them (queued before) is not fetched again.
	reached map[string]bool
	// quotaBytes counts the bytes fetched, for Quota, as soon as each
	// retrieval ends.
	quotaBytes int64
	robots     map[string]*robots // by robots.txt URL
	report     Report
	hostOf     map[string]*HostReport
	root       *os.Root    // OutputDir
	dirs       folders     // root's folders being written in
	paths      keylock.Set // the paths being written under root

	// ConvertLinks: the objects written, by linkKey, and the pages.
	written   map[string]string
	pages     []writtenPage
	pageFiles map[string]bool // the pages' paths
	// linksConverted counts the links of the page being rewritten that
	// lead to a file written or were made absolute (the pages are
	// rewritten one after another).
	linksConverted int

	// NoDirectories: the name each tree path was given, and the names
	// taken.
	flat      map[string]string
	flatTaken map[string]bool

	limiter *rate.Limiter // LimitRate's

	archive *warc.Writer   // the client's WARC writer, if it records into one
	commits sync.WaitGroup // groups committed whose lines are still to write
}

// Run crawls from the start URLs. It returns an error when a start URL is
// bad, when the state file cannot be read or written, and when ctx ends
// the crawl; failures of single URLs are counted in the Report.
func Run(ctx context.Context, c *fetch.Client, starts []string, o Options) (*Report, error) {
	begin := time.Now()
	m := &run{c: c, o: o, reached: map[string]bool{}, robots: map[string]*robots{}, hostOf: map[string]*HostReport{}, written: map[string]string{}, pageFiles: map[string]bool{},
		flat: map[string]string{}, flatTaken: map[string]bool{}}
	if o.ConvertLinks && (o.OutputDir == "" || o.State != "" || o.Frontier != nil) {
		return nil, &fetch.Error{Op: "crawl", Err: fmt.Errorf("%w: ConvertLinks goes with OutputDir, and not with State", fetch.ErrBadURL)}
	}
	m.limiter = walk.NewLimiter(o.LimitRate)
	m.o.foldRules()
	for _, raw := range starts {
		u, err := url.Parse(raw)
		if err != nil {
			return nil, &fetch.Error{Op: "crawl", URL: url.RedactString(raw), Err: fmt.Errorf("%w: %w", fetch.ErrBadURL, err)}
		}
		m.starts = append(m.starts, crawlForm(u))
	}
	if rec, ok := c.Recorder.(*warc.Recorder); ok {
		m.archive = rec.W
	}
	m.front, m.durable = o.Frontier, o.Frontier != nil
	if m.front == nil {
		local := newLocalFrontier(&m.o)
		if o.State != "" {
			if err := m.loadState(o.State, local); err != nil {
				return nil, errState(err)
			}
			defer local.state.f.Close()
			m.durable = true
			m.report.Resumed = int(local.settled)
		}
		m.front = local
	}
	if err := m.mendArchive(ctx); err != nil {
		return nil, errState(err)
	}
	var first []Item
	for _, u := range m.starts {
		first = append(first, Item{URL: stateURL(u)})
	}
	if _, err := m.front.Add(ctx, first); err != nil {
		return nil, errState(err)
	}
	if o.OutputDir != "" {
		if err := os.MkdirAll(o.OutputDir, 0o755); err != nil {
			return nil, &fetch.Error{Op: "crawl", Err: fetch.WriteError(err)}
		}
		root, err := os.OpenRoot(o.OutputDir)
		if err != nil {
			return nil, &fetch.Error{Op: "crawl", Err: fetch.WriteError(err)}
		}
		defer root.Close()
		m.root = root
		m.dirs = folders{root: root, open: map[string]*folder{}}
		defer m.dirs.closeAll()
	}
	parallel := o.Parallel
	if parallel <= 0 {
		parallel = 4
	}
	// A full or read-only disk stops the crawl: nothing starts after it,
	// and the URLs under way stay unsettled, to be fetched on a resume.
	parent := ctx
	ctx, m.stop = context.WithCancelCause(ctx)
	defer m.stop(nil)
	m.work(ctx, parallel)
	m.commits.Wait()
	var convertErr error
	if o.ConvertLinks && ctx.Err() == nil {
		m.report.Converted, convertErr = m.convertLinks()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	sort.Strings(m.report.Failures)
	m.report.Seconds = time.Since(begin).Seconds()
	for _, h := range m.hostOf {
		m.report.Hosts = append(m.report.Hosts, *h)
	}
	sort.Slice(m.report.Hosts, func(i, j int) bool { return m.report.Hosts[i].Host < m.report.Hosts[j].Host })
	r := m.report
	if convertErr != nil {
		return &r, &fetch.Error{Op: "crawl", Err: fetch.WriteError(convertErr)}
	}
	if m.full != nil {
		return &r, m.full
	}
	return &r, parent.Err()
}

// mendArchive cuts the records of the WARC files an earlier run (or this
// worker, killed) wrote that its frontier never acknowledged, and has the
// frontier told of each file the archive begins.
func (m *run) mendArchive(ctx context.Context) error {
	ak, ok := m.front.(ArchiveKeeper)
	if !ok || !m.durable || m.archive == nil {
		return nil
	}
	files, err := ak.Files(ctx)
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := mendWARC(f.Path, f.End, m.archive); err != nil {
			return err
		}
	}
	m.archive.OnFile(func(path string) {
		if err := ak.BeganFile(ctx, path); err != nil {
			m.stopFor(errState(err))
		}
	})
	return nil
}

// work runs the crawl's workers until the frontier holds nothing more or
// ctx ends: each claims a URL and visits it. They start as there is work
// for them, so that a large parallel costs nothing until then.
func (m *run) work(ctx context.Context, parallel int) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	running, idle := 0, 0
	var start func()
	worker := func() {
		defer wg.Done()
		for {
			mu.Lock()
			idle++
			mu.Unlock()
			l, err := m.front.Claim(ctx)
			mu.Lock()
			idle--
			more := err == nil && idle == 0 && running < parallel
			if more {
				running++
			}
			mu.Unlock()
			if more {
				start()
			}
			if err != nil {
				if !errors.Is(err, ErrFrontierDone) && ctx.Err() == nil {
					m.stopFor(&fetch.Error{Op: "crawl", Err: fmt.Errorf("the frontier: %w", err)})
				}
				return
			}
			m.visit(ctx, l)
		}
	}
	start = func() {
		wg.Add(1)
		go worker()
	}
	running = 1
	start()
	wg.Wait()
}

// queued is how many URLs wait, when the frontier tells it cheaply; -1
// otherwise.
func (m *run) queued() int {
	if q, ok := m.front.(interface{ Len() int }); ok {
		return q.Len()
	}
	return -1
}

// stopFor stops the crawl for a write failure err, unless one stopped it
// already.
func (m *run) stopFor(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.full == nil {
		m.full = err
		m.stop(err)
	}
}

// inScope says whether a link may be followed.
func (m *run) inScope(u *url.URL) bool {
	if m.o.SpanHosts {
		return len(m.o.Domains) == 0 || hostIn(u, m.o.Domains)
	}
	for _, s := range m.starts {
		switch {
		case m.o.Prefix:
			if strings.HasPrefix(pathKey(u), pathKey(s)) {
				return true
			}
		case u.Scheme == s.Scheme && strings.EqualFold(u.Hostname(), s.Hostname()) && u.PortNumber() == s.PortNumber():
			return true
		}
	}
	return false
}

// requisite says whether what a page is shown with may be fetched
// outside the scope (PageRequisites): where SpanHosts may go, else on a
// start URL's server.
func (m *run) requisite(u *url.URL) bool {
	if m.o.SpanHosts {
		return m.inScope(u)
	}
	for _, s := range m.starts {
		if u.Scheme == s.Scheme && strings.EqualFold(u.Hostname(), s.Hostname()) && u.PortNumber() == s.PortNumber() {
			return true
		}
	}
	return false
}

// pathKey is what "below" compares: the URL, or for Gopher the server
// and selector without the item type, which differs between a menu and
// the items below it.
func pathKey(u *url.URL) string {
	if sel, ok := u.Selector(); ok {
		return u.Scheme + "://" + strings.ToLower(u.Site()) + "\x00" + sel
	}
	return u.String()
}

// visit fetches one leased URL, reads it whole (so that a recorder
// archives it) and settles it with the links it gave.
func (m *run) visit(ctx context.Context, l *Lease) {
	u, err := m.fromState(l.URL)
	if err != nil {
		m.settle(ctx, l, Result{Err: err.Error()}, nil, nil, nil)
		return
	}
	j := job{u: u, depth: l.Depth, plus: l.Plus}
	if l.From != "" {
		j.from, _ = url.Parse(l.From)
	}
	host := l.Host
	if !l.Expires.IsZero() {
		stop := KeepLease(ctx, m.front, l)
		defer stop()
	}
	m.mu.Lock()
	reached := len(m.reached) > 0 && m.reached[l.URL] // no key to make while no redirect came
	m.mu.Unlock()
	if reached {
		// A redirect led to it while it waited, and it was fetched there.
		m.settle(ctx, l, Result{}, nil, nil, nil)
		return
	}
	if m.o.Quota > 0 {
		m.mu.Lock()
		over := m.quotaBytes > m.o.Quota // exceeded, as wget has it
		if over {
			m.report.OverQuota++ // left for a next run, unsettled
		}
		m.mu.Unlock()
		if over {
			m.settle(ctx, l, Result{Again: true}, nil, nil, nil)
			return
		}
	}
	if !m.o.IgnoreRobots {
		r, asked := m.robotsFor(ctx, j.u)
		if r != nil && !r.allowed(robotsPath(j.u)) {
			m.mu.Lock()
			m.report.Excluded++
			m.host(host).Excluded++
			m.mu.Unlock()
			m.settle(ctx, l, Result{Excluded: true}, nil, nil, func([]bool) {
				if m.o.Events != nil {
					m.o.Events(Event{URL: j.u.Redacted(), Host: host, Depth: j.depth, Size: -1, Excluded: true, Queued: m.queued()})
				}
			})
			return
		}
		if asked && m.o.Wait > 0 {
			// robots.txt was a request to the host too: the wait
			// between requests comes after it.
			select {
			case <-time.After(m.pause()):
			case <-ctx.Done():
			}
		}
	}
	fctx, group := ctx, (*warc.Group)(nil)
	if m.durable && m.archive != nil {
		group = m.archive.NewGroup()
		fctx = group.Context(ctx)
	}
	var n int64
	var found []link
	var wrote written // the file the last attempt wrote, if any
	policy := fetch.Retry{Attempts: m.o.Retries, Wait: m.o.RetryWait, Refused: m.o.RetryRefused, Statuses: m.o.RetryStatuses}
	err = policy.Do(ctx, func() error {
		var err error
		n, found, err = m.fetch(fctx, j.u, j.from, &wrote)
		return err
	}, nil)
	if m.o.Quota > 0 {
		m.mu.Lock()
		m.quotaBytes += n // before the host's next retrieval looks
		m.mu.Unlock()
	}
	if err == nil && j.plus && m.c.Recorder != nil {
		m.attributes(fctx, j.u)
	}
	res := Result{Bytes: n}
	var next []Item
	if err == nil {
		leaf := m.o.MaxDepth < 0 || m.o.MaxDepth > 0 && j.depth+1 > m.o.MaxDepth
		from := ""
		for _, lk := range found {
			follow := !leaf && m.inScope(lk.u)
			if !follow && lk.inline && m.o.PageRequisites {
				follow = m.requisite(lk.u)
			}
			if follow && m.o.fetchable(m.c, lk.u, j.depth+1) {
				if from == "" {
					from = j.u.String()
				}
				next = append(next, Item{URL: stateURL(lk.u), Depth: j.depth + 1, Plus: lk.plus, From: from})
			}
		}
	} else {
		res.Err = err.Error()
		res.Again = ctx.Err() != nil || fetch.Temporary(err) || fetch.Refused(err) || errors.Is(err, fetch.ErrWrite)
	}
	m.settle(ctx, l, res, next, group, func(added []bool) {
		if m.o.Events == nil {
			return
		}
		queued := 0
		for _, a := range added {
			if a {
				queued++
			}
		}
		ev := Event{URL: j.u.Redacted(), Host: host, Depth: j.depth, Bytes: n, Size: -1, Links: queued, Err: err, Queued: m.queued()}
		if err == nil {
			ev.File, ev.Size = wrote.rel, wrote.size
		}
		m.o.Events(ev)
	})
	m.mu.Lock()
	defer m.mu.Unlock()
	hr := m.host(host)
	if m.full != nil && err != nil && (fetch.Unwritable(err) || ctx.Err() != nil) {
		return // the disk stopped the crawl, and said so once
	}
	if fetch.Unwritable(err) {
		m.full = &fetch.Error{Op: "crawl", URL: j.u.Redacted(), Err: err}
		m.stop(err)
	}
	if m.full == nil && m.archive != nil && m.archive.Err() != nil {
		// An archive that fails takes no more: what is fetched after it
		// would be settled without its records.
		m.full = fetch.WriteError(fmt.Errorf("--warc-file: %w", m.archive.Err()))
		m.stop(m.full)
	}
	if err != nil {
		m.report.Failed++
		hr.Failed++
		m.report.Failures = append(m.report.Failures, j.u.Redacted()+": "+err.Error())
		if m.report.FirstError == nil {
			m.report.FirstError = err
		}
	} else {
		m.report.Fetched++
		m.report.Bytes += n
		hr.Fetched++
		hr.Bytes += n
	}
}

// pause is the wait between a host's requests.
func (m *run) pause() time.Duration { return pause(m.o.Wait, m.o.RandomWait) }

// hostKey names u's server: scheme://host:port, the port always given.
func hostKey(u *url.URL) string {
	return u.Scheme + "://" + strings.ToLower(u.Hostname()) + ":" + strconv.Itoa(u.PortNumber())
}

// host is the report of a server; m.mu is held.
func (m *run) host(key string) *HostReport {
	h := m.hostOf[key]
	if h == nil {
		h = &HostReport{Host: key}
		m.hostOf[key] = h
	}
	return h
}

// settle ends a lease with r and the links found, and then calls done
// (when set) with which links were new. A durable frontier takes the
// URL with its group's records, if any, once they are written: a URL is
// settled only with its records in the archive. A URL cut off, or failed
// for a reason that may pass (r.Again: fetch.Temporary, a connection
// refused, whose server may be back by then), is not settled: a resumed
// run tries it again. One that failed for good (an HTTP 404, whose
// response is archived) is.
func (m *run) settle(ctx context.Context, l *Lease, r Result, links []Item, g *warc.Group, done func([]bool)) {
	end := func(r Result) {
		added, err := m.front.Settle(context.WithoutCancel(ctx), l, r, links)
		if err != nil && !errors.Is(err, ErrStaleLease) {
			m.stopFor(errState(err))
		}
		if done != nil && !r.Again && err == nil {
			done(added)
		}
	}
	switch {
	case r.Again:
		if g != nil {
			g.Drop()
		}
		end(r)
		if done != nil {
			done(nil)
		}
	case g == nil:
		end(r)
	default:
		m.commits.Add(1)
		g.Commit(func(file string, at int64) {
			defer m.commits.Done()
			if at < 0 { // the archive could not take its records: unsettled, and the crawl stops
				m.stopFor(&fetch.Error{Op: "crawl", URL: url.RedactString(l.URL), Err: fetch.WriteError(fmt.Errorf("--warc-file: %w", m.archive.Err()))})
				end(Result{Again: true})
				return
			}
			r.File, r.At = file, at
			end(r)
		})
	}
}

// attributes reads a Gopher+ item's attribute block, for the recorder to
// archive as the item's metadata; a server that will not give it costs
// nothing but the asking.
func (m *run) attributes(ctx context.Context, u *url.URL) {
	a, err := gopher.WithPlus(u, "!")
	if err != nil {
		return
	}
	if resp, err := m.c.Fetch(ctx, a, 0); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// link is a URL a listing or page gave.
type link struct {
	u      *url.URL // normalised
	key    string   // u as a string
	plus   bool     // a Gopher+ menu's item
	inline bool     // what a page is shown with (links.Link)
}

// fetch reads u whole and returns its size and the links it holds that
// a crawl may follow (fetch.Client.Follows): a listing's entries, an HTML
// page's links and what it is shown with (links.All), what a style
// sheet loads (links.CSS).
func (m *run) fetch(ctx context.Context, u, from *url.URL, wrote *written) (int64, []link, error) {
	*wrote = written{size: -1}
	fo := fetch.FetchOptions{Verbatim: true} // the server's bytes, as wget and the archive want them
	if r := referer(m.c, from, u); r != "" {
		fo.Header = [][2]string{{"Referer", r}} // as wget and browsers send it
	}
	var local *localCopy
	if m.root != nil && (m.o.OnlyNewer || m.o.NoClobber) {
		if local = m.localCopy(u); local != nil && m.o.NoClobber {
			return m.unchanged(u, u, local)
		} else if local != nil {
			fo.IfModifiedSince, fo.LocalSize = local.mod, local.size
		}
	}
	final := u // where redirects led: what the page's links are relative to
	fo.Redirect = func(_, to *url.URL) { final = to }
	resp, err := m.c.FetchWith(ctx, u, fo)
	if final != u {
		m.sawRedirect(final)
	}
	if local != nil && errors.Is(err, fetch.ErrNotModified) {
		return m.unchanged(u, final, local)
	}
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	if resp.Kind == fetch.KindSession { // a start URL's: links to sessions are not followed
		return 0, nil, fetch.NotAnObject(resp, u)
	}
	var hrefs []links.Link
	var base string           // an HTML page's <base href>
	plus := map[string]bool{} // the Gopher+ items of a menu
	var n int64
	var body io.Reader = resp.Body
	if m.limiter != nil {
		body = walk.RateReader(ctx, resp.Body, m.limiter)
	}
	var sink io.Writer = io.Discard
	var file *localFile
	if m.root != nil {
		named := u // wget's name, the URL asked for, unless a folder's
		if m.o.TrustServerNames {
			named = final
		} else if folderOf := *u; u.Path != "" && final.Path == u.Path+"/" {
			folderOf.Path = final.Path
			if crawlForm(&folderOf).String() == crawlForm(final).String() {
				// dir led to dir/: its page is the folder's index, not a
				// file in the way of the folder's files.
				named = final
			}
		}
		if file, err = m.create(ctx, named, resp); err != nil {
			return 0, nil, err
		}
		if file != nil {
			defer file.abandon()
			sink = file.f
		}
	}
	listing := resp.Kind == fetch.KindDirectory || resp.Kind == fetch.KindArticleList
	switch {
	case listing:
		for _, e := range resp.Entries {
			if e.URL != "" && e.Kind != fetch.KindSession && e.Kind != fetch.KindInfo {
				hrefs = append(hrefs, links.Link{URL: e.URL})
				if sc, _ := m.c.Scheme(u.Scheme); sc.Tree == protocols.TreeMenu && strings.HasSuffix(e.Type, "+") { // a Gopher+ item
					plus[e.URL] = true
				}
			}
		}
		n, err = io.Copy(sink, body)
	case resp.MediaType == "text/html" || resp.MediaType == "application/xhtml+xml" || resp.MediaType == "text/css":
		cr := &countReader{r: io.TeeReader(body, sink)}
		if resp.MediaType == "text/css" {
			var css []string
			css, err = links.CSS(cr)
			for _, l := range css {
				hrefs = append(hrefs, links.Link{URL: l, Inline: true}) // what a style sheet loads shows the page
			}
		} else {
			hrefs, base, err = m.pageLinks(cr)
		}
		if err == nil {
			_, err = io.Copy(io.Discard, cr) // the rest, for the archive and the file
		}
		n = cr.n
	default:
		n, err = io.Copy(sink, body)
	}
	if err == nil {
		err = resp.Body.Close()
	}
	if err == nil && file != nil {
		if err = file.finish(); err == nil {
			*wrote = written{file.rel, resp.Size}
		}
		if err == nil && m.o.ConvertLinks {
			kind := notConverted
			switch resp.MediaType {
			case "text/html", "application/xhtml+xml":
				kind = htmlPage
			case "text/css":
				kind = styleSheet
			}
			m.noteWritten(u, final, file.rel, kind)
		}
	}
	if err != nil {
		return n, nil, err
	}
	return n, m.links(final, hrefs, base, listing, plus), nil
}

// links resolves the links a listing, page or style sheet at u gave
// (hrefs; a page's relative to base, when it has one) into those a crawl
// may follow, each once.
func (m *run) links(u *url.URL, hrefs []links.Link, base string, listing bool, plus map[string]bool) []link {
	from := u // what a page's links are relative to
	if base != "" {
		if ref, err := url.ParseReference(url.Canonicalize(base)); err == nil {
			from = u.ResolveReference(ref)
		}
	}
	var out []link
	given := make(map[links.Link]bool, len(hrefs))
	for _, hl := range hrefs {
		if given[hl] {
			continue // a page's links repeat (a menu, a sidebar): each is resolved once
		}
		given[hl] = true
		h := hl.URL
		var l *url.URL
		if listing {
			// A listing's URLs are absolute and taken as they are: a
			// Gopher selector is opaque, its dot segments included.
			var err error
			if l, err = url.Parse(h); err != nil {
				continue
			}
		} else {
			ref, err := url.ParseReference(url.Canonicalize(strings.TrimSpace(h)))
			if err != nil || m.o.RelativeOnly && ref.Scheme != "" {
				continue
			}
			l = from.ResolveReference(ref)
		}
		if !m.c.Follows(u, l) {
			continue // mailto:, telnet:, a remote page's file:
		}
		l.HasFragment, l.Fragment = false, ""
		norm := crawlForm(l)
		key := stateURL(norm)
		if m.seenKey(key) {
			continue // reached by a redirect already
		}
		if !listing {
			if _, err := url.Parse(l.String()); err != nil {
				continue // resolved into no URL of its scheme
			}
		}
		out = append(out, link{norm, key, plus[h], hl.Inline})
	}
	return out
}

// pageLinks reads an HTML page's links and base, none when a robots
// <meta> asks not to follow them (as wget honours it, unless
// IgnoreRobots).
func (m *run) pageLinks(r io.Reader) ([]links.Link, string, error) {
	p, err := links.Read(r)
	if err != nil {
		return nil, "", err
	}
	if p.NoFollow && !m.o.IgnoreRobots {
		return nil, p.Base, nil
	}
	return p.Links, p.Base, nil
}

// written is the file a retrieval wrote below OutputDir ("" for none)
// and the size the server gave for its object (-1 when none).
type written struct {
	rel  string
	size int64
}

// referer is the Referer of an HTTP request for u, whose link was on the
// page from: from without its user, password and fragment; none from
// anything but a web page (a scheme whose folders are index pages), nor
// from a protected scheme to an unprotected one (https to http).
func referer(c *fetch.Client, from, u *url.URL) string {
	if from == nil {
		return ""
	}
	fs, _ := c.Scheme(from.Scheme)
	us, _ := c.Scheme(u.Scheme)
	if fs.Tree != protocols.TreeIndexPage || us.Tree != protocols.TreeIndexPage || fs.Secure && !us.Secure {
		return ""
	}
	r := *from
	r.User, r.HasFragment, r.Fragment = nil, false, ""
	return r.String()
}

// sawRedirect marks the URL a redirect led to as seen and reached, as
// wget has it: a link to it is not fetched again, queued already or not.
// (Within MaxItems or not: it was fetched.)
func (m *run) sawRedirect(to *url.URL) {
	c := *to
	c.HasFragment, c.Fragment = false, ""
	key := stateURL(crawlForm(&c))
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reached[key] = true
}

// seenKey says whether a redirect led to the URL whose normalised form's
// string is key (the frontier knows the others).
func (m *run) seenKey(key string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.reached) > 0 && m.reached[key]
}

type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
