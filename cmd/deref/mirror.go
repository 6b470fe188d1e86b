package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/crawl"
	"github.com/urlderef/deref/fetch/crawl/shared"
	"github.com/urlderef/deref/fetch/mirror"
	"github.com/urlderef/deref/url"
)

const mirrorUsage = `usage: deref mirror [flags] URL DIR

Keeps DIR a copy of the tree at URL: an FTP or file: directory, a Gopher
menu, an HTTP index page or a newsgroup. Files are written as NAME.part and
renamed when complete; a later run resumes what an interrupted one left,
and fetches only what changed: a file whose copy has the listing's size
and time (or that HTTP's If-Modified-Since finds unchanged) is left as it
is, as lftp's mirror, rsync and wget -m leave it (--ignore-times fetches
every file). Remote names that are not a single safe file name, remote symbolic links
and names that collide on a case-folding file system are skipped and
reported. A summary goes to standard error at the end (--json: a report on
standard output). The exit code is 0 when nothing failed, else the code of
the first failure (see deref -h).
`

// mirrorSettings holds what deref mirror's own flags set.
type mirrorSettings struct {
	opts         mirror.Options
	shard        string
	plan, asJSON bool
	ignoreTimes  bool // --ignore-times: every file fetched, OnlyNewer off
	verbose      bool // -v: each file added, updated and deleted listed
	// state: --state, the store of a shared mirror.
	state string
}

func runMirror(args []string, stdout, stderr io.Writer) int {
	o := options{parallel: 4, maxRedirs: 10, newsArticles: 100, ftpMethod: "rfc"}
	defaults := mirror.DefaultOptions()
	o.m.opts.Retries = defaults.Retries
	pos, err := parseCommandLine(cmdMirror, args, &o)
	if err == nil {
		warcWhole(&o, stderr, "deref mirror")
	}
	switch {
	case errors.Is(err, errHelp):
		writeHelp(stdout, cmdMirror, mirrorUsage)
		return 0
	case err != nil:
		return mirrorUsageError(stderr, err.Error())
	case o.version:
		printVersion(stdout)
		return 0
	case len(pos) != 2:
		return mirrorUsageError(stderr, "want URL and DIR")
	case o.segments < 0 || o.segments > 64:
		return mirrorUsageError(stderr, "--segments takes 1 to 64 connections")
	case o.m.ignoreTimes && (o.m.opts.OnlyNewer || o.m.opts.Checksum):
		return mirrorUsageError(stderr, "--ignore-times fetches every file: not with --only-newer or --checksum, which skip unchanged ones")
	case strings.ContainsAny(o.m.opts.ChecksumFile, `/\`):
		return mirrorUsageError(stderr, "--checksum-file names a file of each folder, not a path")
	case len(o.cookies) > 0:
		return mirrorUsageError(stderr, literalCookies)
	case o.m.state != "" && !shared.IsStoreURL(o.m.state):
		return mirrorUsageError(stderr, "--state shares the mirror through a store: redis://HOST:PORT/DB (or rediss:, valkey:, valkeys:)")
	case (o.c.worker != "" || o.c.lease > 0 || o.c.stateTimeout > 0 || o.c.stateReplicas > 0) && o.m.state == "":
		return mirrorUsageError(stderr, "--worker, --lease, --state-timeout and --state-replicas go with a shared mirror's --state redis://HOST:PORT/DB")
	case o.m.state != "" && (o.m.shard != "" || o.m.opts.ChecksumFile != ""):
		return mirrorUsageError(stderr, "--state shares the tree out by folders: not with --shard, nor --checksum-file (a folder's sums file is read where the folder is)")
	}
	oneProcessor(o.segments, 0)
	if !o.m.ignoreTimes && o.warcFile == "" {
		o.m.opts.OnlyNewer = defaults.OnlyNewer // as lftp's mirror and rsync have it (an archive wants every file: see warcWhole)
	}
	mo, plan, asJSON := o.m.opts, o.m.plan, o.m.asJSON
	mo.FailuresOnly = !asJSON // the report lists every path only for --json
	mo.RetryRefused = o.retryRefused
	var progress bool
	src, dst := unwrap(pos[0]), pos[1]
	mo.Parallel = max(o.parallel, 1)
	mo.Segments, mo.SegmentMin = o.segments, o.segmentMin
	mo.LimitRate = float64(o.limitRate)
	if o.m.shard != "" {
		i, n, err := parseShard(o.m.shard)
		if err != nil {
			return mirrorUsageError(stderr, "--shard: "+err.Error())
		}
		mo.Shard, mo.Shards = i, n
	}
	if plan {
		mo.DryRun = true
	}
	o.limitRate = 0 // the mirror's own limiter caps all transfers together
	if err := warcFlagsError(&o); err != nil {
		return mirrorUsageError(stderr, err.Error())
	}
	c, err := newClient(&o, stderr)
	if err != nil {
		return mirrorUsageError(stderr, err.Error())
	}
	if o.m.state != "" {
		// Folders are the unit shared, each worker at --parallel: no host
		// limit between them but each one's own.
		f, err := openShared(&o, crawl.Options{State: o.m.state, PerHost: 1 << 20}, stderr, "deref mirror")
		if err != nil {
			fmt.Fprintln(stderr, "deref mirror: "+oneLine(err.Error()))
			return fetch.ExitCode(err)
		}
		defer f.Close()
		mo.Frontier = f
		if o.warcFile != "" {
			o.warcFile += "-" + f.Worker() // each worker's own series
		}
		if o.wacz != "" {
			o.wacz = strings.TrimSuffix(o.wacz, ".wacz") + "-" + f.Worker() + ".wacz"
		}
	}
	archive, err := openWARC(&o, c, cmdMirror, args, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "deref mirror: "+oneLine(err.Error()))
		return fetch.ExitCode(fetch.WriteError(err))
	}
	c.Progress = nil // one line for one transfer; the mirror draws its own bars
	ctx, stop := runContext(&o)
	defer stop()
	progress = !o.silent && !asJSON && !mo.DryRun && isTerminal(stderr)
	var bars *barSet
	if progress {
		bars = newBarSet(ctx, stderr)
	}
	mo.Events = func(ev mirror.Event) {
		if bars != nil {
			bars.event(ev)
		}
		if ev.Type != mirror.EventDone && ev.Type != mirror.EventRetry && ev.Type != mirror.EventNote {
			return
		}
		errMu.Lock()
		defer errMu.Unlock()
		out := stderr
		if bars != nil {
			out = bars.p
		}
		switch {
		case ev.Type == mirror.EventNote:
			where := ev.Path
			if where == "" {
				where = ev.URL
			}
			line := "deref: " + oneLine(where) + ": " + oneLine(ev.Reason)
			if ev.Err != nil && o.verbose {
				line += " (" + oneLine(ev.Err.Error()) + ")"
			}
			fmt.Fprintln(out, line)
		case ev.Type == mirror.EventRetry:
			if o.verbose {
				fmt.Fprintf(out, "deref: retry %s in %v: %s\n", ev.Path, ev.Wait.Round(1e6), oneLine(ev.Err.Error()))
			}
		case plan:
			if ev.Action == mirror.ActionNew || ev.Action == mirror.ActionUpdate || ev.Action == mirror.ActionCheck {
				// The user stays and the password goes (not "xxxxx", which
				// a job would send): the job finds it in ~/.netrc.
				fmt.Fprintf(stdout, "%s\t%s\n", withoutPassword(ev.URL), filepath.Join(dst, filepath.FromSlash(ev.Path)))
			}
		case mo.DryRun && !asJSON:
			if ev.Action != mirror.ActionUnchanged || o.verbose {
				fmt.Fprintf(stdout, "%s\t%s\n", ev.Action, oneLine(ev.Path))
			}
		case ev.Action == mirror.ActionFail:
			fmt.Fprintf(out, "deref: %s: %s\n", oneLine(ev.Path), oneLine(ev.Err.Error()))
		case ev.Action == mirror.ActionRefuse:
			fmt.Fprintf(out, "deref: skipped %s: %s\n", oneLine(ev.Path), oneLine(ev.Reason))
		case o.verbose, o.m.verbose && (ev.Action == mirror.ActionNew || ev.Action == mirror.ActionUpdate || ev.Action == mirror.ActionDelete):
			fmt.Fprintf(out, "%s\t%s\n", ev.Action, oneLine(ev.Path))
		}
	}
	rep, err := mirror.Run(ctx, c, src, dst, mo)
	if werr := closeWARC(&o, archive, errors.Is(ctx.Err(), context.Canceled), stderr); werr != nil && err == nil {
		err = werr
	}
	if cerr := saveCookies(&o, stdout); cerr != nil && err == nil {
		err = fmt.Errorf("-c %s: %w", o.cookieJar, cerr)
	}
	if bars != nil {
		bars.wait()
	}
	if rep != nil {
		if asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			if rep.Items == nil {
				rep.Items = []mirror.Item{}
			}
			if werr := enc.Encode(rep); werr != nil {
				fmt.Fprintln(stderr, "deref mirror:", werr)
				return 8
			}
		} else if !o.silent && !plan {
			fmt.Fprintln(stderr, summary(rep))
		}
	}
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		return 130
	case err != nil:
		fmt.Fprintln(stderr, "deref mirror:", oneLine(contextWords(err, err.Error(), &o)))
		return fetch.ExitCode(err)
	case rep.Failed > 0:
		if code := fetch.ExitCode(rep.FirstError()); code > 1 {
			return code
		}
		return 1
	}
	return 0
}

// summary is the closing line: what changed, bytes and time.
func summary(r *mirror.Report) string {
	verb, check, head := "", "", "mirror"
	if r.DryRun {
		verb = " (dry run: nothing changed)"
	}
	if r.Checked > 0 {
		check = fmt.Sprintf(", %d to check with the server", r.Checked)
	}
	if r.Interrupted {
		head = "mirror interrupted"
	}
	return fmt.Sprintf("%s: %d new, %d updated, %d unchanged%s, %d deleted, %d skipped, %d failed; %s in %.1f s%s",
		head, r.New, r.Updated, r.Unchanged, check, r.Deleted, r.Refused, r.Failed, humanBytes(float64(r.Bytes)), r.Seconds, verb)
}

// mirrorUsageError writes a usage error of deref mirror and returns its
// exit code.
func mirrorUsageError(stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "deref mirror: %s\nsee 'deref mirror -h'\n", oneLine(msg))
	return 1
}

// parseShard reads "I/N".
func parseShard(s string) (int, int, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("%q is not I/N with 0 <= I < N", s)
	}
	return i, n, nil
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// barSet draws one bar per active transfer and a total line.
type barSet struct {
	p     *mpb.Progress
	mu    sync.Mutex
	bars  map[string]*mpb.Bar
	total *mpb.Bar
	files int64
}

// newBarSet draws bars on w, refreshed whatever w is: the commands make
// one for a terminal only, and a test for a buffer.
func newBarSet(ctx context.Context, w io.Writer) *barSet {
	b := &barSet{p: mpb.NewWithContext(ctx, mpb.WithOutput(w), mpb.WithWidth(72), mpb.WithAutoRefresh()), bars: map[string]*mpb.Bar{}}
	b.total = b.p.New(0, mpb.NopStyle(), mpb.BarPriority(1<<30),
		mpb.PrependDecorators(decor.Name("total "), decor.CurrentNoUnit("%d files")),
		mpb.AppendDecorators(decor.Elapsed(decor.ET_STYLE_GO)))
	return b
}

func (b *barSet) event(ev mirror.Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch ev.Type {
	case mirror.EventStart:
		if old := b.bars[ev.Path]; old != nil {
			old.Abort(true)
		}
		total := max(ev.Size, 0)
		bar := b.p.AddBar(total, mpb.BarRemoveOnComplete(),
			// A URL's password is never shown (deref -O --parallel names
			// its bars by URL; the mirror by path).
			mpb.PrependDecorators(decor.Name(shorten(url.RedactString(ev.Path), 32), decor.WC{W: 33, C: decor.DindentRight})),
			mpb.AppendDecorators(decor.CountersKibiByte("% .1f / % .1f")))
		bar.SetCurrent(ev.Offset)
		b.bars[ev.Path] = bar
	case mirror.EventProgress:
		if bar := b.bars[ev.Path]; bar != nil {
			bar.SetCurrent(ev.Offset + ev.Bytes)
		}
	case mirror.EventDone:
		if bar := b.bars[ev.Path]; bar != nil {
			// Dropped, failed or not: a bar completed below its total
			// (a size announced that was not the size sent) would keep
			// mpb's Wait waiting for ever, and a completed bar is
			// removed all the same.
			bar.Abort(true)
			delete(b.bars, ev.Path)
		}
		if ev.Action == mirror.ActionNew || ev.Action == mirror.ActionUpdate {
			b.files++
			b.total.SetCurrent(b.files)
		}
	}
}

// finish ends the bar of one URL of deref --parallel, counting it in the
// total when it succeeded.
func (b *barSet) finish(name string, err error) {
	action := mirror.ActionNew
	if err != nil {
		action = mirror.ActionFail
	}
	b.event(mirror.Event{Type: mirror.EventDone, Path: name, Action: action})
}

func (b *barSet) wait() {
	b.mu.Lock()
	for _, bar := range b.bars {
		bar.Abort(true)
	}
	b.total.SetTotal(-1, true)
	b.mu.Unlock()
	b.p.Wait()
}

func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return "…" + string(r[len(r)-n+1:])
}
