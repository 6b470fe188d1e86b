package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
	"golang.org/x/term"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/mirror"
)

const mirrorUsage = `usage: deref mirror [flags] URL DIR

Keeps DIR a copy of the tree at URL: an FTP or file: directory, a Gopher
menu, an HTTP index page or a newsgroup. Files are written as NAME.part and
renamed when complete; a later run resumes what an interrupted one left.
Remote names that are not a single safe file name, remote symbolic links
and names that collide on a case-folding file system are skipped and
reported. A summary goes to standard error at the end (--json: a report on
standard output). The exit code is 0 when nothing failed, else the code of
the first failure (see deref -h).

Flags:
`

// globs collects a repeatable glob flag.
type globs []string

func (g *globs) String() string     { return strings.Join(*g, ",") }
func (g *globs) Set(v string) error { *g = append(*g, v); return nil }

func runMirror(args []string, stdout, stderr io.Writer) int {
	o := options{}
	var (
		mo                     mirror.Options
		include, exclude       globs
		limit, shard           string
		plan, asJSON, progress bool
	)
	fs := flag.NewFlagSet("deref mirror", flag.ContinueOnError)
	fs.SetOutput(stderr)
	clientFlags(fs, &o)
	fs.BoolVar(&o.silent, "s", false, "silent: no progress and no summary")
	fs.IntVar(&o.parallel, "parallel", 4, "`N` transfers at once")
	fs.IntVar(&mo.PerHost, "per-host", 0, "at most `N` connections to one host (default: --parallel)")
	fs.BoolVar(&mo.OnlyNewer, "only-newer", false, "skip files whose local copy is unchanged (size and time, or If-Modified-Since)")
	fs.BoolVar(&mo.Delete, "delete", false, "remove local files the server no longer has (never outside DIR)")
	fs.Var(&include, "include", "mirror only files matching `GLOB` (repeatable; with a / it matches the path)")
	fs.Var(&exclude, "exclude", "leave out files and folders matching `GLOB` (repeatable)")
	fs.IntVar(&mo.MaxDepth, "max-depth", 0, "go at most `N` levels deep (1: only the start folder's files; 0: no limit)")
	fs.BoolVar(&mo.DryRun, "dry-run", false, "print what would change, change nothing")
	fs.StringVar(&limit, "limit-rate", "", "cap all transfers together at `RATE` bytes per second (suffixes k, M, G)")
	fs.IntVar(&mo.Retries, "retries", 3, "try a temporary failure `N` more times, with exponential backoff")
	fs.BoolVar(&mo.FollowSymlinks, "follow-symlinks", false, "fetch the target of a remote symbolic link inside the tree as a regular file")
	fs.BoolVar(&mo.FoldCase, "fold-case", false, "treat names differing only in case as one (default: when DIR's file system does)")
	fs.StringVar(&shard, "shard", "", "mirror only shard `I/N` of the files (0 <= I < N), by path hash")
	fs.BoolVar(&plan, "plan", false, "print the transfers as URL<TAB>TARGET lines, transfer nothing (run each with deref --create-dirs -o TARGET URL)")
	fs.BoolVar(&asJSON, "json", false, "print the report as JSON on standard output")
	fs.Usage = func() {
		fmt.Fprint(stderr, mirrorUsage)
		fs.PrintDefaults()
	}
	pos, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(pos) != 2 {
		fmt.Fprintln(stderr, "deref mirror: want URL and DIR (deref mirror -h for help)")
		return 1
	}
	src, dst := unwrap(pos[0]), pos[1]
	mo.Parallel = max(o.parallel, 1)
	mo.Include, mo.Exclude = include, exclude
	if limit != "" {
		r, err := parseRate(limit)
		if err != nil {
			fmt.Fprintln(stderr, "deref mirror: --limit-rate:", err)
			return 1
		}
		mo.LimitRate = r
	}
	if shard != "" {
		i, n, err := parseShard(shard)
		if err != nil {
			fmt.Fprintln(stderr, "deref mirror: --shard:", err)
			return 1
		}
		mo.Shard, mo.Shards = i, n
	}
	if plan {
		mo.DryRun = true
	}
	c, err := newClient(&o, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "deref mirror:", err)
		return 1
	}
	c.Progress = nil // one line for one transfer; the mirror draws its own bars
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.maxTime > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, seconds(o.maxTime))
		defer cancel()
	}
	progress = !o.silent && !asJSON && !mo.DryRun && isTerminal(stderr)
	var bars *barSet
	if progress {
		bars = newBarSet(ctx, stderr)
	}
	var mu sync.Mutex
	mo.Events = func(ev mirror.Event) {
		if bars != nil {
			bars.event(ev)
		}
		if ev.Type != mirror.EventDone && ev.Type != mirror.EventRetry {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		out := stderr
		if bars != nil {
			out = bars.p
		}
		switch {
		case ev.Type == mirror.EventRetry:
			if o.verbose {
				fmt.Fprintf(out, "deref: retry %s in %v: %s\n", ev.Path, ev.Wait.Round(1e6), oneLine(ev.Err.Error()))
			}
		case plan:
			if ev.Action == mirror.ActionNew || ev.Action == mirror.ActionUpdate || ev.Action == mirror.ActionCheck {
				fmt.Fprintf(stdout, "%s\t%s\n", ev.URL, filepath.Join(dst, filepath.FromSlash(ev.Path)))
			}
		case mo.DryRun && !asJSON:
			if ev.Action != mirror.ActionUnchanged || o.verbose {
				fmt.Fprintf(stdout, "%s\t%s\n", ev.Action, oneLine(ev.Path))
			}
		case ev.Action == mirror.ActionFail:
			fmt.Fprintf(out, "deref: %s: %s\n", oneLine(ev.Path), oneLine(ev.Err.Error()))
		case ev.Action == mirror.ActionRefuse:
			fmt.Fprintf(out, "deref: skipped %s: %s\n", oneLine(ev.Path), oneLine(ev.Reason))
		case o.verbose:
			fmt.Fprintf(out, "%s\t%s\n", ev.Action, oneLine(ev.Path))
		}
	}
	rep, err := mirror.Run(ctx, c, src, dst, mo)
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
		fmt.Fprintln(stderr, "deref mirror:", oneLine(err.Error()))
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

// parseRate reads "500k", "2M", "1.5G" or a plain number of bytes.
func parseRate(s string) (float64, error) {
	if s == "" {
		return 0, fmt.Errorf("empty rate; give one such as 500k or 2M")
	}
	mult := 1.0
	switch strings.ToLower(s[len(s)-1:]) {
	case "k":
		mult = 1 << 10
	case "m":
		mult = 1 << 20
	case "g":
		mult = 1 << 30
	}
	if mult > 1 {
		s = s[:len(s)-1]
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f <= 0 {
		return 0, fmt.Errorf("%q is not a rate such as 500k or 2M", s)
	}
	return f * mult, nil
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

func newBarSet(ctx context.Context, w io.Writer) *barSet {
	b := &barSet{p: mpb.NewWithContext(ctx, mpb.WithOutput(w), mpb.WithWidth(72)), bars: map[string]*mpb.Bar{}}
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
			mpb.PrependDecorators(decor.Name(shorten(ev.Path, 32), decor.WC{W: 33, C: decor.DindentRight})),
			mpb.AppendDecorators(decor.CountersKibiByte("% .1f / % .1f")))
		bar.SetCurrent(ev.Offset)
		b.bars[ev.Path] = bar
	case mirror.EventProgress:
		if bar := b.bars[ev.Path]; bar != nil {
			bar.SetCurrent(ev.Offset + ev.Bytes)
		}
	case mirror.EventDone:
		if bar := b.bars[ev.Path]; bar != nil {
			if ev.Action == mirror.ActionFail {
				bar.Abort(true)
			} else {
				bar.SetTotal(-1, true)
			}
			delete(b.bars, ev.Path)
		}
		if ev.Action == mirror.ActionNew || ev.Action == mirror.ActionUpdate {
			b.files++
			b.total.SetCurrent(b.files)
		}
	}
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
