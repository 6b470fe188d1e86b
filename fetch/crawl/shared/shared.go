// Package shared keeps a crawl's frontier (crawl.Frontier) in Redis (7
// or later) or Valkey (7.2 or later), so that many processes, on one
// machine or many, work through one crawl: each URL in scope is fetched
// once by the crawl as a whole, and a worker that dies loses nothing,
// its leases expiring and going to another.
//
// Everything a step changes is changed by one Lua script, atomically:
// claiming a URL (the first of a host whose slot is free and whose wait
// has passed, by the store's clock, so that N workers keep one host to
// PerHost connections and Wait apart), settling it with the links it
// gave (queued if their 64-bit fingerprint is not in the seen set, which
// costs about 8 bytes a URL in the store), extending a lease, and giving
// expired leases back. Each lease has a fencing token: a worker that
// comes back after its lease expired has its Settle refused, so that a
// URL is never counted twice.
//
// The store's faults are a worker's: a call waits, with back-off, for
// a store that does not answer (restarting, stopped, busy, paused,
// failing over), at most Options.StateTimeout, then fails with an error
// of fetch.ErrNetwork; each step is safe to repeat after a lost reply
// (a claim asked again finds the lease it made, a settle asked again is
// not counted twice). Each script declares itself (#!lua), so that a
// store full past its maxmemory refuses it whole (fetch.ErrWrite); a
// store that evicts keys is refused at Open. The first worker writes a
// record of the crawl that every script checks: a store emptied under
// the crawl fails with ErrCrawlGone, not as a crawl done.
//
// Open takes redis:// (rediss://, valkey://, valkeys://) for one store,
// redis-sentinel://HOST:PORT,.../MASTER/DB for a master Sentinel
// watches, and redis-cluster://HOST:PORT,.../ for a Redis Cluster, where
// the crawl is kept in shards (one a master, each under its own hash
// tag, a host's URLs in one shard). Options.Replicas waits for replicas
// to hold each settle, so that a failover loses none.
//
// The command's use of it: deref crawl --state redis://HOST:PORT/DB
// (deref help warc).
package shared

import (
	"context"
	crand "crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/crawl"
)

// Options adjust a Frontier; they should be the same for every worker
// of a crawl.
type Options struct {
	// Worker names this worker: its WARC files are recorded under it, and
	// a worker started again with the same name first cuts the records
	// the frontier never acknowledged. "" is the host name and process
	// ID.
	Worker string
	// PerHost caps the connections of the whole crawl to one host (0: 1);
	// Wait is the least time between two requests to it, and after each
	// (RandomWait: from half to one and a half times it).
	PerHost    int
	Wait       time.Duration
	RandomWait bool
	// MaxItems, when positive, is how many URLs the crawl admits (a
	// crawl of one shard only: each shard counts its own).
	MaxItems int
	// Lease is how long a claim holds its URL unless extended (Run
	// extends it every third of it while the transfer goes on); 0 is 4
	// minutes, twice the command's default transfer time-out.
	Lease time.Duration
	// Watch opens the store only to read its Status: the URLs an earlier
	// run left unsettled are not queued again.
	Watch bool
	// Notify, when set, is told when the store stops answering (once)
	// and when it answers again; meanwhile the calls wait for it.
	Notify func(string)
	// StateTimeout is how long the calls wait for a store that does not
	// answer before they fail with an error of fetch.ErrNetwork (the
	// command's exit 6), the leases left to expire; 0 is 5 minutes.
	StateTimeout time.Duration
	// Replicas, when positive, has each settle and add wait (Redis's
	// WAIT, ReplicaWait at a time, for at most StateTimeout) until that
	// many replicas hold it, so that a master's failover loses none of
	// them; a wait is said once.
	Replicas    int
	ReplicaWait time.Duration
}

// Frontier is a crawl.Frontier in Redis or Valkey: one store, one
// watched by Sentinel, or a Redis Cluster.
type Frontier struct {
	rdb     redis.UniversalClient
	cluster *redis.ClusterClient // rdb, when it is a cluster
	prefix  string
	root    string   // the base of the crawl's root keys
	shards  []string // each shard's base
	id      string   // the crawl's id, its record's
	o       Options
	where   string // the store's address, for messages
	next    atomic.Uint32

	mu        sync.Mutex
	down      bool      // the store stopped answering, and it was said
	downSince time.Time // when it stopped
	fewer     bool      // fewer replicas than Replicas acknowledged, and it was said
	// changed is closed, and made again, when this process settles or
	// adds: its claims waiting look again at once (those of other
	// processes look every pollEvery).
	changed chan struct{}
}

// pollEvery is the longest a claim waits before asking the store again
// when nothing may be claimed.
const pollEvery = 50 * time.Millisecond

// wake wakes this process's waiting claims.
func (f *Frontier) wake() {
	f.mu.Lock()
	close(f.changed)
	f.changed = make(chan struct{})
	f.mu.Unlock()
}

var (
	_ crawl.Frontier      = (*Frontier)(nil)
	_ crawl.RobotsKeeper  = (*Frontier)(nil)
	_ crawl.ArchiveKeeper = (*Frontier)(nil)
)

// storeSchemes are the schemes of the stores Open takes, and the kind of
// deployment each names.
var storeSchemes = map[string]string{
	"redis": "one", "rediss": "one", "valkey": "one", "valkeys": "one",
	"redis-sentinel": "sentinel", "rediss-sentinel": "sentinel",
	"redis-cluster": "cluster", "rediss-cluster": "cluster",
}

// IsStoreURL says whether s names a store Open takes (redis:, rediss:,
// valkey:, valkeys:, redis-sentinel:, redis-cluster:), rather than a
// state file.
func IsStoreURL(s string) bool {
	i := strings.Index(s, "://")
	return i >= 0 && storeSchemes[strings.ToLower(s[:i])] != ""
}

// ErrCrawlGone is the error of every call once the crawl's record is no
// longer in the store (a store restarted without its data, or the
// crawl's keys deleted): the worker stops rather than take the empty
// store for a finished crawl. It is a fetch.ErrProtocol.
var ErrCrawlGone = errors.New("the crawl's record is gone from the store")

// Open connects to the store at raw and opens the crawl under its
// prefix, writing the crawl's record if it is the first worker:
//
//	redis://[USER:PASSWORD@]HOST:PORT/DB          one store (rediss: with
//	                                              TLS; valkey:, valkeys:)
//	redis-sentinel://[USER:PASSWORD@]HOST:PORT[,HOST:PORT...]/MASTER/DB
//	                                              the master the sentinels
//	                                              name, followed through a
//	                                              failover
//	redis-cluster://[USER:PASSWORD@]HOST:PORT[,HOST:PORT...]/
//	                                              a Redis Cluster
//
// The query may give prefix=NAME (default "deref"), the keys' prefix:
// every worker opened with the same URL works on the same crawl; and,
// for a cluster, shards=N: the crawl's hosts are spread over N shards,
// each a hash tag of its own placed on its own master (default: one a
// master, as the first worker finds them). It checks that the store
// answers, runs Lua scripts and does not evict keys when full before
// anything is fetched, and queues again the URLs an earlier run left
// unsettled and those a worker of the same name held when it stopped.
func Open(ctx context.Context, raw string, o Options) (*Frontier, error) {
	f, err := dial(raw, &o)
	if err != nil {
		return nil, err
	}
	if err := f.open(ctx, raw); err != nil {
		f.rdb.Close()
		return nil, err
	}
	return f, nil
}

// dial makes the Frontier's client for raw, without a word to the store.
func dial(raw string, o *Options) (*Frontier, error) {
	u, err := url.Parse(raw)
	kind := ""
	if err == nil {
		kind = storeSchemes[strings.ToLower(u.Scheme)]
	}
	if kind == "" {
		return nil, openError(fetch.ErrBadURL, "--state %s: not a store URL (redis://HOST:PORT/DB)", redact(raw))
	}
	prefix, shards := "deref", 0
	q := u.Query()
	for k, v := range q {
		switch {
		case k == "prefix" && v[0] != "":
			if strings.ContainsAny(v[0], "{}") {
				return nil, openError(fetch.ErrBadURL, "--state %s: prefix=%q: a name without braces", redact(raw), v[0])
			}
			prefix = v[0]
		case k == "shards" && kind == "cluster":
			n, err := strconv.Atoi(v[0])
			if err != nil || n < 1 || n > 1024 {
				return nil, openError(fetch.ErrBadURL, "--state %s: shards=%q: a number from 1 to 1024", redact(raw), v[0])
			}
			shards = n
		case k != "prefix":
			known := "prefix=NAME"
			if kind == "cluster" {
				known = "prefix=NAME, shards=N"
			}
			return nil, openError(fetch.ErrBadURL, "--state %s: unknown option %q (those known: %s)", redact(raw), k, known)
		}
	}
	if o.Worker == "" {
		h, _ := os.Hostname()
		o.Worker = fmt.Sprintf("%s-%d", h, os.Getpid())
	}
	if strings.ContainsAny(o.Worker, "\n/\\") {
		return nil, openError(fetch.ErrBadURL, "--worker %q: a name without slashes", o.Worker)
	}
	if o.Lease <= 0 {
		o.Lease = 4 * time.Minute
	}
	if o.StateTimeout <= 0 {
		o.StateTimeout = 5 * time.Minute
	}
	if o.ReplicaWait <= 0 {
		o.ReplicaWait = time.Second
	}
	o.PerHost = max(o.PerHost, 1)
	f := &Frontier{prefix: prefix, root: prefix, shards: []string{prefix}, o: *o, changed: make(chan struct{})}
	var user, pass string
	if u.User != nil {
		user = u.User.Username()
		pass, _ = u.User.Password()
	}
	var tlsConf *tls.Config
	if strings.HasPrefix(strings.ToLower(u.Scheme), "rediss") || strings.HasPrefix(strings.ToLower(u.Scheme), "valkeys") {
		tlsConf = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	addrs := strings.Split(u.Host, ",")
	for _, a := range addrs {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return nil, openError(fetch.ErrBadURL, "--state %s: %q is not HOST:PORT", redact(raw), a)
		}
	}
	switch kind {
	case "one":
		u.RawQuery = ""
		u.Scheme = strings.Replace(strings.ToLower(u.Scheme), "valkey", "redis", 1) // valkeys: is rediss:
		ro, err := redis.ParseURL(u.String())
		if err != nil {
			return nil, openError(fetch.ErrBadURL, "--state %s: %v", redact(raw), err)
		}
		ro.MaxRetries = -1 // the Frontier waits for the store itself
		ro.PoolSize = 64
		f.rdb, f.where = redis.NewClient(ro), ro.Addr
	case "sentinel":
		parts := strings.Split(strings.Trim(u.Path, "/"), "/")
		db := 0
		if len(parts) == 2 {
			db, err = strconv.Atoi(parts[1])
		}
		if parts[0] == "" || len(parts) > 2 || err != nil {
			return nil, openError(fetch.ErrBadURL, "--state %s: the path is /MASTER/DB", redact(raw))
		}
		f.rdb = redis.NewFailoverClient(&redis.FailoverOptions{MasterName: parts[0], SentinelAddrs: addrs, DB: db,
			Username: user, Password: pass, SentinelUsername: user, SentinelPassword: pass, TLSConfig: tlsConf,
			MaxRetries: -1, PoolSize: 64})
		f.where = "master " + parts[0] + " of the sentinels at " + u.Host
	case "cluster":
		if p := strings.Trim(u.Path, "/"); p != "" {
			return nil, openError(fetch.ErrBadURL, "--state %s: a cluster has no databases: its path is /", redact(raw))
		}
		f.cluster = redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, Username: user, Password: pass, TLSConfig: tlsConf,
			MaxRetries: -1, MaxRedirects: 8, PoolSize: 64})
		f.rdb, f.where = f.cluster, "the cluster at "+u.Host
		f.root, f.shards = "{"+prefix+"}", nil
		if shards > 0 {
			f.shards = make([]string, shards) // placed by open
		}
		if o.MaxItems > 0 && shards != 1 {
			f.rdb.Close()
			return nil, openError(fetch.ErrBadURL, "--state %s: --max-items goes with a crawl of one shard (shards=1): each shard counts its own", redact(raw))
		}
	}
	return f, nil
}

// open checks the store and reads, or writes, the crawl's record.
func (f *Frontier) open(ctx context.Context, raw string) error {
	if err := f.rdb.Ping(ctx).Err(); err != nil {
		return openError(fetch.ErrNetwork, "--state %s: the store does not answer: %v", redact(raw), err)
	}
	if err := f.rdb.Eval(ctx, "return 1", []string{f.root + ":crawl"}).Err(); err != nil {
		return openError(fetch.ErrProtocol, "--state %s: the store runs no Lua scripts (EVAL: %v); the shared frontier needs Redis 7 or Valkey 7.2", redact(raw), err)
	}
	if !f.o.Watch {
		if err := f.noEviction(ctx); err != nil {
			return openError(fetch.ErrProtocol, "--state %s: %v", redact(raw), err)
		}
	}
	if err := f.record(ctx); err != nil {
		return openError(fetch.ErrProtocol, "--state %s: %v", redact(raw), err)
	}
	if f.o.Watch {
		return nil
	}
	for i := range f.shards {
		if _, err := f.run(ctx, i, againScript(), false, f.o.PerHost, f.o.Worker); err != nil {
			return openError(fetch.ErrProtocol, "--state %s: %v", redact(raw), err)
		}
	}
	return nil
}

// noEviction says why a store that would evict the crawl's keys when
// full (a maxmemory-policy other than noeviction) cannot keep it.
func (f *Frontier) noEviction(ctx context.Context) error {
	check := func(ctx context.Context, c *redis.Client) error {
		info, err := c.Info(ctx, "memory").Result()
		if err != nil {
			return nil // a store that does not tell is taken at its word
		}
		if p := infoField(info, "maxmemory_policy"); p != "" && p != "noeviction" {
			return fmt.Errorf("the store at %s evicts keys when full (maxmemory-policy %s): it would drop the crawl's seen URLs, queues and leases; a shared crawl needs maxmemory-policy noeviction", c.Options().Addr, p)
		}
		return nil
	}
	if f.cluster != nil {
		return f.cluster.ForEachMaster(ctx, check)
	}
	if c, ok := f.rdb.(*redis.Client); ok {
		return check(ctx, c)
	}
	return nil
}

// infoField is a field of an INFO answer.
func infoField(info, name string) string {
	for _, l := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), name+":"); ok {
			return v
		}
	}
	return ""
}

// record reads the crawl's record, writing it first when there is none
// (unless watching): its id, and in a cluster its shards' tags.
func (f *Frontier) record(ctx context.Context) error {
	if f.o.Watch {
		m, err := f.rdb.HGetAll(ctx, f.root+":crawl").Result()
		if err != nil {
			return err
		}
		f.id = m["id"]
		if f.cluster != nil {
			f.shards = bases(m["shards"])
		}
		return nil
	}
	tags := ""
	if f.cluster != nil {
		t, err := f.place(ctx)
		if err != nil {
			return err
		}
		tags = strings.Join(t, " ")
	}
	var b [12]byte
	crand.Read(b[:])
	v, err := recordScript().Run(ctx, f.rdb, []string{f.root + ":crawl"}, hex.EncodeToString(b[:]), tags, f.o.Worker).Slice()
	if err != nil {
		return err
	}
	id, _ := v[0].(string)
	f.id = id
	if f.cluster != nil {
		got, _ := v[1].(string)
		f.shards = bases(got)
		for _, s := range f.shards {
			if s == f.root {
				continue
			}
			if err := recordScript().Run(ctx, f.rdb, []string{s + ":crawl"}, id, "", f.o.Worker).Err(); err != nil {
				return err
			}
			if err := f.rdb.HSet(ctx, s+":crawl", "id", id).Err(); err != nil {
				return err
			}
		}
	}
	return nil
}

// bases are the keys' bases of a record's tags.
func bases(tags string) []string {
	var out []string
	for _, t := range strings.Fields(tags) {
		out = append(out, "{"+t+"}")
	}
	return out
}

// openError is an error of Open: its message, and kind (a fetch error,
// for the command's exit code) behind it.
func openError(kind error, format string, args ...any) error {
	return &kindError{fmt.Sprintf(format, args...), kind}
}

type kindError struct {
	msg  string
	kind error
}

func (e *kindError) Error() string { return e.msg }
func (e *kindError) Unwrap() error { return e.kind }

// goneError is ErrCrawlGone, said of this store, and a fetch.ErrProtocol.
type goneError struct{ where, prefix string }

func (e *goneError) Error() string {
	return fmt.Sprintf("the store at %s no longer holds the crawl %q (it restarted without its data, or the crawl's keys were deleted): this worker stops, its WARC files whole; start the crawl again to begin it anew", e.where, e.prefix)
}

func (e *goneError) Is(target error) bool {
	return target == ErrCrawlGone || target == fetch.ErrProtocol
}

// redact is raw with its password hidden.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(a URL that does not parse)"
	}
	return u.Redacted()
}

// Where is the store's address, for messages (no password).
func (f *Frontier) Where() string { return f.where }

// Worker is the worker's name.
func (f *Frontier) Worker() string { return f.o.Worker }

// Close ends the connections to the store.
func (f *Frontier) Close() error { return f.rdb.Close() }

// keys is the shard's key the scripts are given.
func (f *Frontier) keys(shard int) []string { return []string{f.shards[shard] + ":crawl"} }

// run runs script on shard, with the crawl's id before args, waiting
// while the store does not answer; replicate has it wait for Replicas.
func (f *Frontier) run(ctx context.Context, shard int, s *redis.Script, replicate bool, args ...any) (any, error) {
	args = append([]any{f.id}, args...)
	keys := f.keys(shard)
	again := -1
	for i, a := range args {
		if _, ok := a.(askedAgain); ok {
			again, args[i] = i, "0"
		}
	}
	return f.retry(ctx, func(ctx context.Context) (any, error) {
		defer func() {
			if again >= 0 {
				args[again] = "1" // the next asking, if any, is again
			}
		}()
		if replicate && f.o.Replicas > 0 {
			return f.runWait(ctx, s, keys, args)
		}
		return s.Run(ctx, f.rdb, keys, args...).Result()
	})
}

// askedAgain, an argument of run, is "0" the first time a script is
// asked and "1" after.
type askedAgain struct{}

// runWait runs s and then WAIT on the same connection to its master,
// again until Replicas hold the step (saying once that it waits): a
// step told done is on the replicas, and a failover loses none.
func (f *Frontier) runWait(ctx context.Context, s *redis.Script, keys []string, args []any) (any, error) {
	var c *redis.Client
	if f.cluster != nil {
		m, err := f.cluster.MasterForKey(ctx, keys[0])
		if err != nil {
			return nil, err
		}
		c = m
	} else {
		c, _ = f.rdb.(*redis.Client)
	}
	if c == nil {
		return s.Run(ctx, f.rdb, keys, args...).Result()
	}
	conn := c.Conn() // WAIT waits for this connection's writes
	defer conn.Close()
	v, err := s.Run(ctx, conn, keys, args...).Result()
	if err != nil {
		return nil, err
	}
	begin := time.Now()
	for {
		n, err := conn.Do(ctx, "WAIT", f.o.Replicas, f.o.ReplicaWait.Milliseconds()).Int64()
		if err != nil {
			return nil, err
		}
		if n >= int64(f.o.Replicas) {
			return v, nil
		}
		f.mu.Lock()
		if !f.fewer && f.o.Notify != nil {
			f.o.Notify(fmt.Sprintf("the store at %s: %d of the %d replicas asked for (--state-replicas) hold the last step: waiting for them, up to %v (--state-timeout)", f.where, n, f.o.Replicas, f.o.StateTimeout))
		}
		f.fewer = true
		f.mu.Unlock()
		if time.Since(begin) > f.o.StateTimeout {
			return nil, &kindError{fmt.Sprintf("the store at %s: %d of the %d replicas asked for (--state-replicas) took the crawl's steps for %v (--state-timeout): this worker stops; the same command resumes the crawl", f.where, n, f.o.Replicas, f.o.StateTimeout.Round(time.Second)), fetch.ErrNetwork}
		}
	}
}

// retry calls do until the store answers, waiting while it does not (a
// network failure, a store starting, loading its data or failing over),
// saying so once, for at most StateTimeout.
func (f *Frontier) retry(ctx context.Context, do func(context.Context) (any, error)) (any, error) {
	failed := 0
	for wait := 100 * time.Millisecond; ; wait = min(wait*2, 2*time.Second) {
		v, err := do(ctx)
		if err == nil || errors.Is(err, redis.Nil) {
			f.back()
			return v, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !unreachable(err) {
			return nil, f.refusal(ctx, err)
		}
		failed++
		f.mu.Lock()
		if f.downSince.IsZero() {
			f.downSince = time.Now()
		}
		if !f.down && failed >= 2 { // one lost reply, asked again at once, is not worth a line
			f.down = true
			if f.o.Notify != nil {
				f.o.Notify(fmt.Sprintf("the store at %s does not answer (%v): waiting for it, up to %v (--state-timeout)", f.where, oneLine(err), f.o.StateTimeout))
			}
		}
		since := f.downSince
		f.mu.Unlock()
		if f.cluster != nil {
			f.cluster.ReloadState(ctx) // a master failed over, or slots moved
		}
		left := f.o.StateTimeout - time.Since(since)
		if left <= 0 {
			return nil, &kindError{fmt.Sprintf("the store at %s has not answered for %v (--state-timeout): this worker stops, its WARC files whole and its leases left to expire; the same command resumes the crawl", f.where, f.o.StateTimeout.Round(time.Second)), fetch.ErrNetwork}
		}
		select {
		case <-time.After(min(wait, left)):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// refusal is the error of a store that answered err.
func (f *Frontier) refusal(ctx context.Context, err error) error {
	s := err.Error()
	switch {
	case strings.HasPrefix(s, "NOCRAWL"):
		return &goneError{f.where, f.prefix}
	case strings.HasPrefix(s, "OOM"):
		limit := ""
		if c, ok := f.rdb.(*redis.Client); ok {
			ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
			info, _ := c.Info(ictx, "memory").Result()
			cancel()
			if m := infoField(info, "maxmemory_human"); m != "" {
				limit = " of " + m
			}
		}
		return &kindError{fmt.Sprintf("the store at %s is full: it refuses the crawl's steps past its maxmemory%s (%s); the step refused wrote nothing, and the same command resumes the crawl once the store has room", f.where, limit, oneLine(s)), fetch.ErrWrite}
	}
	return &kindError{fmt.Sprintf("the store at %s: %s", f.where, oneLine(s)), fetch.ErrProtocol}
}

// oneLine is err's message on one line.
func oneLine(v any) string {
	return strings.Join(strings.Fields(fmt.Sprint(v)), " ")
}

// back says the store answers again, if it had stopped.
func (f *Frontier) back() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.downSince = time.Time{}
	if f.down {
		f.down = false
		if f.o.Notify != nil {
			f.o.Notify(fmt.Sprintf("the store at %s answers again", f.where))
		}
	}
}

// unreachable says err is the store not answering, or not yet, not a
// refusal.
func unreachable(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, redis.ErrClosed) || errors.Is(err, redis.ErrPoolTimeout) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	s := err.Error()
	for _, p := range []string{"LOADING", "MASTERDOWN", "BUSY", "READONLY", "CLUSTERDOWN", "TRYAGAIN", "MOVED", "ASK", "NOREPLICAS"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	for _, p := range []string{"connection refused", "EOF", "connection reset", "broken pipe", "i/o timeout", "sentinels", "no such host", "cluster has no", "use of closed"} {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// link is what the scripts' admit takes of an item: "BUCKET MEMBER
// HOST\nITEM".
func link(it crawl.Item) string {
	fp := crawl.Fingerprint(it.URL)
	return strconv.FormatUint(fp>>48, 10) + " " + strconv.FormatUint(fp&(1<<48-1), 10) + " " + crawl.ItemHost(it.URL) + "\n" + itemString(it)
}

// itemString is an item as the queue keeps it: "DEPTH[+] URL", and
// "\tPATH" (escaped) for a mirror's folder; its From is not kept (a
// Referer costs more than the URL).
func itemString(it crawl.Item) string {
	s := strconv.Itoa(it.Depth)
	if it.Plus {
		s += "+"
	}
	s += " " + it.URL
	if it.Path != "" {
		s += "\t" + url.PathEscape(it.Path)
	}
	return s
}

func parseItem(s string) (crawl.Item, error) {
	sp := strings.IndexByte(s, ' ')
	if sp < 0 {
		return crawl.Item{}, fmt.Errorf("a queued item %q of no form known", s)
	}
	var path string
	if tab := strings.IndexByte(s, '\t'); tab > sp {
		p, err := url.PathUnescape(s[tab+1:])
		if err != nil {
			return crawl.Item{}, fmt.Errorf("a queued item %q of no form known", s)
		}
		s, path = s[:tab], p
	}
	d, plus := s[:sp], false
	if strings.HasSuffix(d, "+") {
		d, plus = d[:len(d)-1], true
	}
	depth, err := strconv.Atoi(d)
	if err != nil {
		return crawl.Item{}, fmt.Errorf("a queued item %q of no form known", s)
	}
	return crawl.Item{URL: s[sp+1:], Depth: depth, Plus: plus, Path: path}, nil
}

// flags reads the "0"/"1" string the scripts return of links.
func flags(v any, n int) []bool {
	s, _ := v.(string)
	out := make([]bool, n)
	for i := 0; i < n && i < len(s); i++ {
		out[i] = s[i] == '1'
	}
	return out
}

// maxLinks bounds the links one script call takes, so that a page of a
// million links does not hold the store for long.
const maxLinks = 1000

// shardOf is the shard of host's keys.
func (f *Frontier) shardOf(host string) int {
	if len(f.shards) == 1 {
		return 0
	}
	return int(crc16(host) % uint16(len(f.shards)))
}

// Add queues the items not seen before.
func (f *Frontier) Add(ctx context.Context, items []crawl.Item) ([]bool, error) {
	if err := f.ready(); err != nil {
		return nil, err
	}
	out := make([]bool, len(items))
	byShard := make([][]int, len(f.shards))
	for i, it := range items {
		s := f.shardOf(crawl.ItemHost(it.URL))
		byShard[s] = append(byShard[s], i)
	}
	for s, idx := range byShard {
		for len(idx) > 0 {
			n := min(len(idx), maxLinks)
			args := []any{f.o.PerHost, f.o.MaxItems}
			for _, i := range idx[:n] {
				args = append(args, link(items[i]))
			}
			v, err := f.run(ctx, s, addScript(), true, args...)
			if err != nil {
				return nil, err
			}
			for k, new := range flags(v, n) {
				out[idx[k]] = new
			}
			idx = idx[n:]
		}
	}
	f.wake()
	return out, nil
}

// ready says why the Frontier cannot be used: one opened to watch a crawl
// with no record yet has no shards.
func (f *Frontier) ready() error {
	if len(f.shards) == 0 || f.id == "" {
		return &goneError{f.where, f.prefix}
	}
	return nil
}

// pause is the wait a host is given after a request.
func (f *Frontier) pause() int64 {
	w := f.o.Wait
	if f.o.RandomWait && w > 0 {
		w = w/2 + rand.N(w)
	}
	return w.Milliseconds()
}

// Claim leases the next URL that may be fetched, waiting for one. Each
// claim has an ID of its own, so that one asked again after its answer
// was lost gets the lease it made rather than leave it to expire.
func (f *Frontier) Claim(ctx context.Context) (*crawl.Lease, error) {
	if err := f.ready(); err != nil {
		return nil, err
	}
	var b [8]byte
	crand.Read(b[:])
	cid := hex.EncodeToString(b[:])
	var gens []int64 // each shard's admissions, when the last round found them all empty
	for {
		f.mu.Lock()
		changed := f.changed
		f.mu.Unlock()
		soonest := int64(-1)
		empty := make([]int64, 0, len(f.shards))
		first := int(f.next.Add(1))
		for k := range f.shards {
			s := (first + k) % len(f.shards)
			v, err := f.run(ctx, s, claimScript(), false, f.o.Worker, f.o.PerHost, f.pause(), f.o.Lease.Milliseconds(), cid, askedAgain{})
			if err != nil {
				return nil, err
			}
			a, _ := v.([]any)
			if len(a) == 0 {
				return nil, fmt.Errorf("the store at %s: a claim answered %v", f.where, v)
			}
			switch a[0] {
			case int64(0):
				g, _ := a[1].(int64)
				empty = append(empty, int64(s)<<40|g)
				continue
			case int64(1):
				ms, _ := a[1].(int64)
				if soonest < 0 || ms < soonest {
					soonest = ms
				}
				continue
			}
			if len(a) != 5 {
				return nil, fmt.Errorf("the store at %s: a claim answered %v", f.where, v)
			}
			tok, _ := a[1].(int64)
			host, _ := a[2].(string)
			item, _ := a[3].(string)
			exp, _ := a[4].(int64)
			it, err := parseItem(item)
			if err != nil {
				return nil, err
			}
			return &crawl.Lease{Item: it, Host: host, Token: tok, Expires: time.UnixMilli(exp), TTL: f.o.Lease}, nil
		}
		if len(empty) == len(f.shards) {
			// One shard empty is the end. Several are when a second round
			// finds each empty and admitting nothing since: a shard's
			// URLs come only from the leases of others, which were none.
			sort.Slice(empty, func(i, j int) bool { return empty[i] < empty[j] })
			if len(f.shards) == 1 || slices.Equal(empty, gens) {
				return nil, crawl.ErrFrontierDone
			}
			gens, soonest = empty, 1
		} else {
			gens = nil
		}
		t := time.NewTimer(min(time.Duration(max(soonest, 1))*time.Millisecond, pollEvery))
		select {
		case <-t.C:
		case <-changed:
			t.Stop()
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
}

// Extend keeps l another Lease from now.
func (f *Frontier) Extend(ctx context.Context, l *crawl.Lease) error {
	v, err := f.run(ctx, f.shardOf(l.Host), extendScript(), false, l.Token, f.o.Lease.Milliseconds(), f.o.Worker, itemString(l.Item))
	if err != nil {
		return err
	}
	if n, _ := v.(int64); n < 0 {
		return crawl.ErrStaleLease
	}
	l.Expires = time.UnixMilli(v.(int64))
	return nil
}

// Settle ends l with r, queueing the links not seen before. The links
// of other shards, and those past the first maxLinks, are added before
// the lease is settled, so that a worker killed between the two loses
// none (its URL is fetched again, its links found seen). A settle asked
// again after its reply was lost finds the lease settled by this worker
// and changes nothing: its links are then all told as seen.
func (f *Frontier) Settle(ctx context.Context, l *crawl.Lease, r crawl.Result, links []crawl.Item) ([]bool, error) {
	kind := "settled"
	switch {
	case r.Again:
		kind, links = "again", nil
	case r.Excluded:
		kind = "excluded"
	case r.Err != "":
		kind = "failed"
	}
	own := f.shardOf(l.Host)
	var with, before []int // the links settled with, and added before
	for i, it := range links {
		if f.shardOf(crawl.ItemHost(it.URL)) == own && len(with) < maxLinks {
			with = append(with, i)
		} else {
			before = append(before, i)
		}
	}
	out := make([]bool, len(links))
	if len(before) > 0 {
		items := make([]crawl.Item, len(before))
		for k, i := range before {
			items[k] = links[i]
		}
		added, err := f.Add(ctx, items)
		if err != nil {
			return nil, err
		}
		for k, i := range before {
			out[i] = added[k]
		}
	}
	args := []any{l.Token, kind, f.o.PerHost, f.pause(), f.o.MaxItems, f.o.Worker, r.File, r.At, itemString(l.Item)}
	for _, i := range with {
		args = append(args, link(links[i]))
	}
	v, err := f.run(ctx, own, settleScript(), true, args...)
	if err != nil {
		return nil, err
	}
	switch n, _ := v.(int64); n {
	case -1:
		return nil, crawl.ErrStaleLease
	case -2: // settled by this call's first asking, whose reply was lost
		return out, nil
	}
	f.wake()
	for k, new := range flags(v, len(with)) {
		out[with[k]] = new
	}
	return out, nil
}

// Reap gives the URLs of expired leases back to their queues.
func (f *Frontier) Reap(ctx context.Context) (int, error) {
	if err := f.ready(); err != nil {
		return 0, err
	}
	n := 0
	for s := range f.shards {
		v, err := f.run(ctx, s, reapScript(), false, f.o.PerHost)
		if err != nil {
			return n, err
		}
		k, _ := v.(int64)
		n += int(k)
	}
	return n, nil
}

// call runs one command of the store, waiting for it as run does.
func call[T any](ctx context.Context, f *Frontier, do func(ctx context.Context) (T, error)) (T, error) {
	v, err := f.retry(ctx, func(ctx context.Context) (any, error) { return do(ctx) })
	t, _ := v.(T)
	return t, err
}

// Exists says whether the store holds the crawl's record.
func (f *Frontier) Exists(ctx context.Context) (bool, error) {
	n, err := call(ctx, f, func(ctx context.Context) (int64, error) { return f.rdb.Exists(ctx, f.root+":crawl").Result() })
	return n > 0, err
}

// Status reads the crawl's progress, in all and by host, over every
// shard; a crawl not begun, or gone, is all zeros (Exists tells).
func (f *Frontier) Status(ctx context.Context) (*crawl.Status, error) {
	if f.o.Watch && f.id == "" {
		if err := f.record(ctx); err != nil {
			return nil, f.refusal(ctx, err)
		}
	}
	s := &crawl.Status{}
	for _, base := range f.shards {
		st, err := call(ctx, f, func(ctx context.Context) (map[string]string, error) {
			return f.rdb.HGetAll(ctx, base+":stats").Result()
		})
		if err != nil {
			return nil, err
		}
		s.Queued += num(st["queued"])
		s.Leased += num(st["leased"])
		s.Settled += num(st["settled"])
		s.Failed += num(st["failed"])
		s.Excluded += num(st["excluded"])
		hosts, err := call(ctx, f, func(ctx context.Context) ([]string, error) { return f.rdb.SMembers(ctx, base+":hosts").Result() })
		if err != nil {
			return nil, err
		}
		for _, h := range hosts {
			hs, err := call(ctx, f, func(ctx context.Context) (map[string]string, error) { return f.rdb.HGetAll(ctx, base+":h:"+h).Result() })
			if err != nil {
				return nil, err
			}
			s.Hosts = append(s.Hosts, crawl.HostStatus{Host: h, Queued: num(hs["queued"]), Leased: num(hs["leased"]), Settled: num(hs["settled"]), Failed: num(hs["failed"]), Excluded: num(hs["excluded"])})
		}
	}
	sort.Slice(s.Hosts, func(i, j int) bool { return s.Hosts[i].Host < s.Hosts[j].Host })
	return s, nil
}

func num(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// Robots returns the rules of the robots.txt at raw, if a worker read it.
func (f *Frontier) Robots(ctx context.Context, raw string) ([]string, []string, bool, error) {
	v, err := call(ctx, f, func(ctx context.Context) (string, error) { return f.rdb.HGet(ctx, f.root+":robots", raw).Result() })
	if err != nil {
		return nil, nil, false, err
	}
	if v == "" {
		return nil, nil, false, nil
	}
	var r struct{ Allow, Disallow []string }
	if err := json.Unmarshal([]byte(v), &r); err != nil {
		return nil, nil, false, nil
	}
	return r.Allow, r.Disallow, true, nil
}

// KeepRobots keeps the rules of the robots.txt at raw for the crawl.
func (f *Frontier) KeepRobots(ctx context.Context, raw string, allow, disallow []string) error {
	b, _ := json.Marshal(struct{ Allow, Disallow []string }{allow, disallow})
	_, err := call(ctx, f, func(ctx context.Context) (int64, error) { return f.rdb.HSet(ctx, f.root+":robots", raw, b).Result() })
	return err
}

// Files returns this worker's WARC files, by name (the series' order),
// with where their settled records end (each shard records the ends of
// the URLs it settled: the file's is the furthest).
func (f *Frontier) Files(ctx context.Context) ([]crawl.ArchiveFile, error) {
	end := map[string]int64{}
	for _, base := range append([]string{f.root}, f.shards...) {
		m, err := call(ctx, f, func(ctx context.Context) (map[string]string, error) {
			return f.rdb.HGetAll(ctx, base+":w:"+f.o.Worker).Result()
		})
		if err != nil {
			return nil, err
		}
		for p, e := range m {
			if n, ok := end[p]; !ok || num(e) > n {
				end[p] = num(e)
			}
		}
	}
	var out []crawl.ArchiveFile
	for p, e := range end {
		out = append(out, crawl.ArchiveFile{Path: p, End: e})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// BeganFile records that this worker began the WARC file at path.
func (f *Frontier) BeganFile(ctx context.Context, path string) error {
	_, err := call(ctx, f, func(ctx context.Context) (bool, error) {
		return f.rdb.HSetNX(ctx, f.root+":w:"+f.o.Worker, path, -1).Result()
	})
	return err
}

// QuietClient stops the Redis client's own log (its dial failures, on
// standard error) for the whole process, for a program that says what
// the Frontier's Notify and errors tell in its own words, as deref does.
func QuietClient() { redis.SetLogger(quiet{}) }

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}
