package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/crawl"
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
fetched again, and the WARC files of all the runs hold each URL once. The
exit code is 0 when nothing failed, else 1.
`

// crawlSettings holds what deref crawl's own flags set.
type crawlSettings struct {
	opts    crawl.Options
	wait    float64
	scope   string
	domains string
	asJSON  bool
}

func runCrawl(args []string, stdout, stderr io.Writer) int {
	o := options{maxRedirs: 10, newsArticles: 100, ftpMethod: "rfc"}
	pos, err := parseCommandLine(cmdCrawl, args, &o)
	switch {
	case errors.Is(err, errHelp):
		writeHelp(stdout, cmdCrawl, crawlUsage)
		return 0
	case err != nil:
		return crawlUsageError(stderr, err.Error())
	case len(pos) == 0:
		return crawlUsageError(stderr, "no URL given")
	case o.c.scope != "" && o.c.scope != "host" && o.c.scope != "prefix":
		return crawlUsageError(stderr, "--scope is host or prefix")
	case o.c.domains != "" && !o.c.opts.SpanHosts:
		return crawlUsageError(stderr, "--domains goes with --span-hosts")
	}
	co := o.c.opts
	co.Wait = seconds(o.c.wait)
	co.Prefix = o.c.scope == "prefix"
	for _, d := range strings.Split(o.c.domains, ",") {
		if d = strings.TrimSpace(d); d != "" {
			co.Domains = append(co.Domains, d)
		}
	}
	c, err := newClient(&o, stderr)
	if err != nil {
		return crawlUsageError(stderr, err.Error())
	}
	c.Progress = nil
	archive, err := openWARC(&o, c, append([]string{"crawl"}, args...))
	if err != nil {
		fmt.Fprintln(stderr, "deref crawl: "+oneLine(err.Error()))
		return fetch.ExitCode(fetch.WriteError(err))
	}
	ctx, stop := runContext(&o)
	defer stop()
	co.Events = func(ev crawl.Event) {
		if ev.Err == nil && !ev.Excluded && !o.verbose {
			return
		}
		errMu.Lock()
		defer errMu.Unlock()
		switch {
		case ev.Err != nil:
			fmt.Fprintf(stderr, "deref: %s: %s\n", oneLine(ev.URL), oneLine(ev.Err.Error()))
		case ev.Excluded:
			fmt.Fprintf(stderr, "deref: skipped %s: robots.txt excludes it\n", oneLine(ev.URL))
		default:
			fmt.Fprintf(stderr, "%d\t%d\t%s\n", ev.Depth, ev.Bytes, oneLine(ev.URL))
		}
	}
	rep, err := crawl.Run(ctx, c, pos, co)
	if werr := closeWARC(archive); werr != nil {
		fmt.Fprintln(stderr, "deref crawl: "+oneLine(werr.Error()))
		if err == nil {
			return fetch.ExitCode(werr)
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
			resumed := ""
			if rep.Resumed > 0 {
				resumed = fmt.Sprintf(" (%d settled before, by --state)", rep.Resumed)
			}
			fmt.Fprintf(stderr, "deref crawl: %d fetched, %d failed, %d excluded by robots.txt, %d bytes in %.1f s%s\n", rep.Fetched, rep.Failed, rep.Excluded, rep.Bytes, rep.Seconds, resumed)
		}
	}
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		return 130
	case err != nil:
		fmt.Fprintln(stderr, "deref crawl: "+oneLine(err.Error()))
		return fetch.ExitCode(err)
	case rep.Failed > 0:
		return 1
	}
	return 0
}

// crawlUsageError writes a usage error of deref crawl.
func crawlUsageError(stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "deref crawl: %s\nsee 'deref crawl -h'\n", oneLine(msg))
	return 1
}
