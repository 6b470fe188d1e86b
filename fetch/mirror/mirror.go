package mirror

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/crawl"
	"github.com/urlderef/deref/internal/dirlock"
	"github.com/urlderef/deref/internal/safedir"
	"github.com/urlderef/deref/internal/walk"
	"github.com/urlderef/deref/url"
)

// Options adjust a Run. The zero value mirrors everything with four
// transfers at once, transferring every file again and trying none
// twice. deref mirror starts from DefaultOptions instead: unchanged files
// skipped (OnlyNewer) and a temporary failure tried 3 more times
// (Retries), as lftp's mirror and rsync behave.
type Options struct {
	// Parallel is the number of transfers (and listings) at once; 0 means 4.
	Parallel int
	// PerHost caps the connections to one host at once; 0 means Parallel.
	PerHost int

	// OnlyNewer skips files whose local copy is unchanged (see the package
	// documentation for how each protocol tells).
	OnlyNewer bool
	// Checksum, with OnlyNewer, compares the server's digests of a
	// folder's files (Client.Checksums: FTP HASH, XSHA256 and kin) with
	// the local copies' instead of sizes and times, as rclone's --checksum
	// does. Where the server cannot hash, sizes and times decide, and an
	// EventNote says so once per host.
	Checksum bool
	// ChecksumFile names a sums file (such as SHA256SUMS) looked for in
	// every folder: each file it names, in that folder or below it, is
	// verified as it arrives and fails with [fetch.ErrChecksum], keeping
	// nothing under its name, when its digest differs. The sums file
	// nearest to a file counts.
	ChecksumFile string
	// Delete removes local files and folders the server no longer lists.
	// It never touches anything outside the destination, nor what Include
	// and Exclude leave out, nor folders that were not listed.
	Delete bool
	// Include, when not empty, keeps only files matching one of these
	// globs (path.Match syntax); Exclude leaves out files and folders that
	// match one. A glob with a "/" matches the path below the start, one
	// without matches the name.
	Include, Exclude []string
	// Rules are lftp's mirror filters (-i, -x, -I, -X), in order: the
	// last rule that matches a file decides whether it is mirrored; a file
	// no rule matches is left out when the first rule includes, and
	// mirrored otherwise. A folder is left out when the last rule that
	// matches it excludes. They apply besides Include and Exclude.
	Rules []Rule
	// MaxDepth > 0 limits the tree to that many levels, counting the start
	// directory as level 1 (1: only its own files); 0 means no limit.
	MaxDepth int
	// OnlyMissing fetches only the files that are not there yet, leaving
	// those there as they are whatever the server's copy (lftp's
	// --only-missing).
	OnlyMissing bool
	// NewerThan and OlderThan, when set, leave out the files whose
	// listed time is not after NewerThan, or not before OlderThan (lftp's
	// --newer-than and --older-than); a file the listing gives no time
	// for is mirrored.
	NewerThan, OlderThan time.Time
	// MinSize and MaxSize, when positive, leave out the files whose
	// listed size is below MinSize or above MaxSize (lftp's
	// --size-range); a file the listing gives no size for is mirrored.
	MinSize, MaxSize int64
	// DryRun decides and reports but changes nothing locally.
	DryRun bool
	// LimitRate caps the bytes per second of all transfers together; 0
	// means no cap.
	LimitRate float64
	// Segments > 1 fetches each file of at least SegmentMin bytes (and
	// 2 MiB) over that many connections at once, as
	// [fetch.DownloadOptions.Segments] does (through Client.DownloadWith,
	// which also honours Client.Retry); not with LimitRate, nor for a
	// file HTTP is asked for on condition (OnlyNewer).
	Segments   int
	SegmentMin int64
	// Retries is how many more times a temporary failure (FTP 4xx and 421,
	// time-outs, dropped connections, HTTP 429 and 5xx) is tried again,
	// after an exponential backoff with jitter that honours Retry-After.
	Retries int
	// RetryWait is the first backoff; 0 means one second. It doubles with
	// each attempt, up to a minute.
	RetryWait time.Duration
	// RetryRefused tries a refused connection again too (fetch.Retry's
	// Refused); by default nothing listening is a failure that stays.
	RetryRefused bool
	// FollowSymlinks fetches the target of a remote symbolic link as a
	// regular file when the target lies inside the mirrored tree; without
	// it, links are skipped and reported. Links known to lead to a folder
	// are reported either way, never followed.
	FollowSymlinks bool
	// FoldCase treats names that differ only in case as the same file even
	// where the destination's file system tells them apart (it is probed,
	// and folding is on where it folds case).
	FoldCase bool
	// FailuresOnly keeps out of Report.Items the paths fetched, updated
	// and deleted, listing only those refused and failed (the counts stay
	// whole): a mirror of millions of files then holds in memory no more
	// than its largest folder.
	FailuresOnly bool
	// Frontier, when set, shares the mirror with every process given the
	// same frontier (fetch/crawl/shared keeps one in Redis or Valkey, on
	// one machine or many): each folder is listed, and its files
	// mirrored, by the one worker that claims it, into that worker's
	// destination, so that the workers' destinations together hold the
	// tree. Not with ChecksumFile (a folder's sums file is read where the
	// folder is) nor Shards.
	Frontier crawl.Frontier
	// Shard and Shards mirror a deterministic part of the tree: the files
	// whose path hashes to Shard, 0 <= Shard < Shards. Shards 0 or 1 means
	// the whole tree. Folders are listed by every shard.
	Shard, Shards int
	// Events, when set, is called for each step; calls may come from
	// several goroutines at once.
	Events func(Event)
}

// DefaultOptions are the options deref mirror starts from: OnlyNewer
// (a rerun fetches only what changed) and Retries 3.
func DefaultOptions() Options {
	return Options{OnlyNewer: true, Retries: 3}
}

// Action is what happened, or would happen, to one path.
type Action int

// Actions reported in Events and the Report.
const (
	ActionNew       Action = iota + 1 // fetched, not there before
	ActionUpdate                      // fetched again, it had changed
	ActionUnchanged                   // left as it was
	ActionDelete                      // removed locally, gone from the server
	ActionFail                        // could not be listed, fetched or written
	ActionRefuse                      // not mirrored: an unsafe name, a link, a name collision
	ActionCheck                       // a dry run's file that only the server can tell changed or not (HTTP If-Modified-Since)
)

var actionNames = [...]string{"", "new", "update", "unchanged", "delete", "fail", "refuse", "check"}

// String names the action as the mirror's report does.
func (a Action) String() string {
	if int(a) < len(actionNames) && a > 0 {
		return actionNames[a]
	}
	return "unknown"
}

// MarshalText makes an Action its name in JSON.
func (a Action) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText reads an Action's name, so that a report can be read back.
func (a *Action) UnmarshalText(b []byte) error {
	for i, n := range actionNames {
		if i > 0 && n == string(b) {
			*a = Action(i)
			return nil
		}
	}
	return fmt.Errorf("mirror: unknown action %q", b)
}

// EventType says what an Event reports.
type EventType int

// Event types.
const (
	EventList     EventType = iota + 1 // a folder was listed
	EventStart                         // a transfer begins
	EventProgress                      // bytes arrived
	EventRetry                         // a temporary failure, tried again after Wait
	EventDone                          // a path is settled: see Action
	EventNote                          // a remark about the run, in Reason
)

// Event is one step of a Run.
type Event struct {
	Type   EventType
	Path   string // below the destination, "/"-separated; "" for the start
	URL    string // password redacted
	Action Action // for EventDone
	Size   int64  // the object's size when known, else -1
	Bytes  int64  // bytes transferred so far (EventProgress) or in all (EventDone)
	Offset int64  // where a resumed transfer started
	Wait   time.Duration
	Err    error  // for ActionFail and EventRetry
	Reason string // for ActionRefuse, ActionUnchanged and ActionDelete
}

// Item is one path of the Report.
type Item struct {
	Path   string `json:"path"`
	URL    string `json:"url,omitempty"`
	Action Action `json:"action"`
	Bytes  int64  `json:"bytes,omitempty"`
	Reason string `json:"reason,omitempty"`
	Error  string `json:"error,omitempty"`
	err    error
}

// Err returns the error of a failed item.
func (it Item) Err() error { return it.err }

// Report sums up a Run. Items lists every path that was fetched,
// deleted, refused or failed (in a dry run: that would be), sorted by
// path; unchanged files are only counted.
type Report struct {
	New       int           `json:"new"`
	Updated   int           `json:"updated"`
	Unchanged int           `json:"unchanged"`
	Deleted   int           `json:"deleted"`
	Refused   int           `json:"refused"`
	Failed    int           `json:"failed"`
	Checked   int           `json:"checked,omitempty"` // in a dry run: files whose change only the server can tell
	Bytes     int64         `json:"bytes"`
	Duration  time.Duration `json:"-"`
	Seconds   float64       `json:"seconds"`
	DryRun    bool          `json:"dry_run,omitempty"`
	// Interrupted says the run was stopped (its context cancelled or
	// past its deadline) before it had settled every path.
	Interrupted bool   `json:"interrupted,omitempty"`
	Items       []Item `json:"items"`
}

// FirstError returns the error of the first failed item, or nil.
func (r *Report) FirstError() error {
	for _, it := range r.Items {
		if it.Action == ActionFail {
			return it.err
		}
	}
	return nil
}

// Run mirrors the tree at src into the folder dst, which is created if
// missing. It returns an error only when the mirror cannot start (a bad
// URL, a start that cannot be listed, a destination that cannot be
// opened); failures of single files are counted in the Report, and Run
// then returns the Report with a nil error. While it writes, Run holds
// the folder's lock (internal/dirlock; Unix and Windows): a second Run into the
// same folder, in this process or another, is refused at once, unless
// both split the tree between them (Shards, a shared Frontier).
// Cancelling ctx stops the run;
// what was complete stays, partial files stay under their .part names.
func Run(ctx context.Context, c *fetch.Client, src, dst string, o Options) (*Report, error) {
	start := time.Now()
	u, err := url.Parse(src)
	if err != nil {
		return nil, &fetch.Error{Op: "mirror", URL: url.RedactString(src), Err: fmt.Errorf("%w: %w", fetch.ErrBadURL, err)}
	}
	m := &run{c: c, o: o, start: u, report: &Report{DryRun: o.DryRun}}
	// A full or read-only disk stops the run (unwritable): nothing starts
	// after it, what is under way ends, its NAME.part kept.
	parent := ctx
	ctx, m.stop = context.WithCancelCause(ctx)
	defer m.stop(nil)
	m.hosts.PerHost = o.PerHost
	if m.hosts.PerHost <= 0 {
		m.hosts.PerHost = m.parallel()
	}
	if m.tree, err = c.Tree(u); err != nil {
		return nil, &fetch.Error{Op: "mirror", URL: u.Redacted(), Err: err}
	}
	if err := m.checkOptions(); err != nil {
		return nil, err
	}
	if !o.DryRun {
		// Two runs into one folder would rename each other's NAME.part
		// files: the second is refused. Runs that split a tree between
		// them (Shards, a shared Frontier) share the folder.
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return nil, &fetch.Error{Op: "mirror", URL: u.Redacted(), Err: fetch.WriteError(err)}
		}
		release, err := dirlock.Lock(dst, o.Shards > 1 || o.Frontier != nil)
		if errors.Is(err, dirlock.ErrLocked) {
			err = fmt.Errorf("%s is being written by another mirror (it holds the folder's lock): wait for it to end, or mirror into another folder", dst)
		}
		if err != nil {
			return nil, &fetch.Error{Op: "mirror", URL: u.Redacted(), Err: err}
		}
		defer release()
	}
	if err := m.openRoot(dst); err != nil {
		return nil, &fetch.Error{Op: "mirror", URL: u.Redacted(), Err: fetch.WriteError(err)}
	}
	if m.root != nil {
		defer m.root.Close()
		defer m.closeDirs()
	}
	m.limiter = walk.NewLimiter(o.LimitRate)
	r := m.tree.Root()
	top := &dirNode{u: r.URL, depth: 1, sel: r.Selector}
	listing, err := m.list(ctx, top)
	if err != nil {
		return nil, &fetch.Error{Op: "mirror", URL: u.Redacted(), Err: err}
	}
	m.emit(Event{Type: EventList, Path: "", URL: top.u.Redacted(), Size: -1})
	if o.Frontier != nil {
		if err := m.runShared(ctx, top); err != nil {
			return m.finish(start), &fetch.Error{Op: "mirror", URL: u.Redacted(), Err: err}
		}
	} else {
		m.runJobs(ctx, top, listing)
	}
	m.mu.Lock()
	full := m.full
	m.mu.Unlock()
	if full {
		return m.finish(start), nil // the failure is the report's (FirstError)
	}
	if err := parent.Err(); err != nil {
		r := m.finish(start)
		r.Interrupted = true
		return r, err
	}
	return m.finish(start), nil
}

type run struct {
	c       *fetch.Client
	o       Options
	start   *url.URL
	tree    *fetch.Tree
	root    *os.Root // nil in a dry run whose destination does not exist
	fold    bool
	limiter *rate.Limiter

	hosts walk.Hosts
	// waiting counts the files queued and not yet taken.
	waiting atomic.Int64

	dirMu sync.Mutex
	dirs  map[string]*safedir.Dir // folders written into, by path in DST ("" or "a/b/")

	mu     sync.Mutex
	report *Report
	noted  map[string]bool // the keys of notes emitted once
	// stop ends the run; full says a disk-full failure ended it.
	stop func(error)
	full bool
}

func (m *run) checkOptions() error {
	globs := append(append([]string{}, m.o.Include...), m.o.Exclude...)
	for _, r := range m.o.Rules {
		if r.Regex == nil {
			globs = append(globs, r.Glob)
		}
	}
	for _, g := range globs {
		if _, err := path.Match(g, ""); err != nil {
			return fmt.Errorf("mirror: bad glob %q: %w", g, err)
		}
	}
	if m.o.Shards > 1 && (m.o.Shard < 0 || m.o.Shard >= m.o.Shards) {
		return fmt.Errorf("mirror: shard %d is not in 0..%d", m.o.Shard, m.o.Shards-1)
	}
	if m.o.Frontier != nil && (m.o.ChecksumFile != "" || m.o.Shards > 1) {
		return errors.New("mirror: a shared frontier goes without ChecksumFile and Shards")
	}
	return nil
}

// openRoot opens (creating it unless dry) the destination and probes
// whether its file system folds case.
func (m *run) openRoot(dst string) error {
	if !m.o.DryRun {
		if err := os.MkdirAll(dst, 0o755); err != nil {
			return err
		}
	}
	r, err := os.OpenRoot(dst)
	if err != nil {
		if m.o.DryRun && errors.Is(err, fs.ErrNotExist) {
			m.fold = m.o.FoldCase
			return nil
		}
		return err
	}
	m.root = r
	m.fold = m.o.FoldCase || (!m.o.DryRun && foldsCase(r))
	return nil
}

// foldsCase creates a probe file and looks for it under another case.
// The probe is named NAME.part, as what a run cut short leaves is: a
// mirror killed between its creation and its removal leaves it as one,
// and the next run removes it (removeStaleProbes).
func foldsCase(r *os.Root) bool {
	removeStaleProbes(r)
	name := fmt.Sprintf(".deref-case-%d-%d.part", os.Getpid(), rand.Uint32())
	f, err := r.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return false
	}
	f.Close()
	defer r.Remove(name)
	_, err = r.Stat(strings.ToUpper(name))
	return err == nil
}

// removeStaleProbes removes the probes of foldsCase that a mirror killed
// left in the destination's top folder: those whose process is gone
// (probeStale).
func removeStaleProbes(r *os.Root) {
	d, err := r.Open(".")
	if err != nil {
		return
	}
	entries, _ := d.ReadDir(-1)
	d.Close()
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), ".deref-case-")
		if !ok || !e.Type().IsRegular() {
			continue
		}
		pid, _, _ := strings.Cut(rest, "-")
		n, err := strconv.Atoi(pid)
		if err != nil || n == os.Getpid() {
			continue
		}
		if info, err := e.Info(); err == nil && probeStale(n, info.ModTime()) {
			r.Remove(e.Name())
		}
	}
}

func (m *run) emit(ev Event) {
	if ev.Type == EventDone && ev.Action == ActionFail && fetch.Unwritable(ev.Err) {
		m.mu.Lock()
		said := m.full
		m.full = true
		m.mu.Unlock()
		if said {
			return // said once: the run stopped for it
		}
		m.stop(ev.Err)
	}
	if ev.Type == EventDone {
		m.record(ev)
	}
	if m.o.Events != nil {
		m.o.Events(ev)
	}
}

func (m *run) record(ev Event) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.report
	switch ev.Action {
	case ActionNew:
		r.New++
	case ActionUpdate:
		r.Updated++
	case ActionUnchanged:
		r.Unchanged++
		r.Bytes += ev.Bytes // fetched again (OnlyNewer off), or 0
		return
	case ActionDelete:
		r.Deleted++
	case ActionRefuse:
		r.Refused++
	case ActionFail:
		r.Failed++
	case ActionCheck:
		r.Checked++
	}
	r.Bytes += ev.Bytes
	if m.o.FailuresOnly && ev.Action != ActionFail && ev.Action != ActionRefuse {
		return
	}
	it := Item{Path: ev.Path, URL: ev.URL, Action: ev.Action, Bytes: ev.Bytes, Reason: ev.Reason, err: ev.Err}
	if ev.Err != nil {
		it.Error = ev.Err.Error()
	}
	r.Items = append(r.Items, it)
}

func (m *run) finish(start time.Time) *Report {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.report
	sort.SliceStable(r.Items, func(i, j int) bool { return r.Items[i].Path < r.Items[j].Path })
	r.Duration = time.Since(start)
	r.Seconds = r.Duration.Seconds()
	return r
}

// hostSlot takes one of the host's connection slots; release gives it back.
func (m *run) hostSlot(ctx context.Context, u *url.URL) (release func(), err error) {
	return m.hosts.Slot(ctx, u.Scheme+"://"+strings.ToLower(u.Site()))
}

func (m *run) parallel() int {
	if m.o.Parallel > 0 {
		return m.o.Parallel
	}
	return 4
}

// A job is a folder to list (or, listed already, to settle) or a file
// to settle.
type job struct {
	dir    *dirNode
	top    bool    // the top folder, listed already
	listed []child // its listing
	file   *fileJob
}

// maxWaiting is how many queued files stop the walk from listing
// further folders first.
const maxWaiting = 4096

// queue is the walk's work list.
type queue = walk.Queue[job]

// runJobs works through the tree with Parallel workers (internal/walk),
// starting from the listed top folder; folders are taken first, so that
// the tree is discovered while files transfer.
func (m *run) runJobs(ctx context.Context, top *dirNode, listing []child) {
	// Folders first, while fewer than maxWaiting files wait; past that,
	// files first, so that the queue holds about the largest folder's
	// files, not the tree's.
	isDir := func(j job) bool { return (j.dir != nil) == (m.waiting.Load() < maxWaiting) }
	walk.Walk(ctx, m.parallel(), isDir, func(ctx context.Context, q *queue, j job) {
		switch {
		case j.top:
			m.settleDir(ctx, q, j.dir, j.listed)
		case j.dir != nil:
			m.listDir(ctx, q, j.dir)
		default:
			m.waiting.Add(-1)
			m.settleFile(ctx, j.file)
		}
	}, job{dir: top, top: true, listed: listing})
}

// dirNode is a remote folder and where it goes locally.
type dirNode struct {
	rel   string // local path below the destination, "" for the top
	u     *url.URL
	depth int    // 1 for the top
	sel   string // the Gopher selector, for menus
	sums  []sums // the sums files of this folder and those above, nearest first
}

// sums is a sums file's digests (Options.ChecksumFile), by path below
// the folder rel it was found in.
type sums struct {
	rel string
	m   map[string]fetch.Checksum
}

// sumFor finds the digest of the file at rel in the nearest sums file
// that names it.
func (d *dirNode) sumFor(rel string) *fetch.Checksum {
	for _, s := range d.sums {
		key := rel
		if s.rel != "" {
			var ok bool
			if key, ok = strings.CutPrefix(rel, s.rel+"/"); !ok {
				continue
			}
		}
		if c, ok := s.m[key]; ok {
			return &c
		}
	}
	return nil
}

// child is one entry of a remote folder, as a source reports it.
type child struct {
	name    string
	dir     bool
	u       *url.URL
	size    int64
	mod     time.Time
	exact   bool // mod is the server's exact time (from MDTM)
	link    bool
	target  string
	refuse  string // set when the source itself refuses the entry
	article bool   // news articles never change
	sel     string
}

// fileJob is a file to settle: compare, fetch or skip.
type fileJob struct {
	rel    string
	c      child
	local  *localFile // nil when there is no local file of that name
	part   int64      // size of NAME.part, -1 when there is none
	update bool
	sum    *fetch.Checksum // the digest it must have (Options.ChecksumFile)
	same   bool            // fetched again, it held the bytes of the copy there
}

type localFile struct {
	size int64
	mod  time.Time
	dir  bool
}

func (m *run) list(ctx context.Context, d *dirNode) ([]child, error) {
	var out []child
	err := m.retry(ctx, d.rel, d.u, func() error {
		release, err := m.hostSlot(ctx, d.u)
		if err != nil {
			return err
		}
		defer release()
		entries, err := m.tree.List(ctx, m.c, fetch.TreeEntry{Dir: true, URL: d.u, Selector: d.sel, Size: -1})
		out = make([]child, len(entries))
		for i, e := range entries {
			out[i] = child{name: e.Name, dir: e.Dir, u: e.URL, size: e.Size, mod: e.ModTime, link: e.Link, target: e.Target, refuse: e.Refuse, article: e.Article, sel: e.Selector}
		}
		return err
	})
	return out, err
}

// listDir lists a folder below the top and settles what it holds.
func (m *run) listDir(ctx context.Context, q *queue, d *dirNode) {
	kids, err := m.list(ctx, d)
	if err != nil {
		if ctx.Err() == nil {
			m.emit(Event{Type: EventDone, Path: d.rel + "/", URL: d.u.Redacted(), Action: ActionFail, Err: err, Size: -1})
		}
		return
	}
	m.emit(Event{Type: EventList, Path: d.rel, URL: d.u.Redacted(), Size: -1})
	m.settleDir(ctx, q, d, kids)
}

// settleDir decides what each entry of a listed folder needs (decide)
// and does it (apply).
func (m *run) settleDir(ctx context.Context, q *queue, d *dirNode, kids []child) {
	locals, err := m.readLocal(d.rel)
	if err != nil {
		m.emit(Event{Type: EventDone, Path: d.rel + "/", Action: ActionFail, Err: fetch.WriteError(err), Size: -1})
		return
	}
	if m.o.ChecksumFile != "" {
		for _, k := range kids {
			if k.name == m.o.ChecksumFile && !k.dir && !k.link {
				m.readSums(ctx, d, &k)
				break
			}
		}
	}
	m.apply(ctx, q, d, m.decide(d, kids, locals))
}

// verdict is what the mirror does with one name of a folder.
type verdict int

const (
	doFetch   verdict = iota + 1 // fetch the file: new, or changed
	doSkip                       // the local copy is unchanged
	doCompare                    // compare the local copy by digest first (Options.Checksum)
	doDescend                    // list the folder
	doDelete                     // remove the local entry: the server no longer has it
	doRefuse                     // report it, mirror nothing
	doFail                       // report a failure: a file here where a folder is there, or the reverse
	doLeave                      // leave it be: filtered out, another shard's, below MaxDepth
)

var verdictNames = [...]string{"", "fetch", "skip", "compare", "descend", "delete", "refuse", "fail", "leave"}

func (v verdict) String() string { return verdictNames[v] }

// decision is the verdict on one name of a folder.
type decision struct {
	do     verdict
	rel    string     // the local path; an unsafe name quoted
	k      child      // the remote entry; a link to be followed as its target
	local  *localFile // the local entry of that name, if any
	part   int64      // the size of NAME.part, -1 when there is none
	reason string     // why it is refused, unchanged or deleted
	err    error      // for doFail
}

// decide judges a listed folder with no I/O: each remote entry against
// the local one of its name, then each local entry the server no longer
// lists. A local name is kept when a remote entry of that name (folded
// where case is folded) was judged at all, whatever the verdict; only
// Delete turns the others into doDelete.
func (m *run) decide(d *dirNode, kids []child, locals map[string]*localFile) []decision {
	kids = slices.Clone(kids)
	sort.SliceStable(kids, func(i, j int) bool { return kids[i].name < kids[j].name })
	remote := map[string]*child{}
	for i := range kids {
		remote[kids[i].name] = &kids[i]
	}
	var out []decision
	kept := map[string]bool{} // local names (folded) the server still has
	seen := map[string]string{}
	for _, k := range kids {
		dec := m.judge(d, k, remote, seen, locals)
		if safeName(k.name) {
			kept[m.key(k.name)] = true
		}
		out = append(out, dec)
	}
	if m.o.Delete {
		out = append(out, m.gone(d, locals, kept)...)
	}
	return out
}

// judge decides one remote entry k.
func (m *run) judge(d *dirNode, k child, remote map[string]*child, seen map[string]string, locals map[string]*localFile) decision {
	rel := join(d.rel, k.name)
	dec := decision{rel: rel, k: k, local: locals[k.name], part: -1}
	refuse := ""
	switch {
	case !safeName(k.name):
		refuse = "unsafe name " + quote(k.name)
		dec.rel = join(d.rel, quote(k.name))
	case k.refuse != "":
		refuse = k.refuse
	case strings.HasSuffix(k.name, partSuffix) && remote[strings.TrimSuffix(k.name, partSuffix)] != nil:
		refuse = "its name is the temporary name of " + quote(strings.TrimSuffix(k.name, partSuffix))
	case strings.HasSuffix(k.name, fetch.SegmentsSuffix) && remote[strings.TrimSuffix(k.name, fetch.SegmentsSuffix)] != nil:
		refuse = "its name is the segment state of " + quote(strings.TrimSuffix(k.name, fetch.SegmentsSuffix))
	}
	if refuse == "" {
		key := m.key(k.name)
		if first, ok := seen[key]; ok {
			refuse = "name collides with " + quote(first) + " on a file system that ignores case"
		} else {
			seen[key] = k.name
		}
	}
	if refuse == "" && m.excluded(rel, k.name, k.dir) {
		dec.do = doLeave
		return dec
	}
	if refuse != "" {
		dec.do, dec.reason = doRefuse, refuse
		return dec
	}
	if k.link {
		target, reason := m.linkTarget(d, k, remote)
		if target == nil {
			dec.do, dec.reason = doRefuse, reason
			return dec
		}
		dec.k = *target
	}
	k = dec.k
	if k.dir {
		switch {
		case m.o.MaxDepth > 0 && d.depth >= m.o.MaxDepth:
			dec.do = doLeave
		case dec.local != nil && !dec.local.dir:
			dec.do, dec.err = doFail, fmt.Errorf("%s is a file here, not a folder", rel)
		default:
			dec.do = doDescend
		}
		return dec
	}
	if !m.inShard(rel) || !m.selected(k) {
		dec.do = doLeave
		return dec
	}
	if p := locals[k.name+partSuffix]; p != nil && !p.dir {
		dec.part = p.size
	}
	switch {
	case dec.local != nil && dec.local.dir:
		dec.do, dec.err = doFail, fmt.Errorf("%s is a folder here, not a file", rel)
	case dec.local != nil && m.o.OnlyMissing:
		dec.do, dec.reason = doSkip, "there already"
	case dec.local != nil && m.o.OnlyNewer && m.o.Checksum && k.target == "":
		dec.do = doCompare
	case dec.local != nil && m.o.OnlyNewer:
		dec.do = doFetch
		if reason, same := unchanged(k, dec.local); same {
			dec.do, dec.reason = doSkip, reason
		}
	default:
		dec.do = doFetch
	}
	return dec
}

// selected applies NewerThan, OlderThan, MinSize and MaxSize to file k,
// by what its listing says of it.
func (m *run) selected(k child) bool {
	switch {
	case !k.mod.IsZero() && !m.o.NewerThan.IsZero() && !k.mod.After(m.o.NewerThan):
		return false
	case !k.mod.IsZero() && !m.o.OlderThan.IsZero() && !k.mod.Before(m.o.OlderThan):
		return false
	case k.size >= 0 && m.o.MinSize > 0 && k.size < m.o.MinSize:
		return false
	case k.size >= 0 && m.o.MaxSize > 0 && k.size > m.o.MaxSize:
		return false
	}
	return true
}

// linkTarget is what a remote symbolic link k is fetched as: its target
// inside the tree, as a regular file; nil and the reason when it is not
// followed. A link to a neighbour in the same folder takes the
// neighbour's size and time from the listing, so that OnlyNewer can tell
// it unchanged; a link to a folder is not followed (the folder is
// mirrored under its own name, and a link to an ancestor would never
// end).
func (m *run) linkTarget(d *dirNode, k child, remote map[string]*child) (*child, string) {
	target, ok := m.followLink(d, k)
	var sib *child
	toDir := false
	if ok {
		if n := strings.TrimSuffix(strings.TrimPrefix(k.target, "./"), "/"); !strings.Contains(n, "/") {
			sib = remote[n]
			toDir = n == "." || n == ".." || sib != nil && sib.dir
		}
	}
	if !ok || toDir {
		reason := "symbolic link"
		if k.target != "" {
			reason += " to " + quote(k.target)
		}
		switch {
		case toDir:
			reason += ", a folder (not followed)"
		case m.o.FollowSymlinks:
			reason += " outside the mirrored tree"
		default:
			reason += " (not followed)"
		}
		return nil, reason
	}
	k.u, k.size, k.mod, k.link, k.dir = target, -1, time.Time{}, false, false
	if sib != nil && !sib.link {
		k.size, k.mod = sib.size, sib.mod
	}
	return &k, ""
}

// gone judges the local entries no remote entry kept: deleted, except an
// unfinished transfer of a kept file (NAME.part and its segment state),
// the case probe, what the filters leave out and another shard's.
func (m *run) gone(d *dirNode, locals map[string]*localFile, kept map[string]bool) []decision {
	names := make([]string, 0, len(locals))
	for n := range locals {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []decision
	for _, n := range names {
		lf := locals[n]
		base := strings.TrimSuffix(strings.TrimSuffix(n, fetch.SegmentsSuffix), partSuffix)
		rel := join(d.rel, n)
		switch {
		case kept[m.key(n)]:
		case base != n && !lf.dir && kept[m.key(base)]: // kept to resume
		case strings.HasPrefix(n, ".deref-case-"):
		case m.excluded(rel, n, lf.dir):
		case lf.dir && m.o.Shards > 1: // folders are shared between shards
		case !lf.dir && !m.inShard(join(d.rel, base)):
		default:
			out = append(out, decision{do: doDelete, rel: rel, local: lf, part: -1, reason: "no longer on the server"})
		}
	}
	return out
}

// apply does what the decisions say: events for refusals, failures and
// unchanged files, folders created and queued, files compared by digest
// and queued, local entries deleted.
func (m *run) apply(ctx context.Context, q *queue, d *dirNode, decisions []decision) {
	var todo, compare []*fileJob
	for _, dec := range decisions {
		k := dec.k
		switch dec.do {
		case doRefuse:
			m.emit(Event{Type: EventDone, Path: dec.rel, URL: redacted(k.u), Action: ActionRefuse, Reason: dec.reason, Size: -1})
		case doFail:
			path := dec.rel
			if k.dir {
				path += "/"
			}
			m.emit(Event{Type: EventDone, Path: path, URL: redacted(k.u), Action: ActionFail, Err: fetch.WriteError(dec.err), Size: -1})
		case doDescend:
			if m.root != nil && !m.o.DryRun {
				if err := m.root.MkdirAll(dec.rel, 0o755); err != nil {
					m.emit(Event{Type: EventDone, Path: dec.rel + "/", URL: redacted(k.u), Action: ActionFail, Err: fetch.WriteError(err), Size: -1})
					continue
				}
			}
			q.Push(job{dir: &dirNode{rel: dec.rel, u: k.u, depth: d.depth + 1, sel: k.sel, sums: d.sums}})
		case doSkip, doCompare, doFetch:
			fj := &fileJob{rel: dec.rel, c: k, local: dec.local, part: dec.part, sum: d.sumFor(dec.rel), update: dec.local != nil}
			switch dec.do {
			case doSkip:
				m.dropPart(fj)
				m.emit(Event{Type: EventDone, Path: dec.rel, URL: redacted(k.u), Action: ActionUnchanged, Reason: dec.reason, Size: k.size})
			case doCompare:
				compare = append(compare, fj)
			default:
				todo = append(todo, fj)
			}
		case doDelete:
			m.remove(dec)
		}
	}
	todo = append(todo, m.compareDigests(ctx, d, compare)...)
	m.exactTimes(ctx, d, todo)
	m.waiting.Add(int64(len(todo)))
	for _, fj := range todo {
		q.Push(job{file: fj})
	}
}

// remove deletes a local entry the server no longer has.
func (m *run) remove(dec decision) {
	ev := Event{Type: EventDone, Path: dec.rel, Action: ActionDelete, Reason: dec.reason, Size: -1}
	if dec.local.dir {
		ev.Path += "/"
	}
	if !m.o.DryRun && m.root != nil {
		var err error
		if dec.local.dir {
			err = m.root.RemoveAll(dec.rel)
		} else {
			err = m.root.Remove(dec.rel)
		}
		if err != nil {
			ev.Action, ev.Err, ev.Reason = ActionFail, fetch.WriteError(err), ""
		}
	}
	m.emit(ev)
}

// exactTimes asks in one exchange (Client.ModTimes) for the exact times
// of the files about to be fetched whose listing gave them only to the
// minute or the day (an FTP server without MLSD, such as vsftpd): their
// transfers then need no MDTM each, a round trip per file. Where the
// protocol or server cannot, each transfer asks for its own. Where each
// transfer asks its time with its own commands (Client.InlineTimes), only
// the files here already are asked beforehand: their times decide whether
// they are fetched.
func (m *run) exactTimes(ctx context.Context, d *dirNode, todo []*fileJob) {
	if m.o.DryRun {
		return
	}
	inline := m.c.InlineTimes(d.u)
	var names []string
	for _, fj := range todo {
		if fj.c.target == "" && !fj.c.mod.IsZero() && precision(fj.c.mod) != time.Second && (fj.update || !inline) {
			names = append(names, fj.c.name)
		}
	}
	if len(names) < 2 {
		return
	}
	release, err := m.hostSlot(ctx, d.u)
	if err != nil {
		return
	}
	defer release()
	times, err := m.c.ModTimes(ctx, d.u, names)
	if err != nil {
		return
	}
	for _, fj := range todo {
		if t, ok := times[fj.c.name]; ok && fj.c.target == "" {
			fj.c.mod, fj.c.exact = t, true
		}
	}
}

// dir opens the folder rel of the destination (a path ending in "/", or
// "") through the root, once: files are then created, timed and renamed
// in it by single names (internal/safedir), which costs less per file
// than the root's own calls and cannot leave the folder either.
func (m *run) dir(rel string) (*safedir.Dir, error) {
	m.dirMu.Lock()
	defer m.dirMu.Unlock()
	if d := m.dirs[rel]; d != nil {
		return d, nil
	}
	d, err := safedir.OpenIn(m.root, strings.TrimSuffix(rel, "/"))
	if err != nil {
		return nil, err
	}
	if m.dirs == nil {
		m.dirs = map[string]*safedir.Dir{}
	}
	m.dirs[rel] = d
	return d, nil
}

func (m *run) closeDirs() {
	m.dirMu.Lock()
	defer m.dirMu.Unlock()
	for _, d := range m.dirs {
		d.Close()
	}
	m.dirs = nil
}

// key is the name as the local file system compares it.
func (m *run) key(name string) string {
	if m.fold {
		return strings.ToLower(name)
	}
	return name
}

// readLocal lists a local folder: name to size, time and kind. A folder
// that does not exist (yet) is empty.
func (m *run) readLocal(rel string) (map[string]*localFile, error) {
	out := map[string]*localFile{}
	if m.root == nil {
		return out, nil
	}
	name := rel
	if name == "" {
		name = "."
	}
	f, err := m.root.Open(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return out, nil
		}
		return nil, err
	}
	defer f.Close()
	des, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	for _, de := range des {
		info, err := de.Info()
		if err != nil {
			continue
		}
		out[de.Name()] = &localFile{size: info.Size(), mod: info.ModTime(), dir: info.IsDir()}
	}
	return out, nil
}

// unchanged compares a listed file with its local copy by size and time,
// at the precision the listing gives.
func unchanged(k child, lf *localFile) (string, bool) {
	if k.article {
		return "articles do not change", true
	}
	if k.size >= 0 && k.size != lf.size {
		return "", false
	}
	if k.mod.IsZero() {
		if k.size >= 0 {
			return "same size", true
		}
		return "", false // nothing to compare by here; HTTP asks the server
	}
	prec := precision(k.mod)
	if k.mod.Truncate(prec).After(lf.mod.Truncate(prec)) {
		return "", false
	}
	return "same size and time", true
}

// precision guesses how precise a listed time is: a Unix LIST line gives
// minutes, or only the day for older files.
func precision(t time.Time) time.Duration {
	t = t.UTC()
	switch {
	case t.Nanosecond() != 0 || t.Second() != 0:
		return time.Second
	case t.Hour() == 0 && t.Minute() == 0:
		return 24 * time.Hour
	}
	return time.Minute
}

// excluded applies Exclude, Rules and Include; Include applies to
// files only.
func (m *run) excluded(rel, name string, dir bool) bool {
	for _, g := range m.o.Exclude {
		if match(g, rel, name) {
			return true
		}
	}
	if len(m.o.Rules) > 0 {
		in := dir || !m.o.Rules[0].Include
		for _, r := range m.o.Rules {
			if r.matches(rel, name, dir) {
				in = r.Include
			}
		}
		if !in {
			return true
		}
	}
	if dir || len(m.o.Include) == 0 {
		return false
	}
	for _, g := range m.o.Include {
		if match(g, rel, name) {
			return false
		}
	}
	return true
}

// A Rule is one of lftp's mirror filters: Include or exclude what
// matches Regex (matched against the path below the start, a folder's
// with a final "/": lftp's -i and -x) or else Glob (as Include's and
// Exclude's globs: lftp's -I and -X).
type Rule struct {
	Include bool
	Regex   *regexp.Regexp
	Glob    string
}

func (r Rule) matches(rel, name string, dir bool) bool {
	if r.Regex != nil {
		if dir {
			rel += "/"
		}
		return r.Regex.MatchString(rel)
	}
	return match(r.Glob, rel, name)
}

func match(glob, rel, name string) bool {
	subject := name
	if strings.Contains(glob, "/") {
		subject = rel
	}
	ok, _ := path.Match(glob, subject)
	return ok
}

func (m *run) inShard(rel string) bool {
	if m.o.Shards <= 1 {
		return true
	}
	return Shard(rel, m.o.Shards) == m.o.Shard
}

// Shard returns the shard, 0 <= shard < n, that the file at rel (the path
// below the destination, "/"-separated) belongs to: FNV-1a of the path,
// modulo n. Every machine computes the same split.
func Shard(rel string, n int) int {
	h := fnv.New32a()
	io.WriteString(h, rel)
	return int(h.Sum32() % uint32(n))
}

// followLink resolves a link's target inside the mirrored tree.
func (m *run) followLink(d *dirNode, k child) (*url.URL, bool) {
	if !m.o.FollowSymlinks || k.target == "" || path.IsAbs(k.target) {
		return nil, false
	}
	p := path.Clean(path.Join(d.rel, k.target))
	if p == "." || p == ".." || strings.HasPrefix(p, "../") {
		return nil, false
	}
	u, err := m.tree.FileURL(p)
	if err != nil {
		return nil, false
	}
	return u, true
}

// dropPart removes a stale NAME.part of a file that needs no transfer.
func (m *run) dropPart(fj *fileJob) {
	if fj.part >= 0 && !m.o.DryRun && m.root != nil {
		m.root.Remove(fj.rel + partSuffix)
		m.root.Remove(fj.rel + fetch.SegmentsSuffix)
	}
}

const partSuffix = fetch.PartSuffix

// safeName is the rule for a remote name that becomes a local one.
func safeName(n string) bool { return safedir.LocalName(n) }

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

func redacted(u *url.URL) string {
	if u == nil {
		return ""
	}
	return u.Redacted()
}
