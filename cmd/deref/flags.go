package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/crawl"
	"github.com/urlderef/deref/fetch/mirror"
	"github.com/urlderef/deref/url"
)

// command is a set of deref's commands: a flag belongs to one or both.
type command int

const (
	cmdGet    command = 1 << iota // deref URL...
	cmdMirror                     // deref mirror URL DIR
	cmdCrawl                      // deref crawl URL...
	cmdServe                      // deref serve
	cmdBoth   = cmdGet | cmdMirror | cmdCrawl
)

// flagDef is one flag. The table of them (flagTable) is the one place a
// flag is declared: the parser, -h, the man page, the completion scripts
// and the config file reader all read it.
type flagDef struct {
	long  string  // without dashes
	short string  // one letter, or ""
	cmds  command // the commands that take it
	group string  // its section in -h and the man page
	// arg is the value's placeholder ("FILE"); "" for a switch.
	arg  string
	help string
	// complete says what the shell completes the value with: "file",
	// "dir", "url", or the choices separated by spaces.
	complete string
	hidden   bool // another tool's spelling or habit: not among the groups, but listed under "also taken" (or refused: help "refused")
	// positional makes the flag's value one of the positional arguments,
	// in its place among them (--url).
	positional bool
	set        func(o *options, v string) error
}

// commandNames are the words that follow "deref" to name a command.
var commandNames = map[command]string{cmdGet: "", cmdMirror: " mirror", cmdCrawl: " crawl", cmdServe: " serve"}

// The groups of -h and the man page, in their order.
var flagGroups = []string{"Output", "Connection", "HTTP", "FTP", "News", "Telnet and mail", "Mirror", "Crawl", "Serve", "General"}

// setters for the table.

func str(field func(*options) *string) func(*options, string) error {
	return func(o *options, v string) error { *field(o) = v; return nil }
}

func list(field func(*options) *[]string) func(*options, string) error {
	return func(o *options, v string) error { *field(o) = append(*field(o), v); return nil }
}

// regex compiles a regular expression (RE2) into a field.
func regex(field func(*options) **regexp.Regexp) func(*options, string) error {
	return func(o *options, v string) error {
		re, err := regexp.Compile(v)
		if err != nil {
			return fmt.Errorf("%q is not a regular expression: %v", v, err)
		}
		*field(o) = re
		return nil
	}
}

// commaList adds the comma-separated entries of a value to a list.
func commaList(field func(*options) *[]string) func(*options, string) error {
	return func(o *options, v string) error {
		for _, e := range strings.Split(v, ",") {
			if e = strings.TrimSpace(e); e != "" {
				if _, err := path.Match(e, ""); err != nil {
					return fmt.Errorf("%q is not a pattern: %v", e, err)
				}
				*field(o) = append(*field(o), e)
			}
		}
		return nil
	}
}

// The help of --cookie and --cookie-jar, and --cookie's setter, shared
// by the commands that give them letters and those that do not.
const (
	cookieHelp    = "send the cookie NAME=VALUE (repeatable; 'A=1; B=2' too; deref URL only) to the site asked for, never after a redirect to another; without '=', read cookies from FILE (curl's and wget's format; - is standard input; a FILE not there is none yet) and keep those servers set"
	cookieJarHelp = "keep the cookies servers set, sent back to their sites, and write them all to FILE at the end (- is standard output)"
)

func cookieFlag(o *options, v string) error {
	if strings.Contains(v, "=") {
		o.cookies = append(o.cookies, v)
	} else {
		o.cookieFiles = append(o.cookieFiles, v)
	}
	return nil
}

// refused is the setter of a flag of curl's or wget's that asks for
// what deref does not do: it is taken only to say why, rather than
// "unknown flag".
func refused(why string) func(*options, string) error {
	return func(*options, string) error { return errors.New(why) }
}

// recursiveWords and noClobberWords say why deref refuses flags wget
// and curl take.
const (
	recursiveWords = "deref crawl URL follows links as wget -r does; deref mirror URL DIR keeps a copy of a folder's tree"
	noClobberWords = "curl's --no-clobber writes NAME.1 where wget's skips a file that exists: deref takes --skip-existing (and wget's -nc) for the second; -N skips an unchanged file, and a file is replaced only when its transfer is whole"
)

// execute is the setter of wget's --execute (and -e, where its value is
// not a URL): of wgetrc's commands, deref takes robots=off, which is
// deref crawl's --ignore-robots (the other commands read no robots.txt).
func execute(o *options, v string) error {
	name, value, _ := strings.Cut(strings.ReplaceAll(strings.ToLower(v), " ", ""), "=")
	if name != "robots" {
		return fmt.Errorf("deref takes no wgetrc command but robots=off, not %q", v)
	}
	on, err := parseBool(value)
	if err != nil {
		return fmt.Errorf("robots=%s: %w", value, err)
	}
	o.c.opts.IgnoreRobots = !on
	return nil
}

// socks is the setter of --socks5 and --socks5-hostname: -x with the
// scheme, and curl's default port.
func socks(scheme string) func(*options, string) error {
	return func(o *options, v string) error {
		if v == "" || strings.Contains(v, "/") {
			return fmt.Errorf("%q is not HOST or HOST:PORT", v)
		}
		if _, _, err := net.SplitHostPort(v); err != nil {
			v = net.JoinHostPort(strings.Trim(v, "[]"), "1080")
		}
		o.proxy = scheme + "://" + v
		return nil
	}
}

// switchValue is the setter of a switch that puts value in a field, the
// last given winning (-4 and -6, --basic and --digest); "=false" takes
// back its own value, leaving the zero value.
func switchValue[T comparable](field func(*options) *T, value T) func(*options, string) error {
	return func(o *options, v string) error {
		on, err := parseBool(v)
		var zero T
		switch {
		case err != nil:
			return err
		case on:
			*field(o) = value
		case *field(o) == value:
			*field(o) = zero
		}
		return nil
	}
}

// outputFile is the setter of -o: the file of the next URL.
func outputFile(o *options, v string) error {
	o.output = v
	o.outputs = append(o.outputs, v)
	return nil
}

// level is the setter of wget's --level: a depth, or inf for none.
func level(field func(*options) *int) func(*options, string) error {
	return func(o *options, v string) error {
		if v == "inf" {
			*field(o) = 0
			return nil
		}
		return integer(field)(o, v)
	}
}

// recursive wraps the setter of a flag that asks deref crawl to follow
// links (wget's -r, -l; --max-depth), which -p alone does not.
func recursive(set func(*options, string) error) func(*options, string) error {
	return func(o *options, v string) error {
		o.c.recursive = true
		return set(o, v)
	}
}

// mirrorLine is the setter of deref crawl's --mirror, wget's -r -N -l
// inf.
func mirrorLine(o *options, v string) error {
	if err := habit(o, v); err != nil {
		return err
	}
	o.c.recursive, o.c.mirror, o.c.opts.OnlyNewer, o.c.opts.MaxDepth = true, true, true, 0
	return nil
}

// habit is the setter of a flag of curl's that asks for what deref does
// anyway: it is taken, as a switch, and changes nothing; it cannot be
// turned off.
func habit(_ *options, v string) error {
	on, err := parseBool(v)
	if err == nil && !on {
		err = errors.New("deref always does this; it cannot be turned off")
	}
	return err
}

func boolean(field func(*options) *bool) func(*options, string) error {
	return func(o *options, v string) error {
		b, err := parseBool(v)
		*field(o) = b
		return err
	}
}

func integer(field func(*options) *int) func(*options, string) error {
	return func(o *options, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("%q is not a count", v)
		}
		*field(o) = n
		return nil
	}
}

func secs(field func(*options) *float64) func(*options, string) error {
	return func(o *options, v string) error {
		f, err := parseSeconds(v)
		*field(o) = f
		return err
	}
}

// maxSeconds bounds a length of time given: about 31 years, well within
// what a time.Duration holds.
const maxSeconds = 1e9

// parseSeconds reads a length of time: a number of seconds ("1.5", as curl
// and wget take it), or a number and a unit as wget writes them ("2m",
// "1h", "1d", "1w") and Go does ("500ms", "1m30s").
func parseSeconds(v string) (float64, error) {
	bad := fmt.Errorf("%q is not a number of seconds or a duration such as 500ms or 2m", v)
	number := func(s string, unit float64) (float64, error) {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || !(f >= 0 && f*unit <= maxSeconds) { // NaN fails too
			return 0, bad
		}
		return f * unit, nil
	}
	if f, err := number(v, 1); err == nil {
		return f, nil
	}
	switch {
	case strings.HasSuffix(v, "d"):
		return number(strings.TrimSuffix(v, "d"), 24*3600)
	case strings.HasSuffix(v, "w"):
		return number(strings.TrimSuffix(v, "w"), 7*24*3600)
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 || d.Seconds() > maxSeconds {
		return 0, bad
	}
	return d.Seconds(), nil
}

func size(field func(*options) *int64) func(*options, string) error {
	return func(o *options, v string) error {
		n, err := parseSize(v)
		*field(o) = n
		return err
	}
}

// parseBool reads a switch's value: "" (given on the command line) and
// true, yes, on, 1 set it; false, no, off, 0 clear it.
func parseBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "", "true", "yes", "on", "1":
		return true, nil
	case "false", "no", "off", "0":
		return false, nil
	}
	return false, fmt.Errorf("%q is not yes or no", v)
}

// parseSize reads a size in bytes, with an optional suffix k, M, G or T
// (powers of 1024, as curl and wget count): "500k", "2M", "1.5G".
func parseSize(v string) (int64, error) {
	s := strings.TrimSpace(v)
	mult := 1.0
	if s != "" {
		switch s[len(s)-1] {
		case 'k', 'K':
			mult = 1 << 10
		case 'm', 'M':
			mult = 1 << 20
		case 'g', 'G':
			mult = 1 << 30
		case 't', 'T':
			mult = 1 << 40
		}
		if mult > 1 {
			s = s[:len(s)-1]
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f*mult > 1<<62 {
		return 0, fmt.Errorf("%q is not a size such as 500k, 2M or 1G", v)
	}
	return int64(f * mult), nil
}

// flagTable declares every flag of every command.
var flagTable = []flagDef{
	// Output
	{long: "output", short: "o", cmds: cmdGet, group: "Output", arg: "FILE", complete: "file",
		help: "write the object to FILE (- for standard output); for several URLs, one -o per URL, in order, as curl pairs them",
		set:  outputFile},
	{long: "remote-name", short: "O", cmds: cmdGet, group: "Output",
		help: "write to a file named after the URL's last segment (never a name the server chose)", set: boolean(func(o *options) *bool { return &o.remoteName })},
	{long: "remote-name-all", cmds: cmdGet, group: "Output", hidden: true,
		help: "curl's --remote-name-all: -O, which is for every URL", set: boolean(func(o *options) *bool { return &o.remoteName })},
	{long: "output-dir", cmds: cmdGet, group: "Output", arg: "DIR", complete: "dir",
		help: "folder for -o and -O files, made when missing", set: str(func(o *options) *string { return &o.outputDir })},
	{long: "create-dirs", cmds: cmdGet, group: "Output",
		help: "create the folders -o names when missing", set: boolean(func(o *options) *bool { return &o.createDirs })},
	{long: "continue-at", short: "C", cmds: cmdGet, group: "Output", arg: "OFFSET",
		help: "resume from byte OFFSET (standard output); - continues the existing output file", set: str(func(o *options) *string { return &o.resume })},
	{long: "dump-header", short: "D", cmds: cmdGet, group: "Output", arg: "FILE", complete: "file",
		help: "write what the servers answer before the object (HTTP status and header lines, FTP replies) to FILE (- for standard output), as curl -D", set: str(func(o *options) *string { return &o.dumpHeader })},
	{long: "time-cond", short: "z", cmds: cmdGet, group: "Output", arg: "DATE|FILE",
		help: "only an object newer than DATE (2006-01-02, RFC 3339 or HTTP's form) or than FILE's modification time, as curl -z; an older one is skipped", set: str(func(o *options) *string { return &o.timeCond })},
	{long: "range", short: "r", cmds: cmdGet, group: "Output", arg: "FIRST-LAST",
		help: "only bytes FIRST to LAST of the object (FIRST- for the rest, -N for the last N), as curl -r; to standard output or -o FILE", set: str(func(o *options) *string { return &o.byteRange })},
	{long: "only-newer", short: "N", cmds: cmdGet, group: "Output",
		help: "with -o, -O or -i: skip the transfer when the local file is as new as the remote (HTTP If-Modified-Since, FTP MDTM and SIZE, Gopher+ Mod-Date)", set: boolean(func(o *options) *bool { return &o.onlyNewer })},
	{long: "input-file", short: "i", cmds: cmdGet, group: "Output", arg: "FILE", complete: "file",
		help: "read URLs from FILE, one per line (- for standard input)", set: str(func(o *options) *string { return &o.inputFile })},
	{long: "parallel-max", cmds: cmdGet, group: "Output", arg: "N", hidden: true,
		help: "curl's --parallel-max: --parallel N", set: integer(func(o *options) *int { return &o.parallel })},
	{short: "Z", long: "parallel-switch", cmds: cmdGet, group: "Output", hidden: true,
		help: "curl's -Z: --parallel 50, curl's default most at once", set: func(o *options, v string) error {
			if err := habit(o, v); err != nil {
				return err
			}
			if o.parallel <= 1 {
				o.parallel = 50
			}
			return nil
		}},
	{long: "parallel", cmds: cmdGet, group: "Output", arg: "N",
		help: "fetch up to N URLs at once (with -O)", set: integer(func(o *options) *int { return &o.parallel })},
	{long: "segments", cmds: cmdGet, group: "Output", arg: "N",
		help: "with -o or -O: fetch a large file over N connections at once, each its own byte range (HTTP Range, FTP REST), resumable per range (one connection with --warc-file, for a whole record)", set: integer(func(o *options) *int { return &o.segments })},
	{long: "segment-min", cmds: cmdGet, group: "Output", arg: "SIZE",
		help: "with --segments: only for files of at least SIZE (suffixes k, M, G; every range is at least 1 MiB)", set: size(func(o *options) *int64 { return &o.segmentMin })},
	{long: "warc-file", cmds: cmdBoth, group: "Output", arg: "NAME", complete: "file",
		help: "also write every retrieval to NAME.warc.gz (WARC/1.1; NAME.warc with --no-warc-compression): HTTP requests and responses, FTP, Gopher, news, WAIS and file: objects and listings", set: str(func(o *options) *string { return &o.warcFile })},
	{long: "wacz", cmds: cmdBoth, group: "Output", arg: "NAME.wacz", complete: "file",
		help: "also pack the run's WARC files into NAME.wacz (WACZ 1.1.1, as deref wacz create packs them) when it ends; they are written as --warc-file NAME unless it is given, and stay; an interrupted run writes none", set: str(func(o *options) *string { return &o.wacz })},
	{long: "warc-max-size", cmds: cmdBoth, group: "Output", arg: "SIZE",
		help: "with --warc-file: roll over to NAME-00000.warc.gz, NAME-00001.warc.gz, ... past SIZE (suffixes k, M, G)", set: size(func(o *options) *int64 { return &o.warcMaxSize })},
	{long: "warc-cdx", cmds: cmdBoth, group: "Output",
		help: "with --warc-file: write NAME.cdxj beside each WARC file, the CDXJ index pywb reads", set: boolean(func(o *options) *bool { return &o.warcCDX })},
	{long: "warc-dedup", cmds: cmdBoth, group: "Output", arg: "INDEX", complete: "file",
		help: "with --warc-file: payloads the INDEX of an earlier run lists become revisit records (its CDXJ, or the CDX file of wget's --warc-cdx)", set: str(func(o *options) *string { return &o.warcDedup })},
	{long: "warc-header", cmds: cmdBoth, group: "Output", arg: "'NAME: VALUE'",
		help: "with --warc-file: add this line to each file's warcinfo record (repeatable)", set: list(func(o *options) *[]string { return &o.warcHeaders })},
	{long: "warc-tempdir", cmds: cmdBoth, group: "Output", arg: "DIR", complete: "dir",
		help: "with --warc-file: spool large records in DIR (default: the system's temporary folder)", set: str(func(o *options) *string { return &o.warcTempDir })},
	{long: "no-warc-compression", cmds: cmdBoth, group: "Output",
		help: "with --warc-file: write NAME.warc, its records not compressed", set: boolean(func(o *options) *bool { return &o.warcUncompressed })},
	{long: "no-warc-digests", cmds: cmdBoth, group: "Output",
		help: "with --warc-file: leave out the records' SHA-1 digests, and so the revisit records", set: boolean(func(o *options) *bool { return &o.warcNoDigests })},
	{long: "no-warc-keep-log", cmds: cmdBoth, group: "Output", hidden: true,
		help: "wget's: keep no log in the archive (the default: deref writes none there)", set: habit},
	{long: "head", short: "I", cmds: cmdGet, group: "Output",
		help: "print the head only, as curl -I does: HTTP's (HEAD), curl's Content-Length, Accept-ranges and Last-Modified lines for the other schemes (FTP SIZE and MDTM); with --json deref's own fields", set: boolean(func(o *options) *bool { return &o.head })},
	{long: "raw", cmds: cmdGet, group: "Output",
		help: "print listings as the server sent them", set: boolean(func(o *options) *bool { return &o.raw })},
	{long: "json", cmds: cmdGet, group: "Output",
		help: "print listings as one JSON object per entry, and -I as one object", set: boolean(func(o *options) *bool { return &o.json })},
	{long: "write-out", short: "w", cmds: cmdGet, group: "Output", arg: "FORMAT",
		help: "after each URL print FORMAT with %{url}, %{http_code}, %{url_effective}, %{exitcode}, %{size_download}, %{time_total}, %{time_connect}, %{remote_ip}, %{http_version}, %header{NAME}, %{content_type}, %{filename_effective}, %{errormsg}, %{json}, %{onerror} and more of curl's; json alone prints them all as one object",
		set:  str(func(o *options) *string { return &o.writeOut })},
	{long: "checksum", cmds: cmdGet, group: "Output", arg: "ALG:HEX",
		help: "with -o or -O: check the object's digest (sha256, sha512, sha1, md5) before it gets its name; a mismatch leaves nothing and exits 9",
		set:  str(func(o *options) *string { return &o.checksum })},
	{long: "checksum-file", cmds: cmdGet, group: "Output", arg: "URL|FILE", complete: "file",
		help: "with -o or -O (and -i): check each file against its line in this sums file (sha256sum or BSD lines), fetched once over any scheme",
		set:  str(func(o *options) *string { return &o.checksumFile })},
	// curl's habits (curl -fsSL): what they ask is deref's default.
	{long: "location", short: "L", cmds: cmdGet, group: "HTTP", hidden: true, help: "follow redirects (the default)", set: habit},
	{long: "fail", short: "f", cmds: cmdGet, group: "HTTP", hidden: true, help: "fail on an error status, writing nothing (the default)", set: habit},
	{long: "fail-with-body", cmds: cmdGet, group: "HTTP",
		help: "on an HTTP error status, write the server's error page where the object would go, and fail all the same", set: boolean(func(o *options) *bool { return &o.failWithBody })},
	{long: "content-on-error", cmds: cmdGet, group: "HTTP", hidden: true,
		help: "wget's --content-on-error: --fail-with-body", set: boolean(func(o *options) *bool { return &o.failWithBody })},
	{long: "show-error", short: "S", cmds: cmdGet, group: "Output", hidden: true, help: "print errors with -s (the default)", set: habit},
	{long: "remote-time", short: "R", cmds: cmdGet, group: "Output", hidden: true, help: "give a file the server's modification time (the default)", set: habit},
	{long: "globoff", short: "g", cmds: cmdGet, group: "Output", hidden: true, help: "take [] and {} in a URL as they are (the default: deref never globs)", set: habit},
	{long: "netrc-optional", cmds: cmdBoth, group: "Connection", hidden: true, help: "read ~/.netrc when there is one (the default)", set: habit},
	{long: "path-as-is", cmds: cmdGet, group: "HTTP", hidden: true, help: "send /../ and /./ as they are (the default)", set: habit},
	{long: "tcp-nodelay", cmds: cmdGet, group: "Connection", hidden: true, help: "TCP_NODELAY (the default)", set: habit},
	{long: "ssl-reqd", cmds: cmdBoth | cmdServe, group: "FTP", hidden: true, help: "curl's --ssl-reqd: --ftp-ssl and --news-starttls",
		set: func(o *options, v string) error {
			on, err := parseBool(v)
			o.ftpSSL, o.newsTLS = on, on
			return err
		}},
	{long: "ftp-ssl-reqd", cmds: cmdBoth | cmdServe, group: "FTP", hidden: true, help: "curl's old spelling of --ftp-ssl", set: boolean(func(o *options) *bool { return &o.ftpSSL })},
	{long: "retry-all-errors", cmds: cmdGet, group: "Connection", help: "with --retry: try again after any failure, a 404 too (not a write error or a bad URL), as curl", set: boolean(func(o *options) *bool { return &o.retryAll })},
	{long: "retry-on-http-error", cmds: cmdGet | cmdCrawl, group: "Connection", arg: "CODES",
		help: "with --retry: try again after these HTTP statuses too (comma-separated, such as 404), as wget; 408, 429 and 5xx always are", set: func(o *options, v string) error {
			for _, f := range strings.Split(v, ",") {
				n, err := strconv.Atoi(strings.TrimSpace(f))
				if err != nil || n < 100 || n > 599 {
					return fmt.Errorf("%q is not an HTTP status code", f)
				}
				o.retryStatuses = append(o.retryStatuses, n)
			}
			return nil
		}},
	{long: "fail-early", cmds: cmdGet, group: "Output", hidden: true, help: "start no URL after one has failed", set: boolean(func(o *options) *bool { return &o.failEarly })},
	{long: "progress-bar", short: "#", cmds: cmdGet, group: "Output", hidden: true, help: "a progress bar on a terminal (the default: deref's progress line)", set: habit},
	{long: "no-progress-meter", cmds: cmdGet, group: "Output", hidden: true, help: "no progress line (curl's spelling of -s)", set: boolean(func(o *options) *bool { return &o.silent })},
	{long: "url", cmds: cmdGet, group: "Output", arg: "URL", hidden: true, help: "a URL to fetch, in its place among the others (curl's spelling)", set: func(*options, string) error { return nil }, positional: true},
	{long: "request", short: "X", cmds: cmdGet, group: "HTTP", arg: "METHOD", hidden: true, help: "GET only: deref retrieves (-I for HEAD)", set: func(_ *options, v string) error {
		if v != "GET" {
			return fmt.Errorf("deref retrieves: it sends GET (and HEAD with -I), not %s", v)
		}
		return nil
	}},
	{long: "include", cmds: cmdGet, group: "HTTP", hidden: true,
		help: "curl's --include: -D - (the head to standard output, before the object; with -o, not into the file)", set: func(o *options, v string) error {
			if err := habit(o, v); err != nil {
				return err
			}
			o.dumpHeader = "-"
			return nil
		}},
	{long: "location-trusted", cmds: cmdGet, group: "HTTP", hidden: true, help: "refused",
		set: refused("deref sends a login, Authorization and Cookie fields only to the site asked for, never after a redirect to another")},
	{long: "proxy-basic", cmds: cmdGet, group: "Connection", hidden: true, help: "Basic to the proxy (what -U sends)", set: habit},
	{long: "ftp-pasv", cmds: cmdGet, group: "Connection", hidden: true, help: "passive FTP data connections (the default)", set: habit},
	{long: "disable-epsv", cmds: cmdBoth, group: "FTP",
		help: "ask FTP servers for data connections with PASV only, not EPSV first, as curl --disable-epsv", set: boolean(func(o *options) *bool { return &o.noEPSV })},
	{long: "disable-eprt", cmds: cmdBoth, group: "FTP", hidden: true, help: "what deref does: its data connections are passive", set: habit},
	{long: "ftp-skip-pasv-ip", cmds: cmdBoth, group: "FTP", hidden: true, help: "what deref does: data connections go to the control connection's address, whatever PASV names", set: habit},
	{long: "quote", short: "Q", cmds: cmdGet, group: "FTP", arg: "COMMAND", hidden: true, help: "refused", set: refused("deref sends no raw commands: it retrieves")},
	{long: "xattr", cmds: cmdGet, group: "Output",
		help: "with -o or -O: write the URL the file came from (without user and password) and its media type into its extended attributes (user.xdg.origin.url, user.mime_type), as curl and wget --xattr", set: boolean(func(o *options) *bool { return &o.xattr })},
	{long: "trace-time", cmds: cmdBoth, group: "Output",
		help: "with -v or --trace-ascii: begin each line of the trace with the time, as curl --trace-time", set: boolean(func(o *options) *bool { return &o.traceTime })},
	{long: "capath", cmds: cmdBoth | cmdServe, group: "Connection", arg: "DIR", complete: "dir",
		help: "verify TLS servers against the certificates (PEM) of the files in DIR instead of the system's, as curl --capath", set: str(func(o *options) *string { return &o.caPath })},
	{long: "ca-native", cmds: cmdBoth | cmdServe, group: "Connection", hidden: true, help: "what deref does without --cacert: the system's certificates", set: habit},
	{long: "ssl-no-revoke", cmds: cmdBoth | cmdServe, group: "Connection", hidden: true, help: "what deref does: it asks no revocation list", set: habit},
	{long: "no-sessionid", cmds: cmdBoth | cmdServe, group: "Connection", hidden: true, help: "taken: deref resumes no TLS sessions from one run to the next", set: habit},
	{long: "false-start", cmds: cmdBoth, group: "Connection", hidden: true, help: "taken: curl's TLS False Start, which Go's TLS does not do", set: habit},
	{long: "tcp-fastopen", cmds: cmdBoth, group: "Connection", hidden: true, help: "taken: connections are opened as usual", set: habit},
	{long: "tcp-nodelay", cmds: cmdBoth, group: "Connection", hidden: true, help: "what deref does (Go sets TCP_NODELAY)", set: habit},
	{long: "no-keepalive", cmds: cmdBoth, group: "Connection", hidden: true, help: "taken: deref keeps Go's TCP keep-alive probes", set: habit},
	{long: "keepalive-time", cmds: cmdBoth, group: "Connection", arg: "SECONDS", hidden: true, help: "taken: deref keeps Go's TCP keep-alive interval", set: takenNumber("seconds")},
	{long: "happy-eyeballs-timeout-ms", cmds: cmdBoth, group: "Connection", arg: "MS", hidden: true, help: "taken: deref tries the next address after Go's 300 ms", set: takenNumber("milliseconds")},
	{long: "styled-output", cmds: cmdBoth, group: "Output", hidden: true, help: "taken: deref styles no output", set: habit},
	{long: "no-styled-output", cmds: cmdBoth, group: "Output", hidden: true, help: "what deref does", set: habit},
	{long: "post301", cmds: cmdGet, group: "HTTP", hidden: true, help: "what deref does: it sends GET after any redirect", set: habit},
	{long: "post302", cmds: cmdGet, group: "HTTP", hidden: true, help: "what deref does: it sends GET after any redirect", set: habit},
	{long: "post303", cmds: cmdGet, group: "HTTP", hidden: true, help: "what deref does: it sends GET after any redirect", set: habit},
	{long: "hsts", cmds: cmdBoth, group: "HTTP", arg: "FILE", hidden: true, help: "refused", set: refused("deref keeps no HSTS cache: give https:// URLs (redirects never lead from https to http without --allow-downgrade)")},
	{long: "alt-svc", cmds: cmdBoth, group: "HTTP", arg: "FILE", hidden: true, help: "refused", set: refused("deref speaks HTTP/1.1 and keeps no Alt-Svc cache")},
	{long: "doh-url", cmds: cmdBoth, group: "Connection", arg: "URL", hidden: true, help: "refused", set: refused("deref resolves names with the system's resolver; --resolve and --connect-to pin addresses")},
	{long: "dns-servers", cmds: cmdBoth, group: "Connection", arg: "ADDRESSES", hidden: true, help: "refused", set: refused("deref resolves names with the system's resolver; --resolve and --connect-to pin addresses")},
	{long: "libcurl", cmds: cmdGet, group: "Output", arg: "FILE", hidden: true, help: "refused", set: refused("deref writes no C program: the library is fetch.Get and fetch.Client")},
	{long: "metalink", cmds: cmdGet, group: "Output", hidden: true, help: "refused", set: refused("deref reads no Metalink files (curl dropped them too)")},
	{long: "http0.9", cmds: cmdBoth, group: "HTTP", hidden: true, help: "refused", set: refused("deref speaks HTTP/1.1 only")},
	{long: "parallel-immediate", cmds: cmdGet, group: "Output", hidden: true, help: "connect at once (what --parallel does)", set: habit},
	{long: "get", short: "G", cmds: cmdGet, group: "HTTP",
		help: "put the data of -d, --data-urlencode and the like into the URL's query, as curl -G (deref sends no request body)", set: boolean(func(o *options) *bool { return &o.getQuery })},
	{long: "url-query", cmds: cmdGet, group: "HTTP", arg: "DATA",
		help: "add DATA to the URL's query, encoded as --data-urlencode encodes it ('+DATA': as it is), as curl --url-query", set: queryFlag("url-query")},
	{long: "data", short: "d", cmds: cmdGet, group: "HTTP", arg: "DATA", help: "with -G: add DATA (NAME=VALUE, @FILE) to the URL's query as it is, as curl -G -d does", set: queryFlag("data")},
	{long: "data-ascii", cmds: cmdGet, group: "HTTP", arg: "DATA", hidden: true, help: "with -G: query data", set: queryFlag("data-ascii")},
	{long: "data-raw", cmds: cmdGet, group: "HTTP", arg: "DATA", hidden: true, help: "with -G: query data", set: queryFlag("data-raw")},
	{long: "data-binary", cmds: cmdGet, group: "HTTP", arg: "DATA", hidden: true, help: "with -G: query data", set: queryFlag("data-binary")},
	{long: "data-urlencode", cmds: cmdGet, group: "HTTP", arg: "DATA", help: "with -G: add DATA (NAME=VALUE, =VALUE, NAME@FILE) to the URL's query, the value URL-encoded, as curl -G --data-urlencode does", set: queryFlag("data-urlencode")},
	{long: "post-data", cmds: cmdGet, group: "HTTP", arg: "DATA", hidden: true, help: "refused", set: refused("deref retrieves: it sends no request body")},
	{long: "post-file", cmds: cmdGet, group: "HTTP", arg: "FILE", hidden: true, help: "refused", set: refused("deref retrieves: it sends no request body")},
	{long: "form", short: "F", cmds: cmdGet, group: "HTTP", arg: "FIELD", hidden: true, help: "refused", set: refused("deref retrieves: it sends no form")},
	{long: "upload-file", short: "T", cmds: cmdGet, group: "HTTP", arg: "FILE", hidden: true, help: "refused", set: refused("deref retrieves: it uploads nothing")},
	{long: "remote-header-name", short: "J", cmds: cmdGet, group: "Output", hidden: true, help: "refused",
		set: refused("deref never names a file after what the server says (Content-Disposition): -O takes the URL's name, -o FILE yours")},
	{long: "content-disposition", cmds: cmdGet, group: "Output", hidden: true, help: "refused",
		set: refused("deref never names a file after what the server says (Content-Disposition): -O takes the URL's name, -o FILE yours")},
	{long: "silent", short: "s", cmds: cmdGet, group: "Output",
		help: "no progress line", set: boolean(func(o *options) *bool { return &o.silent })},
	{long: "trace-ascii", cmds: cmdGet, group: "Output", arg: "FILE", complete: "file",
		help: "write -v's trace (the protocol conversation, passwords hidden) to FILE (- is standard output); not a dump of the data",
		set:  str(func(o *options) *string { return &o.traceFile })},
	{long: "trace", cmds: cmdGet, group: "Output", arg: "FILE", complete: "file", hidden: true,
		help: "curl's --trace: --trace-ascii (no hex dump)", set: str(func(o *options) *string { return &o.traceFile })},
	{long: "no-buffer", cmds: cmdGet, group: "Output", hidden: true,
		help: "curl's --no-buffer: deref writes an object as it arrives, unbuffered", set: habit},
	{long: "stderr", cmds: cmdGet | cmdCrawl, group: "Output", arg: "FILE", complete: "file",
		help: "write messages, the progress line and -v's trace to FILE (- is standard output) in place of standard error",
		set:  str(func(o *options) *string { return &o.stderrFile })},
	{long: "silent", short: "s", cmds: cmdMirror, group: "Output",
		help: "no progress bars and no summary", set: boolean(func(o *options) *bool { return &o.silent })},
	{long: "silent", short: "s", cmds: cmdCrawl, group: "Output",
		help: "no summary", set: boolean(func(o *options) *bool { return &o.silent })},

	// Connection
	{long: "verbose", short: "v", cmds: cmdGet | cmdCrawl | cmdServe, group: "Connection",
		help: "write the protocol conversation to standard error (passwords hidden)", set: boolean(func(o *options) *bool { return &o.verbose })},
	{long: "verbose", short: "v", cmds: cmdMirror, group: "Output",
		help: "list each file added, updated and deleted, a line each, as lftp's mirror -v and rsync -v do (--debug: the protocol conversation too)", set: boolean(func(o *options) *bool { return &o.m.verbose })},
	{long: "debug", cmds: cmdMirror, group: "Connection",
		help: "write the protocol conversation to standard error (passwords hidden), and every file's action, unchanged ones too", set: boolean(func(o *options) *bool { return &o.verbose })},
	{long: "user", short: "u", cmds: cmdBoth, group: "Connection", arg: "USER[:PASSWORD]",
		help: "log in as USER where the URL names no user, on every scheme with a login (the password is asked for on the terminal when missing)", set: str(func(o *options) *string { return &o.user })},
	{long: "digest", cmds: cmdBoth, group: "Connection",
		help: "log in to HTTP servers with Digest only (RFC 7616: SHA-256 or MD5), sending nothing until the server asks; without it, -u's login goes as Basic and a Digest challenge is answered", set: switchValue(func(o *options) *fetch.HTTPAuth { return &o.httpAuth }, fetch.AuthDigest)},
	{long: "anyauth", cmds: cmdBoth, group: "Connection",
		help: "wait for an HTTP server's challenge and log in as it asks: Digest, or Basic where that is all it takes", set: switchValue(func(o *options) *fetch.HTTPAuth { return &o.httpAuth }, fetch.AuthAny)},
	{long: "basic", cmds: cmdBoth, group: "Connection", hidden: true,
		help: "curl's --basic: -u's login goes as HTTP Basic with the request (the default)", set: switchValue(func(o *options) *fetch.HTTPAuth { return &o.httpAuth }, fetch.AuthBasic)},
	{long: "auth-no-challenge", cmds: cmdBoth, group: "Connection", hidden: true,
		help: "wget's --auth-no-challenge: --basic", set: switchValue(func(o *options) *fetch.HTTPAuth { return &o.httpAuth }, fetch.AuthBasic)},
	{long: "ntlm", cmds: cmdBoth, group: "Connection", hidden: true, help: "refused",
		set: refused("deref logs in to HTTP servers with Basic and Digest only: no NTLM")},
	{long: "negotiate", cmds: cmdBoth, group: "Connection", hidden: true, help: "refused",
		set: refused("deref logs in to HTTP servers with Basic and Digest only: no SPNEGO")},
	{long: "oauth2-bearer", cmds: cmdBoth, group: "Connection", arg: "TOKEN",
		help: "send Authorization: Bearer TOKEN to HTTP servers (not after a redirect to another site)", set: str(func(o *options) *string { return &o.bearer })},
	{long: "proxy-user", short: "U", cmds: cmdGet | cmdMirror, group: "Connection", arg: "USER:PASSWORD",
		help: "log in to the proxy (-x or the environment's) as USER", set: str(func(o *options) *string { return &o.proxyUser })},
	{long: "proxy-user", cmds: cmdCrawl, group: "Connection", arg: "USER:PASSWORD",
		help: "log in to the proxy (-x or the environment's) as USER; -U is wget's --user-agent here", set: str(func(o *options) *string { return &o.proxyUser })},
	{long: "proxy-password", cmds: cmdBoth, group: "Connection", arg: "PASSWORD", hidden: true,
		help: "wget's --proxy-password: the password of --proxy-user", set: str(func(o *options) *string { return &o.proxyPassword })},
	{long: "max-time", short: "m", cmds: cmdGet | cmdMirror | cmdServe, group: "Connection", arg: "SECONDS",
		help: "give up after SECONDS in all", set: secs(func(o *options) *float64 { return &o.maxTime })},
	{long: "max-time", cmds: cmdCrawl, group: "Connection", arg: "SECONDS",
		help: "give up after SECONDS in all; -m is wget's --mirror here", set: secs(func(o *options) *float64 { return &o.maxTime })},
	{long: "ipv4", short: "4", cmds: cmdBoth | cmdServe, group: "Connection",
		help: "connect over IPv4 only", set: switchValue(func(o *options) *string { return &o.network }, "tcp4")},
	{long: "inet4-only", cmds: cmdBoth | cmdServe, group: "Connection", hidden: true, help: "wget's spelling of --ipv4", set: switchValue(func(o *options) *string { return &o.network }, "tcp4")},
	{long: "ipv6", short: "6", cmds: cmdBoth | cmdServe, group: "Connection",
		help: "connect over IPv6 only", set: switchValue(func(o *options) *string { return &o.network }, "tcp6")},
	{long: "inet6-only", cmds: cmdBoth | cmdServe, group: "Connection", hidden: true, help: "wget's spelling of --ipv6", set: switchValue(func(o *options) *string { return &o.network }, "tcp6")},
	{long: "connect-timeout", cmds: cmdBoth | cmdServe, group: "Connection", arg: "SECONDS",
		help: "give up connecting after SECONDS (default 30)", set: secs(func(o *options) *float64 { return &o.connectTimeout })},
	{long: "idle-timeout", cmds: cmdBoth | cmdServe, group: "Connection", arg: "SECONDS",
		help: "give up when no data arrives for SECONDS (default 120)", set: secs(func(o *options) *float64 { return &o.idleTimeout })},
	{long: "retry", cmds: cmdGet, group: "Connection", arg: "N",
		help: "try a temporary failure N more times (time-outs, network failures, FTP 4xx, HTTP 429 and 5xx), waiting longer each time, or as the server asks",
		set:  integer(func(o *options) *int { return &o.retry })},
	{long: "retry-connrefused", cmds: cmdBoth, group: "Connection",
		help: "count a refused connection as a temporary failure too (with --retry; not retried by default, as curl and wget have it)",
		set:  boolean(func(o *options) *bool { return &o.retryRefused })},
	{long: "retry-delay", cmds: cmdGet, group: "Connection", arg: "SECONDS",
		help: "wait SECONDS before the first retry, doubling after (default 1)", set: secs(func(o *options) *float64 { return &o.retryDelay })},
	{long: "retry-max-time", cmds: cmdGet, group: "Connection", arg: "SECONDS",
		help: "start no retry after SECONDS from the first attempt", set: secs(func(o *options) *float64 { return &o.retryMaxTime })},
	{long: "limit-rate", cmds: cmdGet, group: "Connection", arg: "RATE",
		help: "read each transfer at most RATE bytes per second (suffixes k, M, G)", set: size(func(o *options) *int64 { return &o.limitRate })},
	{long: "speed-limit", short: "Y", cmds: cmdBoth, group: "Connection", arg: "BYTES",
		help: "end a transfer slower than BYTES a second (suffixes k, M, G) for --speed-time (30 s)", set: size(func(o *options) *int64 { return &o.speedLimit })},
	{long: "speed-time", short: "y", cmds: cmdBoth, group: "Connection", arg: "SECONDS",
		help: "how long a transfer may be slower than --speed-limit (1 byte a second if not given)", set: secs(func(o *options) *float64 { return &o.speedTime })},
	{long: "max-filesize", cmds: cmdBoth, group: "Connection", arg: "SIZE",
		help: "refuse objects larger than SIZE (suffixes k, M, G)", set: size(func(o *options) *int64 { return &o.maxBytes })},
	{long: "noproxy", cmds: cmdBoth | cmdServe, group: "Connection", arg: "HOSTS",
		help: "reach these hosts directly, whatever -x or the environment says (comma-separated; .domain and * too)", set: str(func(o *options) *string { return &o.noProxy })},
	{long: "proxy", short: "x", cmds: cmdGet, group: "Connection", arg: "URL", complete: "url",
		help: "use this proxy for every URL: http://host:port or socks5://host:port (- for none)", set: str(func(o *options) *string { return &o.proxy })},
	{long: "proxy", cmds: cmdMirror | cmdCrawl, group: "Connection", arg: "URL", complete: "url",
		help: "use this proxy for every URL: http://host:port or socks5://host:port (- for none); -x is lftp's --exclude RX in deref mirror, wget's --force-directories in deref crawl", set: str(func(o *options) *string { return &o.proxy })},
	{long: "force-directories", short: "x", cmds: cmdCrawl, group: "Crawl", hidden: true,
		help: "wget's -x: what deref crawl does with --output-dir, DIR/HOST/PATH (it undoes -nd)", set: func(o *options, v string) error {
			on, err := parseBool(v)
			if on {
				o.c.opts.NoDirectories = false
			}
			return err
		}},
	{long: "connect-to", cmds: cmdBoth | cmdServe, group: "Connection", arg: "HOST1:PORT1:HOST2:PORT2",
		help: "connect to HOST2:PORT2 for HOST1:PORT1 (repeatable; an empty HOST2 or PORT2 is HOST1's or PORT1's), the request still naming HOST1, as curl --connect-to", set: list(func(o *options) *[]string { return &o.connectTo })},
	{long: "unix-socket", cmds: cmdBoth, group: "Connection", arg: "PATH", complete: "file",
		help: "connect through the Unix domain socket PATH instead of the network, as curl --unix-socket (deref --unix-socket /var/run/docker.sock http://localhost/version asks Docker)", set: str(func(o *options) *string { return &o.unixSocket })},
	{long: "abstract-unix-socket", cmds: cmdBoth, group: "Connection", arg: "NAME",
		help: "connect through the abstract Unix domain socket NAME (Linux), as curl --abstract-unix-socket", set: func(o *options, v string) error { o.unixSocket = "@" + v; return nil }},
	{long: "interface", cmds: cmdBoth | cmdServe, group: "Connection", arg: "ADDRESS|NAME",
		help: "connect from this local address, or the first of this network interface's (if!NAME) or host's (host!NAME), as curl --interface", set: str(func(o *options) *string { return &o.iface })},
	{long: "bind-address", cmds: cmdBoth | cmdServe, group: "Connection", arg: "ADDRESS", hidden: true,
		help: "wget's --bind-address: --interface", set: str(func(o *options) *string { return &o.iface })},
	{long: "socks5-hostname", cmds: cmdBoth, group: "Connection", arg: "HOST[:PORT]",
		help: "use this SOCKS5 proxy for every URL, which resolves the host names (port 1080 by default; -x socks5h://HOST:PORT)", set: socks("socks5h")},
	{long: "socks5", cmds: cmdBoth, group: "Connection", arg: "HOST[:PORT]", hidden: true,
		help: "curl's --socks5: --socks5-hostname (deref leaves the names to the proxy, never resolving them itself)", set: socks("socks5")},
	{long: "socks4", cmds: cmdBoth, group: "Connection", arg: "HOST[:PORT]", hidden: true, help: "refused", set: refused("deref speaks SOCKS5 only (--socks5-hostname)")},
	{long: "socks4a", cmds: cmdBoth, group: "Connection", arg: "HOST[:PORT]", hidden: true, help: "refused", set: refused("deref speaks SOCKS5 only (--socks5-hostname)")},
	{long: "netrc", short: "n", cmds: cmdGet, group: "Connection",
		help: "read credentials from ~/.netrc (or $NETRC); the default", set: boolean(func(o *options) *bool { return &o.netrc })},
	{long: "netrc", cmds: cmdMirror | cmdCrawl, group: "Connection", // -n is lftp's only-newer, and wget's -nv, -nd ...
		help: "read credentials from ~/.netrc (or $NETRC); the default", set: boolean(func(o *options) *bool { return &o.netrc })},
	{long: "list-only", short: "l", cmds: cmdGet, group: "Output",
		help: "of a listing (an FTP folder, a Gopher menu, a newsgroup ...), print the names only, one a line, as curl --list-only", set: boolean(func(o *options) *bool { return &o.listOnly })},
	{long: "no-netrc", cmds: cmdBoth, group: "Connection",
		help: "do not read a netrc file", set: boolean(func(o *options) *bool { return &o.noNetrc })},
	{long: "netrc-file", cmds: cmdBoth, group: "Connection", arg: "FILE", complete: "file",
		help: "read credentials from FILE", set: str(func(o *options) *string { return &o.netrcFile })},
	{long: "cacert", cmds: cmdBoth | cmdServe, group: "Connection", arg: "FILE", complete: "file",
		help: "verify TLS servers against the certificates in FILE (PEM) instead of the system's", set: str(func(o *options) *string { return &o.caCert })},
	{long: "cert", short: "E", cmds: cmdGet | cmdMirror | cmdServe, group: "Connection", arg: "FILE", complete: "file",
		help: "present the client certificate in FILE (PEM) to TLS servers that ask, with its key from --key or from FILE", set: str(func(o *options) *string { return &o.cert })},
	{long: "cert", cmds: cmdCrawl, group: "Connection", arg: "FILE", complete: "file",
		help: "present the client certificate in FILE (PEM) to TLS servers that ask, with its key from --key or from FILE", set: str(func(o *options) *string { return &o.cert })},
	{long: "known-hosts", cmds: cmdBoth | cmdServe, group: "Connection", arg: "FILE", complete: "file",
		help: "the file of Gemini keys trusted on first use (default under the user's data folder: deref/gemini/known_hosts)", set: str(func(o *options) *string { return &o.knownHosts })},
	{long: "key", cmds: cmdBoth | cmdServe, group: "Connection", arg: "FILE", complete: "file",
		help: "the private key (PEM, not encrypted) of --cert", set: str(func(o *options) *string { return &o.key })},
	{long: "certificate", cmds: cmdBoth | cmdServe, group: "Connection", arg: "FILE", hidden: true,
		help: "wget's spelling of --cert", set: str(func(o *options) *string { return &o.cert })},
	{long: "private-key", cmds: cmdBoth | cmdServe, group: "Connection", arg: "FILE", hidden: true,
		help: "wget's spelling of --key", set: str(func(o *options) *string { return &o.key })},
	{long: "resolve", cmds: cmdBoth | cmdServe, group: "Connection", arg: "HOST:PORT:ADDRESS",
		help: "connect to ADDRESS for HOST:PORT, whatever the DNS says (repeatable), as curl --resolve", set: list(func(o *options) *[]string { return &o.resolve })},
	{long: "ca-certificate", cmds: cmdBoth | cmdServe, group: "Connection", arg: "FILE", hidden: true,
		help: "wget's spelling of --cacert", set: str(func(o *options) *string { return &o.caCert })},
	// wget's long spellings that curl's flags do not take (wget's short
	// ones mean other things to curl).
	{long: "no-check-certificate", cmds: cmdBoth | cmdServe, group: "Connection", hidden: true,
		help: "wget's spelling of -k", set: boolean(func(o *options) *bool { return &o.insecure })},
	{long: "timeout", short: "T", cmds: cmdCrawl, group: "Connection", arg: "SECONDS", hidden: true,
		help: "wget's --timeout: --connect-timeout and --idle-timeout both", set: func(o *options, v string) error {
			f, err := parseSeconds(v)
			o.connectTimeout, o.idleTimeout = f, f
			return err
		}},
	{long: "timeout", cmds: cmdGet | cmdMirror | cmdServe, group: "Connection", arg: "SECONDS", hidden: true,
		help: "wget's --timeout: --connect-timeout and --idle-timeout both", set: func(o *options, v string) error {
			f, err := parseSeconds(v)
			o.connectTimeout, o.idleTimeout = f, f
			return err
		}},
	{long: "tries", short: "t", cmds: cmdCrawl, group: "Crawl", arg: "N", hidden: true,
		help: "wget's --tries: N tries in all, --retry N-1 (0 or inf: a thousand)", set: func(o *options, v string) error {
			n, err := strconv.Atoi(v)
			switch {
			case v == "inf" || err == nil && n == 0:
				n = 1001
			case err != nil || n < 0:
				return fmt.Errorf("%q is not a number of tries", v)
			}
			o.c.opts.Retries = n - 1
			return nil
		}},
	{long: "waitretry", cmds: cmdCrawl, group: "Crawl", arg: "SECONDS", hidden: true,
		help: "wget's --waitretry: the first wait before a URL is tried again (the next ones double)", set: secs(func(o *options) *float64 { return &o.c.waitRetry })},
	{long: "tries", cmds: cmdGet, group: "Connection", arg: "N", hidden: true,
		help: "wget's --tries: N tries in all, --retry N-1", set: func(o *options, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return fmt.Errorf("%q is not a number of tries from 1 (wget's 0, for ever, is not taken)", v)
			}
			o.retry = n - 1
			return nil
		}},
	{long: "continue", cmds: cmdGet, group: "Output", hidden: true,
		help: "wget's --continue: -C -", set: switchValue(func(o *options) *string { return &o.resume }, "-")},
	{long: "password", cmds: cmdBoth, group: "Connection", arg: "PASSWORD", hidden: true,
		help: "wget's --password: the password of --user", set: str(func(o *options) *string { return &o.password })},
	{long: "quiet", short: "q", cmds: cmdCrawl, group: "Output", hidden: true,
		help: "wget's -q: -s (--disable is spelt long here)", set: boolean(func(o *options) *bool { return &o.silent })},
	{long: "quiet", cmds: cmdGet | cmdMirror, group: "Output", hidden: true,
		help: "wget's --quiet: -s", set: boolean(func(o *options) *bool { return &o.silent })},
	{long: "no-verbose", cmds: cmdGet | cmdMirror, group: "Output", hidden: true,
		help: "wget's --no-verbose: -s", set: boolean(func(o *options) *bool { return &o.silent })},
	{long: "no-verbose", cmds: cmdCrawl, group: "Output", hidden: true,
		help: "wget's --no-verbose: -nv", set: boolean(func(o *options) *bool { return &o.c.nv })},
	{long: "output-document", cmds: cmdGet, group: "Output", arg: "FILE", hidden: true,
		help: "wget's --output-document: -o", set: outputFile},
	{long: "directory-prefix", cmds: cmdGet, group: "Output", arg: "DIR", hidden: true,
		help: "wget's --directory-prefix: --output-dir, and -O when no -o is given", set: func(o *options, v string) error { o.outputDir, o.wgetDir = v, true; return nil }},
	{long: "directory-prefix", short: "P", cmds: cmdCrawl, group: "Crawl", arg: "DIR", hidden: true,
		help: "wget's --directory-prefix: --output-dir", set: str(func(o *options) *string { return &o.c.opts.OutputDir })},
	{long: "timestamping", cmds: cmdGet, group: "Output", hidden: true,
		help: "wget's --timestamping: -N", set: boolean(func(o *options) *bool { return &o.onlyNewer })},
	{long: "timestamping", cmds: cmdMirror, group: "Mirror", hidden: true,
		help: "wget's --timestamping: -N", set: boolean(func(o *options) *bool { return &o.m.opts.OnlyNewer })},
	{long: "max-redirect", cmds: cmdBoth, group: "HTTP", arg: "N", hidden: true,
		help: "wget's --max-redirect: --max-redirs", set: integer(func(o *options) *int { return &o.maxRedirs })},
	{long: "read-timeout", cmds: cmdBoth | cmdServe, group: "Connection", arg: "SECONDS", hidden: true,
		help: "wget's --read-timeout: --idle-timeout", set: secs(func(o *options) *float64 { return &o.idleTimeout })},
	{long: "no-proxy", cmds: cmdBoth, group: "Connection", hidden: true,
		help: "wget's --no-proxy: -x -", set: switchValue(func(o *options) *string { return &o.proxy }, "-")},
	{long: "output-file", short: "o", cmds: cmdCrawl, group: "Output", arg: "FILE", hidden: true,
		help: "wget's --output-file: --stderr", set: func(o *options, v string) error { o.stderrFile, o.stderrAppend = v, false; return nil }},
	{long: "append-output", short: "a", cmds: cmdCrawl, group: "Output", arg: "FILE", hidden: true,
		help: "wget's --append-output: --stderr, added to the end of FILE", set: func(o *options, v string) error { o.stderrFile, o.stderrAppend = v, true; return nil }},
	{long: "output-file", cmds: cmdGet, group: "Output", arg: "FILE", hidden: true,
		help: "wget's --output-file: --stderr", set: func(o *options, v string) error { o.stderrFile, o.stderrAppend = v, false; return nil }},
	{long: "append-output", cmds: cmdGet, group: "Output", arg: "FILE", hidden: true,
		help: "wget's --append-output: --stderr, added to the end of FILE", set: func(o *options, v string) error { o.stderrFile, o.stderrAppend = v, true; return nil }},
	{long: "server-response", short: "S", cmds: cmdCrawl, group: "Output", hidden: true,
		help: "wget's -S: what the servers reply (HTTP heads, FTP, NNTP and other replies), indented, with the messages", set: boolean(func(o *options) *bool { return &o.serverResponse })},
	{long: "server-response", cmds: cmdGet, group: "Output", hidden: true,
		help: "wget's --server-response: -D to standard error", set: boolean(func(o *options) *bool { return &o.serverResponse })},
	{long: "no-cache", cmds: cmdBoth, group: "HTTP", hidden: true,
		help: "wget's --no-cache: send Cache-Control: no-cache and Pragma: no-cache", set: func(o *options, v string) error {
			on, err := parseBool(v)
			if on {
				o.headers = append(o.headers, "Cache-Control: no-cache", "Pragma: no-cache")
			}
			return err
		}},
	{long: "progress", cmds: cmdBoth, group: "Output", arg: "TYPE", hidden: true,
		help: "wget's --progress: deref's progress line, whatever TYPE", set: func(_ *options, v string) error {
			if kind, _, _ := strings.Cut(v, ":"); kind != "bar" && kind != "dot" {
				return fmt.Errorf("%q is not bar or dot", v)
			}
			return nil
		}},
	{long: "show-progress", cmds: cmdBoth, group: "Output", hidden: true,
		help: "wget's --show-progress: deref shows its progress line on a terminal", set: habit},
	{long: "spider", cmds: cmdGet, group: "Output", hidden: true,
		help: "wget's --spider: -I, printing nothing; the exit code says whether each URL is there", set: func(o *options, v string) error {
			on, err := parseBool(v)
			o.head, o.spider = on, on
			return err
		}},
	{long: "spider", cmds: cmdCrawl, group: "Crawl", hidden: true,
		help: "wget's --spider: keep nothing (what deref crawl does without --output-dir and --warc-file), and list the broken links at the end, as wget", set: func(o *options, v string) error {
			on, err := parseBool(v)
			if on {
				o.c.spider, o.c.deleteAfter = true, true // nothing kept, -P or not
			}
			return err
		}},
	{long: "method", cmds: cmdGet, group: "HTTP", arg: "METHOD", hidden: true, help: "GET only (wget's spelling of -X)", set: func(_ *options, v string) error {
		if v != "GET" {
			return fmt.Errorf("deref retrieves: it sends GET (and HEAD with -I), not %s", v)
		}
		return nil
	}},
	{long: "body-data", cmds: cmdGet, group: "HTTP", arg: "DATA", hidden: true, help: "refused", set: refused("deref retrieves: it sends no request body")},
	{long: "body-file", cmds: cmdGet, group: "HTTP", arg: "FILE", hidden: true, help: "refused", set: refused("deref retrieves: it sends no request body")},
	{long: "execute", cmds: cmdBoth, group: "General", arg: "COMMAND", hidden: true,
		help: "wget's --execute: robots=off only (--ignore-robots)", set: execute},
	// wget's recursive retrieval is deref crawl (links) or deref mirror
	// (a folder's tree).
	{long: "recursive", cmds: cmdGet, group: "Output", hidden: true, help: "refused", set: refused(recursiveWords)},
	{long: "mirror", cmds: cmdGet, group: "Output", hidden: true, help: "refused", set: refused(recursiveWords)},
	{long: "recursive", short: "r", cmds: cmdCrawl, group: "Crawl", hidden: true, help: "what deref crawl does (beside -p, see there)", set: recursive(habit)},
	{long: "level", short: "l", cmds: cmdCrawl, group: "Crawl", arg: "N", hidden: true,
		help: "wget's --level: --max-depth (inf: no limit)", set: recursive(level(func(o *options) *int { return &o.c.opts.MaxDepth }))},
	{long: "level", short: "l", cmds: cmdMirror, group: "Mirror", arg: "N", hidden: true,
		help: "wget's --level: --max-depth (inf: no limit)", set: level(func(o *options) *int { return &o.m.opts.MaxDepth })},
	{long: "no-parent", cmds: cmdCrawl, group: "Crawl", hidden: true,
		help: "wget's --no-parent: --scope prefix", set: switchValue(func(o *options) *string { return &o.c.scope }, "prefix")},
	{long: "no-parent", cmds: cmdMirror, group: "Mirror", hidden: true,
		help: "what deref mirror does: it never goes above URL", set: habit},
	// wget's two-letter short flags, taken whole: -nv would otherwise
	// read as -n -v.
	{long: "nv", cmds: cmdGet | cmdMirror, group: "Output", hidden: true,
		help: "wget's -nv: -s", set: boolean(func(o *options) *bool { return &o.silent })},
	{long: "nv", cmds: cmdCrawl, group: "Output", hidden: true,
		help: "wget's -nv: a line a file written, as wget writes it, and the summary", set: boolean(func(o *options) *bool { return &o.c.nv })},
	{long: "np", cmds: cmdCrawl, group: "Crawl", hidden: true,
		help: "wget's -np: --scope prefix", set: switchValue(func(o *options) *string { return &o.c.scope }, "prefix")},
	{long: "np", cmds: cmdMirror, group: "Mirror", hidden: true,
		help: "what deref mirror does: it never goes above URL", set: habit},
	{long: "nH", cmds: cmdCrawl, group: "Crawl", hidden: true,
		help: "wget's -nH: --no-host-directories", set: boolean(func(o *options) *bool { return &o.c.opts.NoHostDirs })},
	{long: "nd", cmds: cmdCrawl, group: "Crawl", hidden: true,
		help: "wget's -nd: --no-directories", set: boolean(func(o *options) *bool { return &o.c.opts.NoDirectories })},
	{long: "nc", cmds: cmdGet, group: "Output", hidden: true,
		help: "wget's -nc: --skip-existing", set: boolean(func(o *options) *bool { return &o.skipExisting })},
	{long: "nc", cmds: cmdCrawl, group: "Crawl", hidden: true,
		help: "wget's -nc: --no-clobber", set: boolean(func(o *options) *bool { return &o.c.opts.NoClobber })},
	{long: "no-clobber", cmds: cmdCrawl, group: "Crawl",
		help: "with --output-dir: fetch nothing that has a file there already (pages give their links from their files), as wget -nc -r", set: boolean(func(o *options) *bool { return &o.c.opts.NoClobber })},
	{long: "limit-rate", cmds: cmdCrawl, group: "Crawl", arg: "RATE",
		help: "cap all transfers together at RATE bytes per second (suffixes k, M, G), as wget --limit-rate", set: size(func(o *options) *int64 { return &o.limitRate })},
	{long: "remove-on-error", cmds: cmdGet, group: "Output",
		help: "with -o or -O: when the retrieval fails, remove what it left (NAME.part, which -C - would continue, and with --fail-with-body the error page), as curl --remove-on-error; a file under the final name is never partial", set: boolean(func(o *options) *bool { return &o.removeOnError })},
	{long: "skip-existing", cmds: cmdGet, group: "Output",
		help: "with -o or -O: leave a file that is there already as it is, and fetch nothing, as curl --skip-existing and wget -nc", set: boolean(func(o *options) *bool { return &o.skipExisting })},
	{long: "no-clobber", cmds: cmdGet, group: "Output", hidden: true, help: "refused", set: refused(noClobberWords)},
	// deref crawl's -k is wget's --convert-links: wget -r -k must not
	// turn TLS verification off.
	{long: "insecure", cmds: cmdCrawl, group: "Connection",
		help: "do not verify TLS certificates (insecure)", set: boolean(func(o *options) *bool { return &o.insecure })},
	{long: "insecure", short: "k", cmds: cmdGet | cmdMirror | cmdServe, group: "Connection",
		help: "do not verify TLS certificates (insecure)", set: boolean(func(o *options) *bool { return &o.insecure })},
	{long: "tlsv1.2", cmds: cmdBoth | cmdServe, group: "Connection",
		help: "TLS 1.2 at least (the default)", set: tlsMin(tls.VersionTLS12)},
	{long: "tlsv1.3", cmds: cmdBoth | cmdServe, group: "Connection",
		help: "TLS 1.3 at least", set: tlsMin(tls.VersionTLS13)},
	{long: "tlsv1.1", cmds: cmdBoth | cmdServe, group: "Connection", hidden: true,
		help: "TLS 1.1 at least, for old servers (insecure)", set: tlsMin(tls.VersionTLS11)},
	{long: "tlsv1.0", cmds: cmdBoth | cmdServe, group: "Connection", hidden: true,
		help: "TLS 1.0 at least, for old servers (insecure)", set: tlsMin(tls.VersionTLS10)},
	{long: "tlsv1", cmds: cmdBoth | cmdServe, group: "Connection", hidden: true,
		help: "curl's --tlsv1: TLS 1.0 at least (insecure)", set: tlsMin(tls.VersionTLS10)},
	{long: "tls-max", cmds: cmdBoth | cmdServe, group: "Connection", arg: "VERSION",
		help: "TLS VERSION (1.0, 1.1, 1.2, 1.3 or default) at most", set: func(o *options, v string) error {
			if v == "default" {
				o.tlsMax = 0
				return nil
			}
			n, ok := tlsVersions[v]
			if !ok {
				return fmt.Errorf("%q is not 1.0, 1.1, 1.2, 1.3 or default", v)
			}
			o.tlsMax = n
			return nil
		}},
	{long: "allow-port", cmds: cmdBoth | cmdServe, group: "Connection", arg: "PORTS",
		help: "comma-separated PORTS that may be used although another protocol owns them", set: str(func(o *options) *string { return &o.allowPorts })},

	// HTTP
	{long: "header", short: "H", cmds: cmdGet | cmdMirror, group: "HTTP", arg: "'NAME: VALUE'",
		help: "send this header field (repeatable); it replaces deref's own field of that name, and 'NAME:' removes it", set: list(func(o *options) *[]string { return &o.headers })},
	{long: "header", cmds: cmdCrawl, group: "HTTP", arg: "'NAME: VALUE'",
		help: "send this header field (repeatable); it replaces deref's own field of that name, and 'NAME:' removes it; -H is wget's --span-hosts here", set: list(func(o *options) *[]string { return &o.headers })},
	{long: "user-agent", short: "A", cmds: cmdGet | cmdMirror | cmdServe, group: "HTTP", arg: "NAME",
		help: "send User-Agent: NAME (default deref/VERSION)", set: str(func(o *options) *string { return &o.userAgent })},
	{long: "user-agent", short: "U", cmds: cmdCrawl, group: "HTTP", arg: "NAME",
		help: "send User-Agent: NAME (default deref/VERSION), as wget -U; -A is wget's --accept here", set: str(func(o *options) *string { return &o.userAgent })},
	{long: "cookie", short: "b", cmds: cmdGet | cmdMirror, group: "HTTP", arg: "NAME=VALUE|FILE",
		help: cookieHelp, set: cookieFlag},
	{long: "cookie", cmds: cmdCrawl, group: "HTTP", arg: "NAME=VALUE|FILE", // -b is wget's --background there
		help: cookieHelp, set: cookieFlag},
	{long: "cookie-jar", short: "c", cmds: cmdGet, group: "HTTP", arg: "FILE",
		help: cookieJarHelp, set: str(func(o *options) *string { return &o.cookieJar })},
	{long: "cookie-jar", cmds: cmdMirror | cmdCrawl, group: "HTTP", arg: "FILE", // -c is lftp's and wget's --continue there
		help: cookieJarHelp, set: str(func(o *options) *string { return &o.cookieJar })},
	// wget's -b and -c in deref crawl.
	{long: "background", short: "b", cmds: cmdCrawl, group: "Crawl", hidden: true, help: "refused",
		set: refused("deref crawl runs in the foreground: start it with nohup and & (its -o FILE keeps what it says), or from a service manager")},
	{long: "continue", short: "c", cmds: cmdCrawl, group: "Crawl", hidden: true,
		help: "wget's -c: what deref crawl does: a file is written as NAME.part and renamed whole, so that none is left partial to continue; with a folder of an earlier run, -N and -nc say what is fetched again", set: habit},
	{long: "junk-session-cookies", short: "j", cmds: cmdBoth, group: "HTTP",
		help: "leave out the session cookies (those without an expiry) of the files -b reads", set: boolean(func(o *options) *bool { return &o.junkSessions })},
	{long: "load-cookies", cmds: cmdBoth, group: "HTTP", arg: "FILE", hidden: true,
		help: "wget's --load-cookies: -b FILE", set: list(func(o *options) *[]string { return &o.cookieFiles })},
	{long: "save-cookies", cmds: cmdBoth, group: "HTTP", arg: "FILE", hidden: true,
		help: "wget's --save-cookies: -c FILE, but without session cookies unless --keep-session-cookies", set: func(o *options, v string) error {
			o.cookieJar, o.wgetJar = v, true
			return nil
		}},
	{long: "no-cookies", cmds: cmdBoth, group: "HTTP", hidden: true,
		help: "wget's --no-cookies: keep no cookies (deref crawl keeps those servers set for the run, as wget does; deref URL and deref mirror only with -b or -c)", set: boolean(func(o *options) *bool { return &o.noCookies })},
	{long: "keep-session-cookies", cmds: cmdBoth, group: "HTTP", hidden: true,
		help: "wget's --keep-session-cookies: --save-cookies writes session cookies too", set: boolean(func(o *options) *bool { return &o.keepSessions })},
	{long: "compression", cmds: cmdBoth, group: "HTTP", arg: "TYPE", hidden: true,
		help: "wget's --compression: gzip or auto is --compressed, none is not", set: func(o *options, v string) error {
			switch v {
			case "gzip", "auto":
				o.compressed = true
			case "none":
				o.compressed = false
			default:
				return fmt.Errorf("%q is not auto, gzip or none", v)
			}
			return nil
		}},
	{long: "compressed", cmds: cmdBoth, group: "HTTP",
		help: "ask HTTP servers for a gzip transfer and decode it: the same bytes, fewer on the wire", set: boolean(func(o *options) *bool { return &o.compressed })},
	{long: "referer", short: "e", cmds: cmdGet | cmdCrawl, group: "HTTP", arg: "URL", complete: "url",
		help: "send Referer: URL", set: func(o *options, v string) error {
			if name, _, ok := strings.Cut(v, "="); ok && !strings.Contains(name, ":") {
				// wget's -e robots=off: a referer is a URL, with its scheme.
				return execute(o, v)
			}
			o.referer = v
			return nil
		}},
	{long: "referer", cmds: cmdMirror, group: "HTTP", arg: "URL", complete: "url", // -e is lftp's --delete there
		help: "send Referer: URL", set: func(o *options, v string) error {
			if name, _, ok := strings.Cut(v, "="); ok && !strings.Contains(name, ":") {
				// wget's -e robots=off: a referer is a URL, with its scheme.
				return execute(o, v)
			}
			o.referer = v
			return nil
		}},
	{long: "http1.1", cmds: cmdBoth, group: "HTTP", hidden: true, help: "what deref speaks", set: habit},
	{long: "http2", cmds: cmdBoth, group: "HTTP", hidden: true,
		help: "taken: curl falls back to HTTP/1.1 where HTTP/2 is not agreed on, and deref always speaks HTTP/1.1", set: habit},
	{long: "http3", cmds: cmdBoth, group: "HTTP", hidden: true,
		help: "taken: curl falls back to HTTP/1.1 where HTTP/3 fails, and deref always speaks HTTP/1.1", set: habit},
	{long: "http1.0", short: "0", cmds: cmdGet, group: "HTTP", hidden: true, help: "refused", set: refused("deref speaks HTTP/1.1 only")},
	{long: "http1.0", cmds: cmdMirror | cmdCrawl, group: "HTTP", hidden: true, help: "refused", set: refused("deref speaks HTTP/1.1 only")},
	{long: "http2-prior-knowledge", cmds: cmdBoth, group: "HTTP", hidden: true, help: "refused", set: refused("deref speaks HTTP/1.1 only")},
	{long: "http3-only", cmds: cmdBoth, group: "HTTP", hidden: true, help: "refused", set: refused("deref speaks HTTP/1.1 only")},
	{long: "etag-compare", cmds: cmdGet, group: "HTTP", arg: "FILE", complete: "file",
		help: "send If-None-Match with the entity tag in FILE (none when FILE is missing or empty): an object that still has it is not fetched, and deref exits 0, as curl --etag-compare", set: str(func(o *options) *string { return &o.etagCompare })},
	{long: "etag-save", cmds: cmdGet, group: "HTTP", arg: "FILE", complete: "file",
		help: "write the object's entity tag (HTTP ETag) to FILE once it is fetched, an empty FILE when the server gives none; left as it is when --etag-compare finds the object unchanged", set: str(func(o *options) *string { return &o.etagSave })},
	{long: "max-redirs", cmds: cmdBoth, group: "HTTP", arg: "N",
		help: "follow at most N redirects (default 10; 0 follows none)", set: integer(func(o *options) *int { return &o.maxRedirs })},
	{long: "allow-downgrade", cmds: cmdBoth, group: "HTTP",
		help: "let redirects lead from https to http (ftps to ftp)", set: boolean(func(o *options) *bool { return &o.allowDowngrade })},
	{long: "redirect-schemes", cmds: cmdBoth, group: "HTTP", arg: "SCHEMES",
		help: "comma-separated SCHEMES redirects may lead to besides http, https and ftp (never file)", set: str(func(o *options) *string { return &o.redirectSchemes })},
	{long: "proto", cmds: cmdBoth, group: "Connection", arg: "SCHEMES",
		help: "retrieve only these schemes, by URL, redirect or hand-over; curl's syntax: '=https' only https, '-ftp' all but ftp, 'all'",
		set:  str(func(o *options) *string { return &o.proto })},
	{long: "proto-redir", cmds: cmdBoth, group: "HTTP", arg: "SCHEMES",
		help: "the schemes redirects may lead to, in --proto's syntax, from http, https, ftp and ftps (never file)",
		set:  str(func(o *options) *string { return &o.protoRedir })},

	// FTP
	{long: "ftp-method", cmds: cmdBoth | cmdServe, group: "FTP", arg: "METHOD", complete: "rfc single none auto",
		help: "how an FTP url-path becomes commands: rfc (one CWD per segment, the default), single (one CWD), none (the whole path to RETR), auto (the whole path, then the CWDs)",
		set:  str(func(o *options) *string { return &o.ftpMethod })},
	{long: "ftp-ssl", cmds: cmdBoth | cmdServe, group: "FTP",
		help: "require AUTH TLS on ftp:// URLs (certificates verified; ftps:// is implicit TLS)", set: boolean(func(o *options) *bool { return &o.ftpSSL })},
	{long: "ftp-sync", cmds: cmdBoth, group: "FTP",
		help: "send each FTP command only after the last one's reply (by default, on kept connections, SIZE and RETR go with their EPSV, a file's data is read before its 150 and the next file asked before its 226: one round trip a file)", set: boolean(func(o *options) *bool { return &o.ftpSync })},
	{long: "ftp-timezone", cmds: cmdBoth | cmdServe, group: "FTP", arg: "ZONE",
		help: "the ZONE of FTP servers' ls -l times (IANA name or offset such as +05:00; default: found by comparing one file's LIST and MDTM times)",
		set:  str(func(o *options) *string { return &o.ftpTimeZone })},

	// News
	{long: "news-server", cmds: cmdBoth | cmdServe, group: "News", arg: "HOST[:PORT]",
		help: "news server for news: URLs (default $NNTPSERVER, else news)", set: str(func(o *options) *string { return &o.newsServer })},
	{long: "articles", cmds: cmdGet, group: "News", arg: "N",
		help: "list the newest N articles of a newsgroup (default 100)", set: integer(func(o *options) *int { return &o.newsArticles })},
	{long: "descriptions", cmds: cmdGet, group: "News",
		help: "add each group's description to news group lists (LIST NEWSGROUPS), as the sixth field of a line, or --json's \"description\"", set: boolean(func(o *options) *bool { return &o.newsDescriptions })},
	{long: "news-starttls", cmds: cmdBoth | cmdServe, group: "News",
		help: "require STARTTLS on nntp:// and news: connections (nntps:// and snews: are TLS from the start)", set: boolean(func(o *options) *bool { return &o.newsTLS })},

	// Telnet and mail
	{long: "login", cmds: cmdGet, group: "Telnet and mail",
		help: "telnet: type the URL's user and password at the server's login prompts", set: boolean(func(o *options) *bool { return &o.login })},
	{long: "tn3270", cmds: cmdGet, group: "Telnet and mail", arg: "PROGRAM", complete: "file",
		help: "PROGRAM for tn3270: sessions (default: c3270, x3270 or tn3270 on PATH)", set: str(func(o *options) *string { return &o.tn3270 })},
	{long: "rlogin", cmds: cmdGet, group: "Telnet and mail", arg: "PROGRAM", complete: "file",
		help: "PROGRAM for rlogin: sessions (default: rlogin on PATH)", set: str(func(o *options) *string { return &o.rlogin })},
	{long: "smtp", cmds: cmdGet, group: "Telnet and mail", arg: "HOST[:PORT]",
		help: "mailto: send standard input through this SMTP server", set: str(func(o *options) *string { return &o.smtp })},
	{long: "subject", cmds: cmdGet, group: "Telnet and mail", arg: "SUBJECT",
		help: "mailto: the message's subject", set: str(func(o *options) *string { return &o.subject })},
	{long: "mail-dir", cmds: cmdGet, group: "Telnet and mail", arg: "FOLDER", complete: "dir",
		help: "mid: and cid: look in this mbox file, Maildir, or folder of mailboxes (such as ~/Mail)", set: str(func(o *options) *string { return &o.mailDir })},
	{long: "urn-resolver", cmds: cmdGet, group: "Telnet and mail", arg: "URL", complete: "url",
		help: "urn: resolve names through this RFC 2169 resolver", set: str(func(o *options) *string { return &o.urnResolver })},

	// Mirror
	{long: "parallel", cmds: cmdMirror, group: "Mirror", arg: "N",
		help: "N transfers at once (default 4)", set: integer(func(o *options) *int { return &o.parallel })},
	{long: "per-host", cmds: cmdMirror, group: "Mirror", arg: "N",
		help: "at most N connections to one host (default: --parallel)", set: integer(func(o *options) *int { return &o.m.opts.PerHost })},
	{long: "only-newer", short: "N", cmds: cmdMirror, group: "Mirror",
		help: "skip files whose local copy is unchanged (size and time, or If-Modified-Since): the default", set: boolean(func(o *options) *bool { return &o.m.opts.OnlyNewer })},
	{long: "ignore-times", cmds: cmdMirror, group: "Mirror",
		help: "fetch every file again, unchanged ones too (rsync's --ignore-times); a file fetched again with the listing's same size and time counts as unchanged", set: boolean(func(o *options) *bool { return &o.m.ignoreTimes })},
	{long: "segments", cmds: cmdMirror, group: "Mirror", arg: "N",
		help: "fetch each file of at least --segment-min over N connections at once, each its own byte range", set: integer(func(o *options) *int { return &o.segments })},
	{long: "segment-min", cmds: cmdMirror, group: "Mirror", arg: "SIZE",
		help: "with --segments: only files of at least SIZE (default 2M; suffixes k, M, G)", set: size(func(o *options) *int64 { return &o.segmentMin })},
	{long: "checksum", cmds: cmdMirror, group: "Mirror",
		help: "compare the server's digests (FTP HASH, XSHA256...) with the local files instead of size and time", set: boolean(func(o *options) *bool { return &o.m.opts.Checksum })},
	{long: "checksum-file", cmds: cmdMirror, group: "Mirror", arg: "NAME",
		help: "check each file against the sums file NAME (SHA256SUMS, MD5SUMS...) of its folder or one above", set: str(func(o *options) *string { return &o.m.opts.ChecksumFile })},
	{long: "delete", cmds: cmdMirror, group: "Mirror",
		help: "remove local files the server no longer has (never outside DIR)", set: boolean(func(o *options) *bool { return &o.m.opts.Delete })},
	{long: "include", cmds: cmdMirror, group: "Mirror", arg: "GLOB",
		help: "mirror only files matching GLOB (repeatable; with a / it matches the path)", set: list(func(o *options) *[]string { return &o.m.opts.Include })},
	{long: "exclude", cmds: cmdMirror, group: "Mirror", arg: "GLOB",
		help: "leave out files and folders matching GLOB (repeatable)", set: list(func(o *options) *[]string { return &o.m.opts.Exclude })},
	{long: "include-regex", short: "i", cmds: cmdMirror, group: "Mirror", arg: "RX",
		help: "lftp's mirror -i: include files whose path below URL matches the regular expression RX (Go's RE2 syntax); with -x, -I and -X, in order, the last that matches decides, and when the first includes, what none matches is left out", set: rule(true, true)},
	{long: "exclude-regex", short: "x", cmds: cmdMirror, group: "Mirror", arg: "RX",
		help: "lftp's mirror -x: exclude files and folders whose path below URL (a folder's ending in /) matches RX (see -i)", set: rule(false, true)},
	{long: "include-glob", short: "I", cmds: cmdMirror, group: "Mirror", arg: "GLOB",
		help: "lftp's mirror -I: include files whose name matches GLOB (the path, with a /; see -i)", set: rule(true, false)},
	{long: "exclude-glob", short: "X", cmds: cmdMirror, group: "Mirror", arg: "GLOB",
		help: "lftp's mirror -X: exclude files and folders whose name matches GLOB (see -i)", set: rule(false, false)},
	// lftp's mirror, as it spells its flags.
	{long: "continue", short: "c", cmds: cmdMirror, group: "Mirror", hidden: true,
		help: "what deref mirror does: a NAME.part an interrupted run left is continued", set: habit},
	{long: "delete", short: "e", cmds: cmdMirror, group: "Mirror", hidden: true,
		help: "lftp's -e: --delete", set: boolean(func(o *options) *bool { return &o.m.opts.Delete })},
	{long: "delete-first", cmds: cmdMirror, group: "Mirror", hidden: true,
		help: "lftp's --delete-first: --delete (deref removes them once the transfers are done)", set: boolean(func(o *options) *bool { return &o.m.opts.Delete })},
	{long: "only-newer", short: "n", cmds: cmdMirror, group: "Mirror", hidden: true,
		help: "lftp's -n: --only-newer", set: boolean(func(o *options) *bool { return &o.m.opts.OnlyNewer })},
	{long: "parallel", short: "P", cmds: cmdMirror, group: "Mirror", arg: "N", hidden: true,
		help: "lftp's -P N: --parallel N", set: integer(func(o *options) *int { return &o.parallel })},
	{long: "no-recursion", short: "r", cmds: cmdMirror, group: "Mirror", hidden: true,
		help: "lftp's -r: --max-depth 1", set: func(o *options, v string) error {
			on, err := parseBool(v)
			if on {
				o.m.opts.MaxDepth = 1
			}
			return err
		}},
	{long: "dereference", short: "L", cmds: cmdMirror, group: "Mirror", hidden: true,
		help: "lftp's -L: --follow-symlinks", set: boolean(func(o *options) *bool { return &o.m.opts.FollowSymlinks })},
	{long: "use-pget-n", cmds: cmdMirror, group: "Mirror", arg: "N", hidden: true,
		help: "lftp's --use-pget-n: --segments N", set: integer(func(o *options) *int { return &o.segments })},
	{long: "no-symlinks", cmds: cmdMirror, group: "Mirror", hidden: true,
		help: "what deref mirror does without --follow-symlinks: remote symbolic links are skipped and reported", set: habit},
	{long: "no-perms", cmds: cmdMirror, group: "Mirror", hidden: true,
		help: "what deref mirror does: files get this system's default permissions", set: habit},
	{long: "no-umask", cmds: cmdMirror, group: "Mirror", hidden: true,
		help: "what deref mirror does: files get this system's default permissions", set: habit},
	{long: "only-missing", cmds: cmdMirror, group: "Mirror",
		help: "fetch only the files not there yet, leaving those there as they are, as lftp's mirror --only-missing", set: boolean(func(o *options) *bool { return &o.m.opts.OnlyMissing })},
	{long: "newer-than", cmds: cmdMirror, group: "Mirror", arg: "WHEN",
		help: "mirror only files the listing dates after WHEN: a date (2006-01-02, RFC 3339), now-N followed by minutes, hours, days or weeks, or a file, whose time is taken; as lftp's mirror --newer-than", set: mirrorTime(func(o *options) *time.Time { return &o.m.opts.NewerThan })},
	{long: "older-than", cmds: cmdMirror, group: "Mirror", arg: "WHEN",
		help: "mirror only files the listing dates before WHEN (see --newer-than), as lftp's mirror --older-than", set: mirrorTime(func(o *options) *time.Time { return &o.m.opts.OlderThan })},
	{long: "size-range", cmds: cmdMirror, group: "Mirror", arg: "MIN-MAX",
		help: "mirror only files of MIN to MAX bytes (MIN- or -MAX leave a side open; suffixes k, M, G), as lftp's mirror --size-range", set: func(o *options, v string) error {
			lo, hi, ok := strings.Cut(v, "-")
			if !ok || lo == "" && hi == "" {
				return fmt.Errorf("%q is not MIN-MAX", v)
			}
			for _, side := range []struct {
				s string
				n *int64
			}{{lo, &o.m.opts.MinSize}, {hi, &o.m.opts.MaxSize}} {
				if side.s == "" {
					continue
				}
				n, err := parseSize(side.s)
				if err != nil {
					return fmt.Errorf("%q is not MIN-MAX: %w", v, err)
				}
				*side.n = n
			}
			if o.m.opts.MaxSize > 0 && o.m.opts.MinSize > o.m.opts.MaxSize {
				return fmt.Errorf("%q: MIN is above MAX", v)
			}
			return nil
		}},
	{long: "reverse", short: "R", cmds: cmdMirror, group: "Mirror", hidden: true, help: "refused", set: refused("deref retrieves: it uploads nothing (lftp's reverse mirror)")},
	{long: "Remove-source-files", cmds: cmdMirror, group: "Mirror", hidden: true, help: "refused", set: refused("deref never changes the server's files")},
	{long: "Move", cmds: cmdMirror, group: "Mirror", hidden: true, help: "refused", set: refused("deref never changes the server's files")},
	{long: "max-depth", cmds: cmdMirror, group: "Mirror", arg: "N",
		help: "go at most N levels deep (1: only the start folder's files; 0: no limit)", set: integer(func(o *options) *int { return &o.m.opts.MaxDepth })},
	{long: "dry-run", cmds: cmdMirror, group: "Mirror",
		help: "print what would change, change nothing", set: boolean(func(o *options) *bool { return &o.m.opts.DryRun })},
	{long: "limit-rate", cmds: cmdMirror, group: "Mirror", arg: "RATE",
		help: "cap all transfers together at RATE bytes per second (suffixes k, M, G)", set: size(func(o *options) *int64 { return &o.limitRate })},
	{long: "retry", cmds: cmdMirror, group: "Mirror", arg: "N",
		help: "try a temporary failure N more times, with exponential backoff (default 3)", set: integer(func(o *options) *int { return &o.m.opts.Retries })},
	{long: "retries", cmds: cmdMirror, group: "Mirror", arg: "N", hidden: true,
		help: "the old name of --retry", set: integer(func(o *options) *int { return &o.m.opts.Retries })},
	{long: "follow-symlinks", cmds: cmdMirror, group: "Mirror",
		help: "fetch the target of a remote symbolic link inside the tree as a regular file", set: boolean(func(o *options) *bool { return &o.m.opts.FollowSymlinks })},
	{long: "fold-case", cmds: cmdMirror, group: "Mirror",
		help: "treat names differing only in case as one (default: when DIR's file system does)", set: boolean(func(o *options) *bool { return &o.m.opts.FoldCase })},
	{long: "shard", cmds: cmdMirror, group: "Mirror", arg: "I/N",
		help: "mirror only shard I/N of the files (0 <= I < N), by path hash", set: str(func(o *options) *string { return &o.m.shard })},
	{long: "plan", cmds: cmdMirror, group: "Mirror",
		help: "print the transfers as URL<TAB>TARGET lines, transfer nothing (run each with deref --create-dirs -o TARGET URL)", set: boolean(func(o *options) *bool { return &o.m.plan })},
	{long: "json", cmds: cmdMirror, group: "Mirror",
		help: "print the report as JSON on standard output", set: boolean(func(o *options) *bool { return &o.m.asJSON })},

	// Crawl
	{long: "parallel", cmds: cmdCrawl, group: "Crawl", arg: "N",
		help: "N retrievals at once, across hosts (default 4)", set: integer(func(o *options) *int { return &o.c.opts.Parallel })},
	{long: "per-host", cmds: cmdCrawl, group: "Crawl", arg: "N",
		help: "at most N connections to one host at once (default 1)", set: integer(func(o *options) *int { return &o.c.opts.PerHost })},
	{long: "wait", short: "w", cmds: cmdCrawl, group: "Crawl", arg: "DURATION",
		help: "pause this long after each request before the host's next one (default 0)", set: secs(func(o *options) *float64 { return &o.c.wait })},
	{long: "random-wait", cmds: cmdCrawl, group: "Crawl",
		help: "with --wait: pause from half of it to one and a half times it, at random, as wget --random-wait", set: boolean(func(o *options) *bool { return &o.c.opts.RandomWait })},
	{long: "max-depth", cmds: cmdCrawl, group: "Crawl", arg: "N",
		help: "follow links at most N steps from a start URL (0: no limit)", set: recursive(integer(func(o *options) *int { return &o.c.opts.MaxDepth }))},
	{long: "page-requisites", short: "p", cmds: cmdCrawl, group: "Crawl",
		help: "also fetch what each page is shown with (images, style sheets and what they load, scripts, frames, media), on the start URLs' hosts even outside --scope prefix and past --max-depth, as wget -p; as with wget, -p without -r, -l or --max-depth fetches the start pages and what they are shown with only", set: boolean(func(o *options) *bool { return &o.c.opts.PageRequisites })},
	{long: "max-items", cmds: cmdCrawl, group: "Crawl", arg: "N",
		help: "stop after N URLs (0: no limit)", set: integer(func(o *options) *int { return &o.c.opts.MaxItems })},
	{long: "scope", cmds: cmdCrawl, group: "Crawl", arg: "SCOPE", complete: "host prefix",
		help: "host: the start URLs' hosts and ports (the default); prefix: below the start URLs", set: str(func(o *options) *string { return &o.c.scope })},
	{long: "span-hosts", short: "H", cmds: cmdCrawl, group: "Crawl",
		help: "follow links to other hosts and schemes (those of --domains, when given)", set: boolean(func(o *options) *bool { return &o.c.opts.SpanHosts })},
	{long: "domains", short: "D", cmds: cmdCrawl, group: "Crawl", arg: "LIST",
		help: "with --span-hosts: only hosts of these comma-separated domains", set: str(func(o *options) *string { return &o.c.domains })},
	{long: "exclude-domains", cmds: cmdCrawl, group: "Crawl", arg: "LIST",
		help: "never follow links to hosts of these comma-separated domains, as wget --exclude-domains", set: commaList(func(o *options) *[]string { return &o.c.opts.ExcludeDomains })},
	{long: "include-directories", short: "I", cmds: cmdCrawl, group: "Crawl", arg: "LIST",
		help: "follow only links whose path is in one of these comma-separated folders (or below it), or matches one of these patterns, as wget -I", set: commaList(func(o *options) *[]string { return &o.c.opts.IncludeDirs })},
	{long: "exclude-directories", short: "X", cmds: cmdCrawl, group: "Crawl", arg: "LIST",
		help: "never follow links whose path is in one of these folders (or below it), or matches one of these patterns, as wget -X", set: commaList(func(o *options) *[]string { return &o.c.opts.ExcludeDirs })},
	{long: "accept-regex", cmds: cmdCrawl, group: "Crawl", arg: "REGEX",
		help: "follow only links whose URL matches REGEX (Go's RE2 syntax), as wget --accept-regex", set: regex(func(o *options) **regexp.Regexp { return &o.c.opts.AcceptRegex })},
	{long: "reject-regex", cmds: cmdCrawl, group: "Crawl", arg: "REGEX",
		help: "never follow links whose URL matches REGEX, as wget --reject-regex", set: regex(func(o *options) **regexp.Regexp { return &o.c.opts.RejectRegex })},
	{long: "regex-type", cmds: cmdCrawl, group: "Crawl", arg: "TYPE", hidden: true,
		help: "wget's --regex-type: posix or pcre, both read as RE2", set: func(_ *options, v string) error {
			if v != "posix" && v != "pcre" {
				return fmt.Errorf("%q is not posix or pcre", v)
			}
			return nil
		}},
	{long: "ignore-case", cmds: cmdCrawl, group: "Crawl",
		help: "match -A, -R, -I and -X without regard to case, as wget --ignore-case", set: boolean(func(o *options) *bool { return &o.c.opts.IgnoreCase })},
	{long: "input-file", short: "i", cmds: cmdCrawl, group: "Crawl", arg: "FILE", complete: "file",
		help: "read start URLs from FILE too, one per line (- for standard input)", set: str(func(o *options) *string { return &o.inputFile })},
	{long: "output-dir", cmds: cmdCrawl, group: "Crawl", arg: "DIR", complete: "dir",
		help: "also write what is fetched into DIR as a browsable tree, DIR/HOST/PATH (a folder's page as its index.html, a Gopher menu or a newsgroup as its index; FTP listings not written, as wget's)", set: str(func(o *options) *string { return &o.c.opts.OutputDir })},
	{long: "no-remove-listing", cmds: cmdCrawl, group: "Crawl",
		help: "with --output-dir: keep each FTP folder's listing as .listing, as wget --no-remove-listing", set: boolean(func(o *options) *bool { return &o.c.opts.FTPListings })},
	{long: "convert-links", short: "k", cmds: cmdCrawl, group: "Crawl",
		help: "with --output-dir: once the crawl is over, make the links of the pages and style sheets written lead to the files written (and the others, absolute, to the server), as wget -k; not with --state", set: boolean(func(o *options) *bool { return &o.c.opts.ConvertLinks })},
	{long: "backup-converted", short: "K", cmds: cmdCrawl, group: "Crawl",
		help: "with -k: keep each page as it came as NAME.orig, by which -N and -nc judge it next time, as wget -K", set: boolean(func(o *options) *bool { return &o.c.opts.BackupConverted })},
	{long: "no-host-directories", cmds: cmdCrawl, group: "Crawl",
		help: "with --output-dir: leave the HOST folder out (DIR/PATH), as wget -nH", set: boolean(func(o *options) *bool { return &o.c.opts.NoHostDirs })},
	{long: "adjust-extension", short: "E", cmds: cmdCrawl, group: "Crawl",
		help: "with --output-dir: name HTML pages NAME.html and style sheets NAME.css where their names end otherwise, as wget -E", set: boolean(func(o *options) *bool { return &o.c.opts.AdjustExtension })},
	{long: "timestamping", short: "N", cmds: cmdCrawl, group: "Crawl",
		help: "with --output-dir: fetch what has a file there already only when the server's copy is newer or of another size, as wget -N (with -k, pages and style sheets are fetched again unless -K kept their originals); files get the server's modification time", set: boolean(func(o *options) *bool { return &o.c.opts.OnlyNewer })},
	{long: "mirror", short: "m", cmds: cmdCrawl, group: "Crawl",
		help: "wget's --mirror: -r -N -l inf, into the current folder unless --output-dir (-P) says another", set: mirrorLine},
	{long: "no-directories", cmds: cmdCrawl, group: "Crawl",
		help: "with --output-dir: write every file at the top of DIR, a name taken already by another file of the crawl given .1, .2, ... after it, as wget -nd", set: boolean(func(o *options) *bool { return &o.c.opts.NoDirectories })},
	{long: "restrict-file-names", cmds: cmdCrawl, group: "Crawl", arg: "MODES",
		help: "with --output-dir: how URLs become file names, as wget --restrict-file-names: unix (\"/\" and control characters written %XX; HOST:PORT, NAME?QUERY) or windows (\\ | : ? \" * < > too; HOST+PORT, NAME@QUERY), by default unix (windows on Windows); nocontrol, ascii (bytes above 0x7F written %XX), lowercase, uppercase; comma-separated",
		set: func(o *options, v string) error {
			fn, err := crawl.ParseFileNames(v)
			o.c.opts.FileNames = fn
			return err
		}},
	// wget's other crawl flags, as wget spells them.
	{long: "html-extension", cmds: cmdCrawl, group: "Crawl", hidden: true,
		help: "wget's old spelling of -E", set: boolean(func(o *options) *bool { return &o.c.opts.AdjustExtension })},
	{long: "http-user", cmds: cmdBoth, group: "Connection", arg: "USER", hidden: true,
		help: "wget's --http-user: -u (for every scheme)", set: str(func(o *options) *string { return &o.user })},
	{long: "http-password", cmds: cmdBoth, group: "Connection", arg: "PASSWORD", hidden: true,
		help: "wget's --http-password: --password (for every scheme)", set: str(func(o *options) *string { return &o.password })},
	{long: "ftp-user", cmds: cmdBoth, group: "Connection", arg: "USER", hidden: true,
		help: "wget's --ftp-user: -u (for every scheme)", set: str(func(o *options) *string { return &o.user })},
	{long: "ftp-password", cmds: cmdBoth, group: "Connection", arg: "PASSWORD", hidden: true,
		help: "wget's --ftp-password: --password (for every scheme)", set: str(func(o *options) *string { return &o.password })},
	{long: "quota", short: "Q", cmds: cmdCrawl, group: "Crawl", arg: "SIZE",
		help: "start no more retrievals once more than SIZE bytes are fetched (suffixes k, M, G), as wget -Q; the one under way ends whole, and with --state the rest wait for the next run", set: size(func(o *options) *int64 { return &o.c.opts.Quota })},
	{long: "https-only", cmds: cmdCrawl, group: "Crawl",
		help: "follow only links to https URLs, as wget --https-only", set: boolean(func(o *options) *bool { return &o.c.opts.HTTPSOnly })},
	{long: "relative", short: "L", cmds: cmdCrawl, group: "Crawl",
		help: "follow only the links of pages that name no scheme (/x, x, ../x), as wget -L", set: boolean(func(o *options) *bool { return &o.c.opts.RelativeOnly })},
	{long: "trust-server-names", cmds: cmdCrawl, group: "Crawl",
		help: "with --output-dir: name a file after the URL the last redirect led to, not the one asked for, as wget --trust-server-names", set: boolean(func(o *options) *bool { return &o.c.opts.TrustServerNames })},
	{long: "default-page", cmds: cmdCrawl, group: "Crawl", arg: "NAME",
		help: "with --output-dir: the name of an HTTP folder's page (default index.html), as wget --default-page", set: func(o *options, v string) error {
			if v == "" || v == "." || v == ".." || strings.ContainsAny(v, "/\\\x00") {
				return fmt.Errorf("%q is not one file name", v)
			}
			o.c.opts.DefaultPage = v
			return nil
		}},
	{long: "protocol-directories", cmds: cmdCrawl, group: "Crawl",
		help: "with --output-dir: put each file below a folder named after its scheme, DIR/SCHEME/HOST/PATH, as wget --protocol-directories", set: boolean(func(o *options) *bool { return &o.c.opts.ProtocolDirs })},
	{long: "delete-after", cmds: cmdCrawl, group: "Crawl", hidden: true,
		help: "wget's --delete-after: keep no files (what deref crawl does without --output-dir)", set: boolean(func(o *options) *bool { return &o.c.deleteAfter })},
	{long: "follow-ftp", cmds: cmdCrawl, group: "Crawl", hidden: true,
		help: "what deref crawl does: it follows FTP links in its scope (with -H, on other hosts too)", set: habit},
	{long: "content-disposition", cmds: cmdCrawl, group: "Crawl", hidden: true, help: "refused",
		set: refused("deref crawl names files after their URLs, never after what the server says (Content-Disposition); --trust-server-names takes the URL a redirect led to")},
	{long: "debug", short: "d", cmds: cmdCrawl, group: "Output", hidden: true,
		help: "wget's --debug: -v", set: boolean(func(o *options) *bool { return &o.verbose })},
	{long: "debug", cmds: cmdGet, group: "Output", hidden: true,
		help: "wget's --debug: -v (-d is curl's --data here)", set: boolean(func(o *options) *bool { return &o.verbose })},
	{long: "no-config", cmds: cmdBoth, group: "General", hidden: true,
		help: "wget's --no-config: --disable, anywhere among the arguments", set: boolean(func(o *options) *bool { return &o.noConfig })},
	{long: "dns-timeout", cmds: cmdBoth, group: "Connection", arg: "SECONDS", hidden: true,
		help: "wget's --dns-timeout: taken (--connect-timeout bounds the lookup too)", set: takenNumber("seconds")},
	{long: "no-dns-cache", cmds: cmdBoth, group: "Connection", hidden: true, help: "what deref does: it keeps no DNS cache of its own", set: habit},
	{long: "no-http-keep-alive", cmds: cmdBoth, group: "HTTP", hidden: true, help: "taken: deref keeps connections for the next request to the same server", set: habit},
	{long: "no-hsts", cmds: cmdBoth, group: "HTTP", hidden: true, help: "what deref does: it keeps no HSTS list", set: habit},
	{long: "no-iri", cmds: cmdBoth, group: "Crawl", hidden: true, help: "taken: deref reads links as URLs, percent-encoding what is not ASCII", set: habit},
	{long: "iri", cmds: cmdBoth, group: "Crawl", hidden: true, help: "taken: deref reads links as URLs, percent-encoding what is not ASCII", set: habit},
	{long: "local-encoding", cmds: cmdBoth, group: "Crawl", arg: "ENC", hidden: true, help: "taken: file names are the URLs' bytes, decoded", set: func(*options, string) error { return nil }},
	{long: "remote-encoding", cmds: cmdBoth, group: "Crawl", arg: "ENC", hidden: true, help: "taken: links are read as URLs", set: func(*options, string) error { return nil }},
	{long: "secure-protocol", cmds: cmdBoth, group: "Connection", arg: "PROTOCOL", hidden: true,
		help: "wget's --secure-protocol: auto, TLSv1_2 or TLSv1_3 (that version only)", set: func(o *options, v string) error {
			switch strings.ToLower(v) {
			case "auto", "pfs":
				return nil
			case "tlsv1_2":
				o.tlsMax = tls.VersionTLS12
				return tlsMin(tls.VersionTLS12)(o, "")
			case "tlsv1_3":
				o.tlsMax = tls.VersionTLS13
				return tlsMin(tls.VersionTLS13)(o, "")
			}
			return fmt.Errorf("%q is not auto, TLSv1_2 or TLSv1_3 (deref speaks TLS 1.2 and 1.3)", v)
		}},
	{long: "post-data", cmds: cmdCrawl, group: "HTTP", arg: "DATA", hidden: true, help: "refused", set: refused("deref retrieves: it sends no request body")},
	{long: "post-file", cmds: cmdCrawl, group: "HTTP", arg: "FILE", hidden: true, help: "refused", set: refused("deref retrieves: it sends no request body")},
	{long: "no-passive-ftp", cmds: cmdBoth, group: "FTP", hidden: true, help: "refused", set: refused("deref speaks passive FTP only (EPSV, PASV)")},
	{long: "accept", short: "A", cmds: cmdCrawl, group: "Crawl", arg: "LIST",
		help: "follow only links to files whose names end with one of these comma-separated suffixes, or match one of these patterns (with *, ? or [), as wget -A; pages (.html, .htm) are still fetched for their links, and written only if they pass (repeatable)", set: commaList(func(o *options) *[]string { return &o.c.opts.Accept })},
	{long: "reject", short: "R", cmds: cmdCrawl, group: "Crawl", arg: "LIST",
		help: "do not follow links to files whose names end with one of these suffixes, or match one of these patterns, as wget -R (repeatable)", set: commaList(func(o *options) *[]string { return &o.c.opts.Reject })},
	{long: "cut-dirs", cmds: cmdCrawl, group: "Crawl", arg: "N",
		help: "with --output-dir: leave the first N folders of each PATH out, as wget --cut-dirs", set: integer(func(o *options) *int { return &o.c.opts.CutDirs })},
	{long: "ignore-robots", cmds: cmdCrawl, group: "Crawl",
		help: "fetch what robots.txt excludes (HTTP's, and a Gopher server's where it serves one)", set: boolean(func(o *options) *bool { return &o.c.opts.IgnoreRobots })},
	{long: "retry", cmds: cmdCrawl, group: "Crawl", arg: "N",
		help: "try a URL that failed for a reason that may pass N more times, with exponential backoff (default 3)", set: integer(func(o *options) *int { return &o.c.opts.Retries })},
	{long: "state", cmds: cmdCrawl, group: "Crawl", arg: "FILE", complete: "file",
		help: "record the crawl in FILE as it goes; run again with the same FILE, a stopped or killed crawl goes on where it was (its WARC files then named NAME-00000.warc.gz, ...); FILE may be a store, redis://[USER:PASSWORD@]HOST:PORT/DB[?prefix=NAME] (rediss:, valkey:, valkeys:), or the same through Sentinel or a Cluster, redis-sentinel://HOST:PORT,.../MASTER/DB and redis-cluster://HOST:PORT,.../ (deref help warc), which every process given the same URL and start URLs shares, on this machine or others: each URL fetched once by them all, --per-host and --wait kept across them, and a worker's WARC files named NAME-WORKER-00000.warc.gz, ...", set: str(func(o *options) *string { return &o.c.opts.State })},
	{long: "state", cmds: cmdMirror, group: "Mirror", arg: "URL",
		help: "share the mirror through a store, redis://[USER:PASSWORD@]HOST:PORT/DB[?prefix=NAME] (rediss:, valkey:, valkeys:): every process given the same URL and source mirrors a part of the tree into its own DIR, each folder listed and its files fetched by one of them, on this machine or others (deref crawl --state URL --status shows the progress)", set: str(func(o *options) *string { return &o.m.state })},
	{long: "worker", cmds: cmdCrawl | cmdMirror, group: "Crawl", arg: "NAME",
		help: "with --state redis://...: this process's name in the shared crawl or mirror (default HOST-PID); a crawl's worker started again with its name first cuts the records of its WARC files the store never acknowledged", set: str(func(o *options) *string { return &o.c.worker })},
	{long: "lease", cmds: cmdCrawl | cmdMirror, group: "Crawl", arg: "SECONDS",
		help: "with --state redis://...: how long a worker holds a URL it took unless it renews it, as it does while the transfer goes on; a worker killed loses its URLs to the others after this (default twice --idle-timeout)", set: secs(func(o *options) *float64 { return &o.c.lease })},
	{long: "state-timeout", cmds: cmdCrawl | cmdMirror, group: "Crawl", arg: "SECONDS",
		help: "with --state redis://...: how long a worker waits for a store that does not answer, pausing its transfers, before it stops (exit 6, its files whole, its leases left to expire; the same command later resumes the crawl) (default 5m)", set: secs(func(o *options) *float64 { return &o.c.stateTimeout })},
	{long: "state-replicas", cmds: cmdCrawl | cmdMirror, group: "Crawl", arg: "N",
		help: "with --state redis-sentinel://..., redis-cluster://... or a master with replicas: after each URL settled, wait (Redis's WAIT, saying so once, for at most --state-timeout) until N replicas hold it, so that a failover of the master loses no settled URL to be fetched again (it costs about a third of the claims a second)", set: integer(func(o *options) *int { return &o.c.stateReplicas })},
	{long: "status", cmds: cmdCrawl, group: "Crawl",
		help: "with --state redis://...: print the shared crawl's progress (queued, leased, settled, failed, excluded, in all and by host) and crawl nothing", set: boolean(func(o *options) *bool { return &o.c.status })},
	{long: "json", cmds: cmdCrawl, group: "Crawl",
		help: "print the report as JSON on standard output", set: boolean(func(o *options) *bool { return &o.c.asJSON })},

	// Serve
	{long: "listen", cmds: cmdServe, group: "Serve", arg: "ADDR",
		help: "listen on ADDR, HOST:PORT (default 127.0.0.1:8070; port 0 picks a free one)", set: str(func(o *options) *string { return &o.s.listen })},
	{long: "allow-private", cmds: cmdServe, group: "Serve",
		help: "let pages lead to private, loopback and link-local addresses (refused by default, on the address dialled)", set: boolean(func(o *options) *bool { return &o.s.opts.AllowPrivate })},
	{long: "allow", cmds: cmdServe, group: "Serve", arg: "HOST[:PORT]",
		help: "serve only hosts matching these patterns (comma-separated or repeated; *.example.org); never a private address by itself", set: list(func(o *options) *[]string { return &o.s.allow })},
	{long: "base-path", cmds: cmdServe, group: "Serve", arg: "PATH",
		help: "serve below PATH behind a reverse proxy (/gw/ for nginx's location /gw/): requests below it are served, and every link, form and redirect begins with it (deref help serve says how to set nginx up)", set: str(func(o *options) *string { return &o.s.opts.BasePath })},
	{long: "trust-proxy", cmds: cmdServe, group: "Serve", arg: "ADDR",
		help: "believe X-Forwarded-For from ADDR (an address or a CIDR network; comma-separated or repeated) only: the log and the per-client limits then see each client, not the proxy", set: list(func(o *options) *[]string { return &o.s.trusted })},
	{long: "home", cmds: cmdServe, group: "Serve", arg: "URL",
		help: "open on URL's page: / is redirected to it, as a hole's own gateway would (the URL form stays at /?url=)", set: str(func(o *options) *string { return &o.s.opts.Home })},
	{long: "allow-file", cmds: cmdServe, group: "Serve", arg: "DIR", complete: "dir",
		help: "serve file: URLs below DIR, files and folder listings (never a symbolic link out of it); otherwise file: is never served", set: str(func(o *options) *string { return &o.s.opts.AllowFile })},
	{long: "per-client", cmds: cmdServe, group: "Serve", arg: "N",
		help: "serve N requests of one client address at once, queueing the rest (default 32)", set: integer(func(o *options) *int { return &o.s.opts.PerClient })},
	{long: "per-host", cmds: cmdServe, group: "Serve", arg: "N",
		help: "at most N connections to one upstream host at once (default 8)", set: integer(func(o *options) *int { return &o.s.opts.PerHost })},
	{long: "archive", cmds: cmdServe, group: "Serve", arg: "PATH", complete: "file",
		help: "replay WARC files instead of the live servers: each PATH (a WARC file, gzip or not, whose series NAME-00001.warc.gz... comes with it; a folder of them, the folder . named after itself; a CDXJ index of them, or wget's CDX file) a collection named after it, a path with no capture refused, with pywb's URLs (/COLL/TIMESTAMP/URL, /COLL/URL, /COLL/*/URL, /COLL/timemap/link/URL) and Memento headers; repeatable", set: list(func(o *options) *[]string { return &o.s.archives })},
	{long: "rate", cmds: cmdServe, group: "Serve", arg: "PER-SECOND",
		help: "let one client address make PER-SECOND requests a second (in bursts of --burst), answering 429 with Retry-After past it (default: no limit)", set: func(o *options, v string) error {
			r, err := strconv.ParseFloat(v, 64)
			if err != nil || r < 0 || math.IsInf(r, 0) || math.IsNaN(r) {
				return fmt.Errorf("%q is not a number of requests a second", v)
			}
			o.s.opts.Rate = r
			return nil
		}},
	{long: "burst", cmds: cmdServe, group: "Serve", arg: "N",
		help: "with --rate, let a client make N requests at once before the rate holds (default: --rate, at least 1)", set: integer(func(o *options) *int { return &o.s.opts.Burst })},
	{long: "max-upstream", cmds: cmdServe, group: "Serve", arg: "N",
		help: "retrieve from at most N upstream servers at once in all, queueing the rest (default 256; one client's share is --per-client)", set: integer(func(o *options) *int { return &o.s.opts.MaxUpstream })},
	{long: "max-conns", cmds: cmdServe, group: "Serve", arg: "N",
		help: "hold at most N client connections at once, answering 503 past them (default: half of ulimit -n, at most 4096)", set: integer(func(o *options) *int { return &o.s.limits.MaxConns })},
	{long: "conns-per-client", cmds: cmdServe, group: "Serve", arg: "N",
		help: "hold at most N connections of one client address at once, answering 503 past them (default 256)", set: integer(func(o *options) *int { return &o.s.limits.PerAddr })},
	{long: "header-timeout", cmds: cmdServe, group: "Serve", arg: "SECONDS",
		help: "close a connection whose request head has not come whole in SECONDS (default 10)", set: secs(func(o *options) *float64 { return &o.s.headerTimeout })},
	{long: "keepalive-timeout", cmds: cmdServe, group: "Serve", arg: "SECONDS",
		help: "close a kept-alive connection idle for SECONDS (default 75, as nginx)", set: secs(func(o *options) *float64 { return &o.s.keepAlive })},
	{long: "send-timeout", cmds: cmdServe, group: "Serve", arg: "SECONDS",
		help: "end a response the client has taken nothing of for SECONDS (default 60, as nginx); a slow reader is served while it reads", set: secs(func(o *options) *float64 { return &o.s.sendTimeout })},
	{long: "max-header-size", cmds: cmdServe, group: "Serve", arg: "SIZE",
		help: "answer 431 to a request head longer than SIZE (default 32k)", set: size(func(o *options) *int64 { return &o.s.maxHeader })},
	{long: "max-url", cmds: cmdServe, group: "Serve", arg: "SIZE",
		help: "answer 414 to a request target longer than SIZE (default 8k)", set: size(func(o *options) *int64 { return &o.s.maxURL })},
	{long: "log-json", cmds: cmdServe, group: "Serve",
		help: "write the access log on standard error as JSON lines, not Common Log Format", set: boolean(func(o *options) *bool { return &o.s.opts.LogJSON })},

	// General
	{long: "config", short: "K", cmds: cmdBoth | cmdServe, group: "General", arg: "FILE", complete: "file",
		help: "read flags from FILE, one long flag a line (besides the default config file)", set: list(func(o *options) *[]string { return &o.configs })},
	{long: "disable", short: "q", cmds: cmdBoth | cmdServe, group: "General",
		help: "as the first flag: do not read the default config file", set: boolean(func(o *options) *bool { return &o.noConfig })},
	{long: "help", short: "h", cmds: cmdBoth | cmdServe, group: "General",
		help: "print this help", set: boolean(func(o *options) *bool { return &o.help })},
	{long: "version", short: "V", cmds: cmdBoth | cmdServe, group: "General",
		help: "print deref's version and the schemes it speaks", set: boolean(func(o *options) *bool { return &o.version })},
}

// lookup finds the flag of cmd named name: a long name, or a short one
// when short is set.
func lookup(cmd command, name string, short bool) *flagDef {
	for i := range flagTable {
		f := &flagTable[i]
		if f.cmds&cmd == 0 {
			continue
		}
		if short && f.short == name || !short && f.long == name {
			return f
		}
	}
	return nil
}

// errHelp is returned by parseFlags for -h.
var errHelp = errors.New("help requested")

// parseFlags reads args as GNU tools and curl do: flags anywhere among the
// arguments, "--name value" or "--name=value", bundled short flags
// ("-sO", "-C-", "-oFILE"), and "--" before arguments that start with a
// dash. A single dash before a long name ("-max-time") is taken too, as
// Go's flag package reads it. It returns the other arguments.
func parseFlags(cmd command, args []string, o *options) ([]string, error) {
	return scanFlags(cmd, args, func(f *flagDef, value string, _ valueAt) error { return apply(f, o, value) })
}

// valueAt is where a flag's value is in the arguments: args[arg][off:],
// or nowhere (arg -1) for a switch.
type valueAt struct{ arg, off int }

// scanFlags reads args as parseFlags does, calling visit for each flag
// with its value and where the value is, and returns the positional
// arguments.
func scanFlags(cmd command, args []string, visit func(f *flagDef, value string, at valueAt) error) ([]string, error) {
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return append(pos, args[i+1:]...), nil
		case a == "-" || !strings.HasPrefix(a, "-"):
			pos = append(pos, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "--") || len(name) > 1 && lookup(cmd, name, false) != nil {
			f := lookup(cmd, name, false)
			if f == nil {
				return nil, fmt.Errorf("unknown flag --%s%s", name, suggest(cmd, name))
			}
			at := valueAt{arg: -1}
			if hasValue {
				at = valueAt{i, len(a) - len(value)}
			}
			if f.arg == "" {
				if !hasValue {
					value = ""
				}
			} else if !hasValue {
				if i+1 >= len(args) {
					return nil, fmt.Errorf("--%s needs a value (%s)", f.long, f.arg)
				}
				i++
				value, at = args[i], valueAt{i, 0}
			}
			if err := visit(f, value, at); err != nil {
				return nil, err
			}
			if f.positional {
				pos = append(pos, value)
			}
			continue
		}
		// Bundled short flags: each letter a switch, until one that takes
		// a value, which is the rest or the next argument.
		letters := a[1:]
		for j := 0; j < len(letters); j++ {
			f := lookup(cmd, letters[j:j+1], true)
			if f == nil && letters[j] == 'n' && j > 0 {
				// wget's -n takes the letters after it, each a word
				// (-nv, -np, -nH ...): -mkEpnp is -m -k -E -p -np.
				for _, c := range letters[j+1:] {
					w := lookup(cmd, "n"+string(c), false)
					if w == nil || w.arg != "" {
						return nil, fmt.Errorf("unknown flag -n%c in %s", c, a)
					}
					if err := visit(w, "", valueAt{arg: -1}); err != nil {
						return nil, err
					}
				}
				if j+1 == len(letters) {
					return nil, fmt.Errorf("unknown flag -n in %s", a)
				}
				break
			}
			if f == nil {
				return nil, fmt.Errorf("unknown flag -%c", letters[j])
			}
			if f.arg == "" {
				if err := visit(f, "", valueAt{arg: -1}); err != nil {
					return nil, err
				}
				continue
			}
			if j+1 >= len(letters) && curlInclude(cmd, f, args[i+1:]) {
				// curl's -i (--include) before a URL, or last.
				if err := visit(lookup(cmd, "include", false), "", valueAt{arg: -1}); err != nil {
					return nil, err
				}
				continue
			}
			value := strings.TrimPrefix(letters[j+1:], "=")
			at := valueAt{i, len(a) - len(value)}
			if j+1 >= len(letters) {
				if i+1 >= len(args) {
					return nil, fmt.Errorf("-%s needs a value (%s)", f.short, f.arg)
				}
				i++
				value, at = args[i], valueAt{i, 0}
			}
			if err := visit(f, value, at); err != nil {
				return nil, err
			}
			break
		}
	}
	return pos, nil
}

// curlInclude says whether deref URL's -i, whose value would be rest[0],
// is curl's -i (--include) rather than -i FILE (--input-file, as wget's):
// when nothing follows it, or a URL with a scheme that names no file here
// ("curl -i https://example.org/", "curl -si URL").
func curlInclude(cmd command, f *flagDef, rest []string) bool {
	if cmd != cmdGet || f.long != "input-file" {
		return false
	}
	if len(rest) == 0 {
		return true
	}
	u, err := url.Parse(rest[0])
	if err != nil || len(u.Scheme) < 2 { // C:\list.txt is a file
		return false
	}
	_, err = os.Stat(rest[0])
	return err != nil
}

// apply sets f from value, naming the flag in an error.
func apply(f *flagDef, o *options, value string) error {
	if err := f.set(o, value); err != nil {
		if len(f.long) == 2 {
			return fmt.Errorf("-%s: %w", f.long, err) // wget's -nc
		}
		return fmt.Errorf("--%s: %w", f.long, err)
	}
	if f.long == "help" && o.help {
		return errHelp
	}
	return nil
}

// suggest names the flag closest to name, when one is close.
func suggest(cmd command, name string) string {
	best, bestD := "", 3
	for _, f := range flagTable {
		if f.cmds&cmd == 0 || f.hidden {
			continue
		}
		if d := editDistance(name, f.long); d < bestD {
			best, bestD = f.long, d
		}
	}
	if best == "" {
		return ""
	}
	return " (did you mean --" + best + "?)"
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// defaultConfig is the config file read unless -q comes first:
// $XDG_CONFIG_HOME/deref/config, else ~/.config/deref/config.
func defaultConfig() string {
	if d := os.Getenv("XDG_CONFIG_HOME"); d != "" {
		return filepath.Join(d, "deref", "config")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".config", "deref", "config")
}

// readConfig applies a config file: one long flag a line, without its
// dashes or with them, then its value after spaces or "=", quoted or not
// ("user-agent = \"x y\"", "retry 3", "silent"); "#" starts a comment
// line. A flag of another command is passed over; one no command has is an
// error naming the file and line.
func readConfig(cmd command, path string, o *options, missingOK bool) error {
	data, err := os.ReadFile(path)
	if err != nil {
		if missingOK && errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("config: %w", err)
	}
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, value := line, ""
		if i := strings.IndexAny(line, " \t=:"); i >= 0 {
			name, value = line[:i], strings.TrimSpace(line[i:])
			value = strings.TrimSpace(strings.TrimLeft(value, "=:"))
		}
		name = strings.TrimLeft(name, "-")
		if uq, err := strconv.Unquote(value); err == nil && len(value) > 1 && (value[0] == '"' || value[0] == '\'') {
			value = uq
		} else if len(value) > 1 && value[0] == '\'' && value[len(value)-1] == '\'' {
			value = value[1 : len(value)-1]
		}
		f := lookup(cmd, name, false)
		if f == nil {
			if lookup(cmdBoth, name, false) != nil {
				continue // another command's flag
			}
			return fmt.Errorf("%s:%d: unknown flag %q", path, n+1, name)
		}
		if f.long == "config" || f.long == "disable" || f.long == "help" || f.long == "version" || f.positional {
			return fmt.Errorf("%s:%d: %s cannot be set in a config file", path, n+1, f.long)
		}
		if f.arg != "" && value == "" {
			return fmt.Errorf("%s:%d: %s needs a value (%s)", path, n+1, name, f.arg)
		}
		if err := f.set(o, value); err != nil {
			return fmt.Errorf("%s:%d: %s: %w", path, n+1, name, err)
		}
	}
	return nil
}

// parseCommandLine reads the config files and then args into o, and
// returns the other arguments. Flags given on the command line win over
// the config files: the default file (unless -q or --disable comes
// first), then each -K file.
func parseCommandLine(cmd command, args []string, o *options) ([]string, error) {
	skipDefault := len(args) > 0 && (args[0] == "-q" && cmd != cmdCrawl || args[0] == "--disable") ||
		slices.Contains(args, "--no-config") // wget's, anywhere
	// A first pass finds the -K files (and -h, which needs no config).
	var scan options
	if _, err := parseFlags(cmd, args, &scan); err != nil && !errors.Is(err, errHelp) {
		return nil, err
	} else if err != nil {
		o.help = true
		return nil, errHelp
	}
	if !skipDefault {
		if p := defaultConfig(); p != "" {
			if err := readConfig(cmd, p, o, true); err != nil {
				return nil, err
			}
		}
	}
	for _, p := range scan.configs {
		if err := readConfig(cmd, p, o, false); err != nil {
			return nil, err
		}
	}
	o.configs = nil
	// The command line's -o files replace a config file's, as its other
	// flags win over theirs.
	configOutputs := o.outputs
	o.outputs = nil
	rest, err := parseFlags(cmd, args, o)
	if len(o.outputs) == 0 {
		o.outputs = configOutputs
	}
	return rest, err
}

// writeHelp prints the usage of cmd and its flags by group.
func writeHelp(w io.Writer, cmd command, intro string) {
	io.WriteString(w, intro)
	for _, g := range flagGroups {
		var rows []flagDef
		for _, f := range flagTable {
			if f.cmds&cmd == 0 || f.hidden {
				continue
			}
			if f = asShown(cmd, f); f.group == g {
				rows = append(rows, f)
			}
		}
		if len(rows) == 0 {
			continue
		}
		// In each group by long name, as curl -h lists them.
		sort.SliceStable(rows, func(i, j int) bool { return rows[i].long < rows[j].long })
		fmt.Fprintf(w, "\n%s:\n", g)
		for _, f := range rows {
			writeRow(w, flagSpelling(f), f.help)
		}
	}
	writeAlsoTaken(w, cmd)
}

// isRefused says whether f is a flag deref refuses whatever its value:
// it is shown nowhere, and says why when given.
func isRefused(f flagDef) bool { return f.hidden && f.help == "refused" }

// alsoTaken lists the flags of cmd taken for another tool's sake (curl's,
// wget's, lftp's spellings and habits) and not refused, sorted by long
// name: -h names them after the groups, the manual explains each, and
// the completions offer them.
func alsoTaken(cmd command) []flagDef {
	var out []flagDef
	seen := map[string]bool{}
	for _, f := range flagTable {
		if f.cmds&cmd == 0 || !f.hidden || isRefused(f) || seen[f.long] {
			continue
		}
		seen[f.long] = true
		out = append(out, asShown(cmd, f))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].long < out[j].long })
	return out
}

// writeAlsoTaken writes -h's closing paragraph: the flags of alsoTaken,
// wrapped to 80 columns.
func writeAlsoTaken(w io.Writer, cmd command) {
	taken := alsoTaken(cmd)
	if len(taken) == 0 {
		return
	}
	io.WriteString(w, "\nAlso taken, as curl, wget and lftp spell them (each in the manual):\n")
	line := " "
	for _, f := range taken {
		s := "--" + f.long
		if f.short != "" {
			s = "-" + f.short + "/" + s
		}
		if len(line)+1+len(s) > 79 {
			fmt.Fprintln(w, line)
			line = " "
		}
		line += " " + s
	}
	fmt.Fprintln(w, line)
}

// asShown is f as -h, the manual and the completions show it for cmd:
// without its short name where another flag of cmd takes that letter
// first (deref crawl's -K is wget's --backup-converted, not --config),
// and for deref mirror in its Mirror group where it is the crawl's too.
func asShown(cmd command, f flagDef) flagDef {
	if cmd == cmdMirror && f.group == "Crawl" {
		f.group = "Mirror" // what a shared crawl and a shared mirror have alike is the mirror's to mirror -h
	}
	if f.short != "" {
		if g := lookup(cmd, f.short, true); g == nil || g.long != f.long {
			f.short = ""
		}
	}
	return f
}

// flagSpelling is how -h shows a flag: "-o, --output FILE".
func flagSpelling(f flagDef) string {
	s := "    --" + f.long
	if f.short != "" {
		s = "-" + f.short + ", --" + f.long
	}
	if f.arg != "" {
		s += " " + f.arg
	}
	return s
}

// writeRow writes one flag of -h: the spelling, then the help wrapped to
// fit 80 columns beside it.
func writeRow(w io.Writer, spelling, help string) {
	const col, width = 30, 79
	line := "  " + spelling
	if len(line) >= col-1 {
		fmt.Fprintln(w, line)
		line = ""
	}
	pad := func() string { return line + strings.Repeat(" ", col-len(line)) }
	cur := pad()
	for _, word := range strings.Fields(help) {
		if len(cur)+1+len(word) > width && strings.TrimSpace(cur) != "" && len(cur) > col {
			fmt.Fprintln(w, strings.TrimRight(cur, " "))
			line = ""
			cur = pad()
		}
		if len(cur) > col {
			cur += " "
		}
		cur += word
	}
	fmt.Fprintln(w, strings.TrimRight(cur, " "))
}

// visibleFlags lists the flags of cmd that -h shows, sorted by long name.
func visibleFlags(cmd command) []flagDef {
	var out []flagDef
	seen := map[string]bool{}
	for _, f := range flagTable {
		if f.cmds&cmd == 0 || f.hidden || seen[f.long] {
			continue
		}
		seen[f.long] = true
		out = append(out, asShown(cmd, f))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].long < out[j].long })
	return out
}

// tlsVersions are the TLS versions --tls-max names.
var tlsVersions = map[string]uint16{"1.0": tls.VersionTLS10, "1.1": tls.VersionTLS11, "1.2": tls.VersionTLS12, "1.3": tls.VersionTLS13}

// tlsMin is the setter of a --tlsv1.N flag: the least TLS version.
func tlsMin(v uint16) func(*options, string) error {
	return func(o *options, s string) error {
		on, err := parseBool(s)
		if on {
			o.tlsMin = v
		} else if o.tlsMin == v {
			o.tlsMin = 0
		}
		return err
	}
}

// rule is the setter of lftp's mirror -i, -x, -I and -X: a rule added
// after the others, including or excluding, a regular expression or a
// glob.
func rule(include, regex bool) func(*options, string) error {
	return func(o *options, v string) error {
		r := mirror.Rule{Include: include, Glob: v}
		if regex {
			re, err := regexp.Compile(v)
			if err != nil {
				return fmt.Errorf("%q is not a regular expression: %w", v, err)
			}
			r.Regex, r.Glob = re, ""
		} else if _, err := path.Match(v, ""); err != nil {
			return fmt.Errorf("%q is not a glob: %w", v, err)
		}
		o.m.opts.Rules = append(o.m.opts.Rules, r)
		return nil
	}
}

// takenNumber is the setter of a flag deref takes without acting on it,
// whose value must still be a number (of unit) not below 0.
func takenNumber(unit string) func(*options, string) error {
	return func(_ *options, v string) error {
		if n, err := strconv.ParseFloat(v, 64); err != nil || n < 0 {
			return fmt.Errorf("%q is not a number of %s", v, unit)
		}
		return nil
	}
}

// mirrorTime is the setter of --newer-than and --older-than: a file's
// modification time, a date, or now-N with a unit.
func mirrorTime(field func(*options) *time.Time) func(*options, string) error {
	return func(o *options, v string) error {
		if rest, ok := strings.CutPrefix(v, "now-"); ok {
			i := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
			if i > 0 {
				n, _ := strconv.Atoi(rest[:i])
				unit := map[string]time.Duration{"minute": time.Minute, "minutes": time.Minute, "hour": time.Hour, "hours": time.Hour,
					"day": 24 * time.Hour, "days": 24 * time.Hour, "week": 7 * 24 * time.Hour, "weeks": 7 * 24 * time.Hour}[strings.TrimSpace(rest[i:])]
				if unit > 0 {
					*field(o) = time.Now().Add(-time.Duration(n) * unit)
					return nil
				}
			}
			return fmt.Errorf("%q is not now-N minutes, hours, days or weeks", v)
		}
		t, ok := timeCondition(v)
		if !ok {
			return fmt.Errorf("%q is neither a date (2006-01-02, RFC 3339), now-N days and the like, nor a file", v)
		}
		*field(o) = t
		return nil
	}
}
