package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/warc"
	"github.com/urlderef/deref/internal/version"
	"github.com/urlderef/deref/url"
)

// warcFlagsError says what is wrong with the --warc-* flags given, if
// anything: a usage error.
func warcFlagsError(o *options) error {
	if o.wacz != "" {
		if !strings.HasSuffix(o.wacz, ".wacz") || strings.TrimSuffix(filepath.Base(o.wacz), ".wacz") == "" {
			return fmt.Errorf("--wacz %s: the name must end in .wacz", o.wacz)
		}
		if o.warcFile == "" {
			o.warcFile = strings.TrimSuffix(o.wacz, ".wacz") // the WARC files it packs
		}
	}
	if o.warcFile == "" {
		if o.warcCDX || o.warcDedup != "" || o.warcMaxSize != 0 || len(o.warcHeaders) > 0 || o.warcTempDir != "" || o.warcUncompressed || o.warcNoDigests {
			return fmt.Errorf("--warc-cdx, --warc-dedup, --warc-max-size, --warc-header, --warc-tempdir, --no-warc-compression and --no-warc-digests go with --warc-file")
		}
	}
	if o.warcNoDigests && o.warcDedup != "" {
		return fmt.Errorf("--warc-dedup finds payloads by the digests --no-warc-digests leaves out")
	}
	return nil
}

// warcWhole turns off, with --warc-file, the flags that would leave
// objects out of the archive because a copy is there already: -N
// (--only-newer, --timestamping) and -nc (--skip-existing, --no-clobber,
// lftp's --only-missing), as wget turns -N and -nc off for --warc-file,
// and curl's -z and --etag-compare.
// Each run's archive then holds every object it reaches; --warc-dedup
// keeps the unchanged ones to revisit records. It says so on stderr, as
// prefix (the command's name) and one line a flag.
func warcWhole(o *options, stderr io.Writer, prefix string) {
	if o.wacz != "" && o.warcFile == "" && strings.HasSuffix(o.wacz, ".wacz") {
		o.warcFile = strings.TrimSuffix(o.wacz, ".wacz") // the WARC files it packs
	}
	if o.warcFile == "" {
		return
	}
	off := func(name string) {
		fmt.Fprintf(stderr, "%s: WARC output does not work with %s: it is off, every object fetched and archived\n", prefix, name)
	}
	for _, f := range []struct {
		on   *bool
		name string
	}{
		{&o.onlyNewer, "-N (--only-newer)"},
		{&o.skipExisting, "-nc (--skip-existing)"},
		{&o.m.opts.OnlyNewer, "--only-newer"},
		{&o.m.opts.OnlyMissing, "--only-missing"},
		{&o.c.opts.OnlyNewer, "-N (--timestamping, and --mirror's)"},
		{&o.c.opts.NoClobber, "-nc (--no-clobber)"},
	} {
		if *f.on {
			off(f.name)
			*f.on = false
		}
	}
	// curl's conditions, whose 304 would leave no record either.
	if o.timeCond != "" {
		off("-z (--time-cond)")
		o.timeCond = ""
	}
	if o.etagCompare != "" {
		off("--etag-compare")
		o.etagCompare = ""
	}
}

// openWARC starts --warc-file and tees c's retrievals into it; its flags
// were checked by warcFlagsError. An archive of the name an earlier run
// left (one a full disk cut short, say) is continued, never written over:
// the records go on in the next file of its series, which notes says
// unless -s.
func openWARC(o *options, c *fetch.Client, cmd command, args []string, notes io.Writer) (*warc.Recorder, error) {
	if o.warcFile == "" {
		return nil, nil
	}
	ext := ".warc.gz"
	if o.warcUncompressed {
		ext = ".warc"
	}
	_, err := os.Lstat(o.warcFile + ext)
	continued := err == nil && o.c.opts.State == "" && o.warcMaxSize == 0 && !o.silent
	w, err := warc.Create(o.warcFile, warc.Options{MaxSize: o.warcMaxSize, Software: version.UserAgent(), CommandLine: strings.Join(append([]string{"deref" + commandNames[cmd]}, redactArgs(cmd, args)...), " "),
		CDX: o.warcCDX, DedupIndex: o.warcDedup, Numbered: o.c.opts.State != "", Continue: true,
		TempDir: o.warcTempDir, InfoFields: o.warcHeaders, Uncompressed: o.warcUncompressed, NoDigests: o.warcNoDigests})
	if err != nil {
		return nil, fmt.Errorf("--warc-file: %w", err)
	}
	if continued {
		// Named as its first record is written: the file the series goes
		// on in, not a guess at it.
		var once sync.Once
		w.OnFile(func(path string) {
			once.Do(func() {
				fmt.Fprintf(notes, "deref: --warc-file: %s is there already: the records go on in %s (deref serve --archive %s serves them all)\n", oneLine(o.warcFile+ext), oneLine(path), oneLine(o.warcFile+ext))
			})
		})
	}
	rec := &warc.Recorder{W: w}
	c.Recorder = rec
	archiveGC()
	return rec, nil
}

// archiveGC lets the heap grow twice as far between collections while an
// archive is written, unless GOGC says otherwise: its records are many
// small buffers (gowarc builds each record in one of its own) that are
// garbage at once. Twice, not more: a larger heap is new memory, and
// where a page fault is dear (virtual machines) faulting it in cost more
// than the collections it saved (a 2,000-page crawl with an archive,
// medians of 15 runs: 0.39 s at 400, 0.36 s at 200; of 13 others: 0.44 s
// at the default, 0.41 s at 200).
// The command's soft memory limit still holds, and makes the collector
// eager as the heap nears it.
func archiveGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(200)
	}
}

// closeWARC finishes the WARC files, and with --wacz packs every file of
// their series (those an earlier run of a resumed crawl wrote too) into
// the WACZ, unless the run was interrupted: then notes says none was
// written, and the WARC files stay to be resumed or packed. An error
// writing either is a write error (exit 8).
func closeWARC(o *options, rec *warc.Recorder, interrupted bool, notes io.Writer) error {
	if rec == nil {
		return nil
	}
	err := rec.W.Close()
	if rerr := rec.Err(); rerr != nil {
		err = rerr
	}
	if err != nil {
		return fetch.WriteError(fmt.Errorf("--warc-file: %w", err))
	}
	if o.wacz == "" {
		return nil
	}
	ext := ".warc.gz"
	if o.warcUncompressed {
		ext = ".warc"
	}
	files := seriesFiles(o.warcFile + ext)
	if interrupted || len(files) == 0 {
		// Said under -s too: a file asked for is not there.
		why := "the run was interrupted"
		if !interrupted {
			why = "no WARC file was written"
		}
		fmt.Fprintf(notes, "deref: --wacz: %s not written: %s; the WARC files stay (deref wacz create -o %s %s packs them)\n", oneLine(o.wacz), why, oneLine(o.wacz), oneLine(o.warcFile+"*"+ext))
		return nil
	}
	title := strings.TrimSuffix(filepath.Base(o.wacz), ".wacz")
	if err := warc.CreateWACZ(o.wacz, files, warc.WACZOptions{Title: title, Software: version.UserAgent()}); err != nil {
		return fetch.WriteError(fmt.Errorf("--wacz: %w", err))
	}
	return nil
}

// redactArgs is the command line of cmd with passwords hidden, read as
// the flags are read (so that "-ualice:pw" and "-su alice:pw" are found
// too): the password of -u/--user (and --password), the credentials of
// an Authorization or Proxy-Authorization header (-H), cookies (-b, and
// a Cookie header), --oauth2-bearer's token, --proxy-user's login, and
// the credentials of any URL.
func redactArgs(cmd command, args []string) []string {
	out := slices.Clone(args)
	_, err := scanFlags(cmd, args, func(f *flagDef, value string, at valueAt) error {
		if at.arg < 0 {
			return nil
		}
		switch f.long {
		case "user":
			value = redactUser(value)
		case "header":
			value = redactHeader(value)
		case "password", "cookie", "oauth2-bearer", "proxy-user", "proxy-password":
			value = "***"
		default:
			return nil
		}
		out[at.arg] = args[at.arg][:at.off] + value
		return nil
	})
	if err != nil {
		return []string{"(a command line deref could not read)"}
	}
	for i, a := range out {
		out[i] = url.RedactString(a)
	}
	return out
}

func redactUser(v string) string {
	if name, _, ok := strings.Cut(v, ":"); ok {
		return name + ":***"
	}
	return v
}

// redactHeader hides the credentials of an Authorization or
// Proxy-Authorization field, keeping its scheme ("Basic ***"), and the
// value of a Cookie field.
func redactHeader(v string) string {
	name, value, ok := strings.Cut(v, ":")
	if ok && strings.EqualFold(strings.TrimSpace(name), "Cookie") {
		return name + ": ***"
	}
	if !ok || !strings.EqualFold(strings.TrimSpace(name), "Authorization") && !strings.EqualFold(strings.TrimSpace(name), "Proxy-Authorization") {
		return v
	}
	scheme, _, hasRest := strings.Cut(strings.TrimSpace(value), " ")
	if !hasRest {
		return name + ": ***" // a bare credential, or none
	}
	return name + ": " + scheme + " ***"
}

const indexUsage = `usage: deref index WARC|CDXJ... > NAME.cdxj
       deref index --zipnum [-o NAME] WARC|CDXJ|FOLDER...

Writes the CDXJ index of the WARC files (deref's, wget's, gzip or not) on
standard output: one sorted index of them all, the lines --warc-cdx writes
beside each file, as pywb and deref serve --archive read them. A file's
index beside it (NAME.cdxj, no older than the file), or a .cdxj given, is
merged as it is, without reading the file: the workers of a shared crawl
(--state redis://...) each index their own series, and deref index
crawl-*.warc.gz makes one index of them all.

--zipnum writes the ZipNum form instead, as wabac.js and pywb read large
collections: NAME.cdx.gz (blocks of 3,000 lines, each one gzip member)
and NAME.idx (a line for each block), keyed as a WACZ's index is. NAME is
FOLDER/index for a folder, else the first file's name without .warc.gz;
deref serve --archive (and warc.Open) then reads it for that folder or
file, without reading the WARC files through.
`

// runIndex is deref index.
func runIndex(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, "deref index: no WARC file given\n"+indexUsage)
		return 1
	}
	zipnum, name, paths := false, "", []string{}
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-h" || a == "--help":
			io.WriteString(stdout, indexUsage)
			return 0
		case a == "--zipnum":
			zipnum = true
		case a == "-o" && i+1 < len(args):
			name = args[i+1]
			i++
		case strings.HasPrefix(a, "-"):
			fmt.Fprintf(stderr, "deref index: unknown flag %s\nsee 'deref index -h'\n", a)
			return 1
		default:
			paths = append(paths, a)
		}
	}
	switch {
	case len(paths) == 0:
		fmt.Fprint(stderr, "deref index: no WARC file given\n"+indexUsage)
		return 1
	case name != "" && !zipnum:
		fmt.Fprintln(stderr, "deref index: -o goes with --zipnum (the CDXJ index goes to standard output)")
		return 1
	}
	var err error
	if zipnum {
		if name == "" {
			if st, serr := os.Stat(paths[0]); serr == nil && st.IsDir() {
				name = filepath.Join(paths[0], "index")
			} else {
				name = strings.TrimSuffix(warc.IndexName(paths[0]), ".cdxj")
			}
		}
		err = warc.WriteZipNum(name, paths...)
	} else {
		err = warc.WriteIndex(stdout, paths...)
	}
	if err != nil {
		fmt.Fprintln(stderr, "deref index: "+oneLine(err.Error()))
		if errors.Is(err, os.ErrNotExist) {
			return 1
		}
		return 7
	}
	return 0
}

const waczUsage = `usage: deref wacz create [--title TITLE] -o OUT.wacz WARC...
       deref wacz validate FILE.wacz

create packs WARC files (deref's, wget's) into a WACZ 1.1.1, as py-wacz's
wacz create does: archive/ the WARC files stored as they are; indexes/
their index, keyed as ReplayWeb.page looks captures up (index.cdxj, or
past 3,000 captures the ZipNum pair index.idx and index.cdx.gz);
pages/pages.jsonl the captures a person would open (HTML pages, Gopher
menus, FTP folders, newsgroups, gemtext pages, searches) with their
titles; datapackage.json with every file's sha256 and size; and
datapackage-digest.json. Every entry is stored, for readers that take it
by ranges; nothing is left under OUT's name unless the package is whole.
--wacz on deref, deref crawl and deref mirror does the same when the run
ends. validate checks what py-wacz's wacz validate checks (the required
files, every file listed with its hash and size, the manifest's digest,
the WARC files stored) and that every index line (CDXJ, and every block
of a ZipNum index) points at a whole record of its URL: one line a
problem, exit 0 only when there is none (7 otherwise). The hash js-wacz
0.1.6 records for WARC files (their bytes read twice, harvard-lil/js-wacz
#127) is named as such.
`

// runWACZ is deref wacz.
func runWACZ(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		io.WriteString(stdout, waczUsage)
		if len(args) == 0 {
			return 1
		}
		return 0
	}
	switch args[0] {
	case "create":
		out, title, files := "", "", []string{}
		for i := 1; i < len(args); i++ {
			switch a := args[i]; {
			case a == "-o" && i+1 < len(args):
				out = args[i+1]
				i++
			case a == "--title" && i+1 < len(args):
				title = args[i+1]
				i++
			case strings.HasPrefix(a, "-o="), strings.HasPrefix(a, "--output="):
				_, out, _ = strings.Cut(a, "=")
			case strings.HasPrefix(a, "-"):
				fmt.Fprintf(stderr, "deref wacz create: unknown flag %s\nsee 'deref wacz -h'\n", a)
				return 1
			default:
				files = append(files, a)
			}
		}
		if out == "" || len(files) == 0 {
			fmt.Fprint(stderr, "deref wacz create: -o OUT.wacz and at least one WARC file are needed\n"+waczUsage)
			return 1
		}
		if err := warc.CreateWACZ(out, files, warc.WACZOptions{Title: title, Software: version.UserAgent()}); err != nil {
			fmt.Fprintln(stderr, "deref wacz create: "+oneLine(err.Error()))
			switch {
			case fetch.Unwritable(err):
				return 8 // a full disk, a read-only one: a write error
			case errors.Is(err, os.ErrNotExist):
				return 1
			}
			return 7
		}
		return 0
	case "validate":
		if len(args) != 2 {
			fmt.Fprint(stderr, "deref wacz validate: one WACZ file is needed\n"+waczUsage)
			return 1
		}
		problems, err := warc.ValidateWACZ(args[1])
		if err != nil {
			fmt.Fprintln(stderr, "deref wacz validate: "+oneLine(err.Error()))
			return 7
		}
		for _, p := range problems {
			fmt.Fprintln(stdout, args[1]+": "+oneLine(p))
		}
		if len(problems) > 0 {
			return 7
		}
		return 0
	}
	fmt.Fprintf(stderr, "deref wacz: %s is not create or validate\nsee 'deref wacz -h'\n", args[0])
	return 1
}
