package crawl

import (
	"context"
	"errors"
	"hash/fnv"
	"math/rand/v2"
	"sort"
	"sync"
	"time"

	"github.com/urlderef/deref/url"
)

// A Frontier is what a crawl keeps of its URLs: which it has seen, which
// wait to be fetched, which are being fetched (leased) and which are
// settled. Run works through one: its workers Claim a URL, fetch it, and
// Settle the lease with the result and the links it gave, which the
// frontier queues if it has not seen them. The state file
// (Options.State) is the default, a frontier of one process; package
// fetch/crawl/shared keeps one in Redis or Valkey for crawls of many
// processes and machines. A Go program may set Options.Frontier to a
// store of its own.
//
// The methods are called from several goroutines at once.
type Frontier interface {
	// Add queues the items it has not seen (the start URLs) and says
	// which were new.
	Add(ctx context.Context, items []Item) ([]bool, error)
	// Claim waits until a queued URL may be fetched (its host has a free
	// slot, and its wait between requests has passed) and leases it. It
	// returns ErrFrontierDone once nothing is queued nor leased, and
	// ctx's error when ctx ends first.
	Claim(ctx context.Context) (*Lease, error)
	// Extend keeps a lease from expiring while its URL is fetched; it
	// returns ErrStaleLease for a lease that expired and went to another
	// worker.
	Extend(ctx context.Context, l *Lease) error
	// Settle ends a lease: the URL is settled with r, and links (the new
	// URLs its fetch found, in the order found) are queued, those not seen
	// before, which it reports. With r.Again the URL is not settled but
	// left for a later run (a failure that may pass, a crawl cut off), and
	// links are ignored. A lease that expired and went to another worker
	// is refused with ErrStaleLease, and nothing of it is kept.
	Settle(ctx context.Context, l *Lease, r Result, links []Item) ([]bool, error)
	// Reap gives the URLs of expired leases back to the queue and says
	// how many it gave.
	Reap(ctx context.Context) (int, error)
	// Status is the frontier's progress.
	Status(ctx context.Context) (*Status, error)
}

// RobotsKeeper is a Frontier that keeps the robots.txt rules read, so
// that each is fetched once by the crawl as a whole.
type RobotsKeeper interface {
	// Robots returns the rules kept for the robots.txt at raw, if any.
	Robots(ctx context.Context, raw string) (allow, disallow []string, ok bool, err error)
	// KeepRobots keeps them.
	KeepRobots(ctx context.Context, raw string, allow, disallow []string) error
}

// ArchiveKeeper is a Frontier that knows the WARC files its worker
// writes, and where in each the records of the URLs it settled end
// (Result.File and Result.At), so that a worker run again first cuts the
// records the frontier never acknowledged (see Options.State).
type ArchiveKeeper interface {
	// Files returns the files begun, in order, each with where its
	// settled records end (-1: none settled).
	Files(ctx context.Context) ([]ArchiveFile, error)
	// BeganFile records that the worker began a WARC file.
	BeganFile(ctx context.Context, path string) error
}

// ArchiveFile is a WARC file a worker began, and where its settled
// records end (-1 for none).
type ArchiveFile struct {
	Path string
	End  int64
}

// ErrFrontierDone is Claim's answer once nothing is queued or leased.
var ErrFrontierDone = errors.New("the crawl's frontier holds nothing more")

// ErrStaleLease is the answer to a late Extend or Settle of a lease that
// expired and was given to another worker.
var ErrStaleLease = errors.New("the lease expired and went to another worker")

// Item is a URL of a frontier: in the crawl's normal form (compared as
// strings), without its password.
type Item struct {
	URL   string
	Depth int
	// Plus is set for a Gopher+ item, whose attribute block is archived
	// too.
	Plus bool
	// From is the page that linked it, for a Referer; a frontier may drop
	// it.
	From string
	// Path is where a mirror (fetch/mirror) puts a folder, below its
	// destination, "/"-separated; a crawl leaves it empty. A frontier
	// shared by mirrors keeps it.
	Path string
}

// Lease is a URL claimed for fetching.
type Lease struct {
	Item
	// Host is the server it is on (scheme://host:port).
	Host string
	// Token is the lease's fencing token: a lease given again after it
	// expired has a new one, and the old one's Settle is refused.
	Token int64
	// Expires is when the lease ends unless extended; zero for a lease
	// that does not expire.
	Expires time.Time
	// TTL is how long an Extend keeps it.
	TTL time.Duration
}

// Result is what Settle records of a URL.
type Result struct {
	Bytes    int64
	Err      string // a failure for good
	Excluded bool   // robots.txt excluded it
	// File and At name the WARC file its records are in and where they
	// end, when archived.
	File string
	At   int64
	// Again leaves the URL unsettled, for a later run.
	Again bool
}

// Status is a frontier's progress.
type Status struct {
	Queued, Leased, Settled, Failed, Excluded int64
	// Hosts is the same by server.
	Hosts []HostStatus
}

// HostStatus is a frontier's progress on one server.
type HostStatus struct {
	Host                                      string
	Queued, Leased, Settled, Failed, Excluded int64
}

// Fingerprint is the 64-bit hash a frontier's seen set keeps of a URL
// instead of the URL (FNV-1a of Item.URL). Two URLs of a crawl share
// one with a chance of about n²/2⁶⁵ for n URLs (3·10⁻⁸ at a million).
func Fingerprint(u string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(u))
	return h.Sum64()
}

// localFrontier is the frontier of one process, kept in memory and, with
// a state file, in that file: the default.
type localFrontier struct {
	mu      sync.Mutex
	changed chan struct{} // closed, and made again, on every change
	seen    map[uint64]struct{}
	max     int // MaxItems: how many may be admitted (0: any)
	hosts   map[string]*hostLine
	busy    []*hostLine // the hosts with URLs queued
	seq     uint64      // the order URLs are queued in
	token   int64
	queued  int
	leased  int
	perHost int
	wait    time.Duration
	random  bool
	status  map[string]*HostStatus
	settled int64 // before this run, by the state
	state   *state
	robots  map[string][2][]string
	files   []ArchiveFile
}

// hostLine is a server's queue in a localFrontier.
type hostLine struct {
	key      string
	items    []queuedItem
	leased   int
	next     time.Time // no claim before
	inBusy   bool
	itemHead int
}

type queuedItem struct {
	Item
	seq uint64
}

func newLocalFrontier(o *Options) *localFrontier {
	return &localFrontier{changed: make(chan struct{}), seen: map[uint64]struct{}{}, max: o.MaxItems, hosts: map[string]*hostLine{},
		perHost: max(o.PerHost, 1), wait: o.Wait, random: o.RandomWait, status: map[string]*HostStatus{}, robots: map[string][2][]string{}}
}

// notify wakes the claims waiting; f.mu is held.
func (f *localFrontier) notify() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// admit marks it seen and queues it, if new and within max; f.mu is held.
func (f *localFrontier) admit(it Item) bool {
	fp := Fingerprint(it.URL)
	if _, ok := f.seen[fp]; ok || f.max > 0 && len(f.seen) >= f.max {
		return false
	}
	f.seen[fp] = struct{}{}
	f.push(it)
	return true
}

// push queues it; f.mu is held.
func (f *localFrontier) push(it Item) {
	key := ItemHost(it.URL)
	h := f.hosts[key]
	if h == nil {
		h = &hostLine{key: key}
		f.hosts[key] = h
	}
	f.seq++
	h.items = append(h.items, queuedItem{it, f.seq})
	if !h.inBusy {
		h.inBusy = true
		f.busy = append(f.busy, h)
	}
	f.queued++
	f.hostStatus(key).Queued++
}

func (f *localFrontier) hostStatus(key string) *HostStatus {
	s := f.status[key]
	if s == nil {
		s = &HostStatus{Host: key}
		f.status[key] = s
	}
	return s
}

func (f *localFrontier) Add(_ context.Context, items []Item) ([]bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	added := make([]bool, len(items))
	for i, it := range items {
		if added[i] = f.admit(it); added[i] && f.state != nil {
			f.state.write(stateLine{Start: it.URL})
		}
	}
	f.notify()
	return added, f.stateErr()
}

func (f *localFrontier) stateErr() error {
	if f.state == nil {
		return nil
	}
	f.state.mu.Lock()
	defer f.state.mu.Unlock()
	return f.state.err
}

func (f *localFrontier) Claim(ctx context.Context) (*Lease, error) {
	for {
		f.mu.Lock()
		now := time.Now()
		var pick *hostLine
		var soonest time.Time
		for _, h := range f.busy {
			if h.leased >= f.perHost {
				continue
			}
			if now.Before(h.next) {
				if soonest.IsZero() || h.next.Before(soonest) {
					soonest = h.next
				}
				continue
			}
			if pick == nil || h.items[h.itemHead].seq < pick.items[pick.itemHead].seq {
				pick = h
			}
		}
		if pick != nil {
			it := pick.items[pick.itemHead].Item
			pick.items[pick.itemHead] = queuedItem{}
			pick.itemHead++
			if pick.itemHead == len(pick.items) {
				pick.items, pick.itemHead = pick.items[:0], 0
				f.dropBusy(pick)
			} else if pick.itemHead > 1024 && pick.itemHead*2 > len(pick.items) {
				pick.items = append([]queuedItem(nil), pick.items[pick.itemHead:]...)
				pick.itemHead = 0
			}
			pick.leased++
			if f.wait > 0 {
				pick.next = now.Add(f.pause()) // starts no closer than the wait
			}
			f.queued--
			f.leased++
			f.token++
			st := f.hostStatus(pick.key)
			st.Queued--
			st.Leased++
			l := &Lease{Item: it, Host: pick.key, Token: f.token}
			f.mu.Unlock()
			return l, nil
		}
		if f.queued == 0 && f.leased == 0 {
			f.mu.Unlock()
			return nil, ErrFrontierDone
		}
		changed := f.changed
		f.mu.Unlock()
		var timer <-chan time.Time
		if !soonest.IsZero() {
			t := time.NewTimer(time.Until(soonest))
			defer t.Stop()
			timer = t.C
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-changed:
		case <-timer:
		}
	}
}

// pause is the wait between a host's requests.
func (f *localFrontier) pause() time.Duration { return pause(f.wait, f.random) }

// pause is wait, or with random a random pause from half to one and a
// half times it, as wget's --random-wait.
func pause(wait time.Duration, random bool) time.Duration {
	if random && wait > 0 {
		return wait/2 + rand.N(wait)
	}
	return wait
}

// dropBusy takes h out of the hosts with URLs queued; f.mu is held.
func (f *localFrontier) dropBusy(h *hostLine) {
	h.inBusy = false
	for i, b := range f.busy {
		if b == h {
			f.busy = append(f.busy[:i], f.busy[i+1:]...)
			return
		}
	}
}

func (f *localFrontier) Extend(context.Context, *Lease) error { return nil }

func (f *localFrontier) Reap(context.Context) (int, error) { return 0, nil }

func (f *localFrontier) Settle(_ context.Context, l *Lease, r Result, links []Item) ([]bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := f.hosts[l.Host]
	h.leased--
	if f.wait > 0 {
		if next := time.Now().Add(f.pause()); next.After(h.next) {
			h.next = next // and rests after it
		}
	}
	f.leased--
	st := f.hostStatus(l.Host)
	st.Leased--
	defer f.notify()
	if r.Again {
		return make([]bool, len(links)), nil
	}
	line := stateLine{URL: l.URL, Depth: l.Depth, Bytes: r.Bytes, Err: r.Err, Excluded: r.Excluded, File: r.File, At: r.At}
	added := make([]bool, len(links))
	for i, it := range links {
		if added[i] = f.admit(it); added[i] {
			line.Links = append(line.Links, it.URL)
			if it.Plus {
				line.Plus = append(line.Plus, it.URL)
			}
		}
	}
	switch {
	case r.Excluded:
		st.Excluded++
	case r.Err != "":
		st.Failed++
	default:
		st.Settled++
	}
	if f.state != nil {
		f.state.write(line)
		for i := range f.files {
			if r.File != "" && f.files[i].Path == r.File {
				f.files[i].End = r.At
			}
		}
	}
	return added, f.stateErr()
}

func (f *localFrontier) Status(context.Context) (*Status, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := &Status{Settled: f.settled}
	for _, h := range f.status {
		s.Queued += h.Queued
		s.Leased += h.Leased
		s.Settled += h.Settled
		s.Failed += h.Failed
		s.Excluded += h.Excluded
		s.Hosts = append(s.Hosts, *h)
	}
	sort.Slice(s.Hosts, func(i, j int) bool { return s.Hosts[i].Host < s.Hosts[j].Host })
	return s, nil
}

// Len is how many URLs are queued.
func (f *localFrontier) Len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.queued
}

func (f *localFrontier) Robots(_ context.Context, raw string) ([]string, []string, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.robots[raw]
	return r[0], r[1], ok, nil
}

func (f *localFrontier) KeepRobots(_ context.Context, raw string, allow, disallow []string) error {
	f.mu.Lock()
	f.robots[raw] = [2][]string{allow, disallow}
	f.mu.Unlock()
	if f.state != nil {
		f.state.write(stateLine{Robots: raw, Allow: allow, Disallow: disallow})
	}
	return f.stateErr()
}

func (f *localFrontier) Files(context.Context) ([]ArchiveFile, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]ArchiveFile(nil), f.files...), nil
}

func (f *localFrontier) BeganFile(_ context.Context, path string) error {
	f.mu.Lock()
	f.files = append(f.files, ArchiveFile{path, -1})
	f.mu.Unlock()
	if f.state != nil {
		f.state.write(stateLine{File: path})
	}
	return f.stateErr()
}

// ItemHost is the server of an item's URL (scheme://host:port, the port
// always given), as leases name it: the unit of politeness.
func ItemHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return hostKey(u)
}

// KeepLease extends l every third of its time while its work goes on,
// until the function it returns is called (or ctx ends, or f says the
// lease went to another worker, whose Settle will then be refused).
func KeepLease(ctx context.Context, f Frontier, l *Lease) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(max(l.TTL/3, 10*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if f.Extend(ctx, l) != nil {
					return
				}
			}
		}
	}()
	return func() { close(done) }
}
