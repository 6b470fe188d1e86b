package main

import (
	"bufio"
	"compress/gzip"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urlderef/deref/fetch/gateway"
	"github.com/urlderef/deref/internal/testserver"
	"github.com/urlderef/deref/url"
)

type measure struct {
	wall, cpu time.Duration
	busy      time.Duration // CPU time of the whole machine (server included), where /proc/stat tells
	rss       int64         // KiB
}

type tool struct {
	name string
	// argv returns the command for u written to out ("" means standard
	// output, which the runner points at /dev/null).
	argv func(u, out string) []string
	ok   func(u string) bool
}

func main() {
	target := flag.String("url", "", "URL to fetch (default: serve a generated file over HTTP)")
	mirror := flag.String("mirror", "", "directory URL whose files to fetch all (deref -i -O --parallel against lftp mirror -P 4)")
	parallel := flag.Int("parallel", 4, "deref's --parallel for -mirror")
	dest := flag.String("dest", "", "folder to mirror into for -mirror (default: a temporary folder)")
	rtt := flag.Duration("rtt", 0, "for -mirror: add this round-trip time to the FTP control connection (a delaying relay on loopback; data connections go straight to the server); for -crawl: to every HTTP connection")
	size := flag.Int64("size", 1<<30, "size of the generated file in bytes")
	runs := flag.Int("runs", 5, "runs per tool and target; the median is reported")
	deref := flag.String("deref", "", "deref binary (default: build ./cmd/deref)")
	against := flag.String("against", "", "for -mirror: another deref binary (an earlier build), timed in the same rounds as base and base-i")
	serve := flag.String("serve", "", "for -url and -mirror: the local path the server serves the URL from; the runner writes the object there first and removes it at the end (it must not exist yet)")
	files := flag.Int("files", 2000, "for -mirror with -serve: how many small files to write")
	segments := flag.Int("segments", 0, "for -url: time deref --segments N against aria2c -x N -s N and curl, to a file")
	crawlURL := flag.String("crawl", "", "HTML site to archive with deref crawl --warc-file against wget --mirror --warc-file")
	pages := flag.Int("pages", 2000, "for -crawl with -serve: how many pages to write")
	perHost := flag.Int("per-host", 1, "deref crawl's --per-host for -crawl")
	gw := flag.Bool("gateway", false, "for -url: time the object fetched through deref serve (by curl and by deref) against deref fetching it directly")
	cost := flag.Bool("archive-cost", false, "for -url and -crawl: time deref alone, without and with --warc-file in turns, and print the median of the rounds' ratios with its 95% interval")
	flag.Parse()
	if *serve != "" {
		if _, err := os.Lstat(*serve); err == nil {
			fatal("-serve %s: exists already; give a path that does not", *serve)
		}
		switch {
		case *crawlURL != "":
			check(writeSite(*serve, *pages))
		case *mirror != "":
			check(writeMany(*serve, *files))
		case *target != "":
			check(writeFile(*serve, *size))
		default:
			fatal("-serve goes with -url, -mirror or -crawl")
		}
		cleanup = func() { os.RemoveAll(*serve) }
		defer cleanup()
		syncDisks() // the new files' dirty pages would slow the first runs' writes
	}

	tmp, err := os.MkdirTemp("", "sidebyside")
	check(err)
	defer os.RemoveAll(tmp)
	bin := *deref
	if bin == "" {
		bin = filepath.Join(tmp, "deref")
		out, err := exec.Command("go", "build", "-o", bin, "./cmd/deref").CombinedOutput()
		if err != nil {
			fatal("building deref: %v\n%s", err, out)
		}
	}
	if *crawlURL != "" {
		if *dest == "" {
			*dest = tmp
		}
		if *rtt > 0 {
			*crawlURL = delayed(*crawlURL, *rtt)
		}
		if *cost {
			archiveCost("deref crawl --scope prefix "+*crawlURL, *runs, *dest, func(dir, warc string) []string {
				argv := []string{bin, "crawl", "-s", "--no-netrc", "--per-host", fmt.Sprint(*perHost), "--scope", "prefix"}
				if warc != "" {
					argv = append(argv, "--warc-file", warc)
				}
				return append(argv, *crawlURL)
			})
			return
		}
		crawlBench(bin, *crawlURL, *dest, *runs, *perHost)
		return
	}
	if *mirror != "" {
		if *dest == "" {
			*dest = tmp
		}
		if *rtt > 0 {
			*mirror = delayed(*mirror, *rtt)
		}
		floor := ""
		if strings.HasPrefix(*mirror, "ftp://") {
			floor = filepath.Join(tmp, "ftpfloor")
			out, err := exec.Command("go", "build", "-o", floor, "./internal/devcmd/ftpfloor").CombinedOutput()
			if err != nil {
				fatal("building ftpfloor: %v\n%s", err, out)
			}
		}
		mirrorBench(bin, *against, floor, *mirror, *dest, *runs, *parallel)
		return
	}
	urls := []string{*target}
	if *target == "" {
		name := filepath.Join(tmp, "big.bin")
		check(writeFile(name, *size))
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		check(err)
		go http.Serve(ln, http.FileServer(http.Dir(tmp)))
		urls = []string{"http://" + ln.Addr().String() + "/big.bin", "file://" + name}
	}
	if *segments > 0 {
		segmentBench(bin, urls[0], tmp, *runs, *segments)
		return
	}
	if *gw {
		gatewayBench(bin, urls[0], *runs)
		return
	}
	if *cost {
		if *dest == "" {
			*dest = tmp
		}
		archiveCost("deref -o FILE "+short(urls[0]), *runs, *dest, func(dir, warc string) []string {
			argv := []string{bin, "-s", "--no-netrc", "-o", filepath.Join(dir, "out")}
			if warc != "" {
				argv = append(argv, "--warc-file", warc)
			}
			return append(argv, urls[0])
		})
		return
	}
	tools := []tool{
		{"deref", func(u, out string) []string { return []string{bin, "-s", "-o", orNull(out), u} }, nil},
		{"curl", func(u, out string) []string { return []string{"curl", "-s", "-f", "-o", orNull(out), u} }, nil},
		{"wget", func(u, out string) []string { return []string{"wget", "-q", "-O", orNull(out), u} },
			func(u string) bool { return strings.HasPrefix(u, "http") || strings.HasPrefix(u, "ftp:") }},
		{"lftp", func(u, out string) []string {
			if out == "" {
				return []string{"lftp", "-c", "cat " + u}
			}
			return []string{"lftp", "-c", "get " + u + " -o " + out}
		}, func(u string) bool { return strings.HasPrefix(u, "ftp:") || strings.HasPrefix(u, "http:") }},
	}
	fmt.Printf("%-6s %-9s %-44s %9s %9s %12s\n", "tool", "target", "url", "wall", "cpu", "peak RSS")
	for _, u := range urls {
		for _, dest := range []string{"/dev/null", "file"} {
			res := map[string]measure{}
			for _, t := range tools {
				if _, err := exec.LookPath(t.argv("", "")[0]); err != nil && t.name != "deref" {
					continue
				}
				if t.ok != nil && !t.ok(u) {
					continue
				}
				out := ""
				if dest == "file" {
					out = filepath.Join(tmp, "out-"+t.name)
				}
				m := timeRuns(t, u, out, *runs)
				res[t.name] = m
				fmt.Printf("%-6s %-9s %-44s %9s %9s %8d KiB\n", t.name, dest, short(u), m.wall.Round(time.Millisecond), m.cpu.Round(time.Millisecond), m.rss)
			}
			ratios(res, dest)
		}
	}
}

// segmentBench times one large file fetched to a file by deref
// --segments n, aria2c with n connections and n splits, and curl over one
// connection.
func segmentBench(bin, u, tmp string, runs, n int) {
	ns := strconv.Itoa(n)
	tools := []tool{
		{"deref", func(u, out string) []string { return []string{bin, "-s", "--segments", ns, "-o", out, u} }, nil},
		{"aria2", func(u, out string) []string {
			return []string{"aria2c", "-q", "-x", ns, "-s", ns, "-k", "1M", "--file-allocation=none", "--allow-overwrite=true", "--auto-file-renaming=false", "-d", filepath.Dir(out), "-o", filepath.Base(out), u}
		}, nil},
		{"curl", func(u, out string) []string { return []string{"curl", "-s", "-f", "-o", out, u} }, nil},
	}
	fmt.Printf("%-6s %-44s %9s %9s %12s\n", "tool", "url", "wall", "cpu", "peak RSS")
	res := map[string]measure{}
	for _, t := range tools {
		if _, err := exec.LookPath(t.argv(u, "x")[0]); err != nil && t.name != "deref" {
			continue
		}
		out := filepath.Join(tmp, "out-"+t.name)
		m := timeRuns(t, u, out, runs)
		res[t.name] = m
		fmt.Printf("%-6s %-44s %9s %9s %8d KiB\n", t.name, short(u), m.wall.Round(time.Millisecond), m.cpu.Round(time.Millisecond), m.rss)
	}
	d := res["deref"]
	for _, other := range []string{"aria2", "curl"} {
		if o, ok := res[other]; ok {
			fmt.Printf("  deref/%s: wall %.2f, cpu %.2f, peak memory %.2f\n", other, d.wall.Seconds()/o.wall.Seconds(), d.cpu.Seconds()/o.cpu.Seconds(), float64(d.rss)/float64(o.rss))
		}
	}
}

// gatewayBench times u fetched to /dev/null by deref directly and through
// deref serve (its raw object) by curl and by deref.
func gatewayBench(bin, u string, runs int) {
	target, err := url.Parse(u)
	check(err)
	p := gateway.PagePath(target)
	if p == "" {
		fatal("-gateway: %s has no page in deref serve", u)
	}
	serve := exec.Command(bin, "serve", "--listen", "127.0.0.1:0", "--allow-private")
	out, err := serve.StdoutPipe()
	check(err)
	check(serve.Start())
	defer func() {
		serve.Process.Signal(os.Interrupt)
		serve.Wait()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	check(err)
	base := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(line), "deref serve: "), "/")
	through := base + p + "?raw=1"
	tools := []tool{
		{"deref", func(u, out string) []string { return []string{bin, "-s", "-o", os.DevNull, u} }, nil},
		{"curl-gw", func(u, out string) []string { return []string{"curl", "-s", "-f", "-o", os.DevNull, through} }, nil},
		{"deref-gw", func(u, out string) []string { return []string{bin, "-s", "-o", os.DevNull, through} }, nil},
	}
	fmt.Printf("%s directly and through deref serve (%s), to /dev/null\n", short(u), through)
	res := map[string]measure{}
	for _, t := range tools {
		if _, err := exec.LookPath(t.argv(u, "")[0]); err != nil && t.name != "deref" && t.name != "deref-gw" {
			continue
		}
		m := timeRuns(t, u, "", runs)
		res[t.name] = m
		fmt.Printf("%-9s %9s wall %9s cpu %8d KiB\n", t.name, m.wall.Round(time.Millisecond), m.cpu.Round(time.Millisecond), m.rss)
	}
	d := res["deref"]
	for _, name := range []string{"curl-gw", "deref-gw"} {
		if m, ok := res[name]; ok {
			fmt.Printf("  %s: %.2f of deref's direct speed\n", name, d.wall.Seconds()/m.wall.Seconds())
		}
	}
}

// timeRuns runs t on u into out (a file of the temporary folder, or ""
// for /dev/null) runs times and returns the median.
func timeRuns(t tool, u, out string, runs int) measure {
	var ms []measure
	for range runs {
		if out != "" {
			os.Remove(out) // never /dev/null
		}
		syncDisks()
		m, err := runOnce(t.argv(u, out))
		if err != nil {
			fatal("%s %s: %v", t.name, u, err)
		}
		ms = append(ms, m)
	}
	return median(ms)
}

func orNull(out string) string {
	if out == "" {
		return os.DevNull
	}
	return out
}

func ratios(res map[string]measure, what string) {
	for _, name := range []string{"deref", "deref-i", "deref-ls-i", "floor"} {
		d, ok := res[name]
		if !ok {
			continue
		}
		for _, other := range []string{"curl", "wget", "lftp", "floor"} {
			if o, ok := res[other]; ok && other != name {
				fmt.Printf("  %s/%s to %s: wall %.2f, cpu %.2f, peak memory %.2f\n", name, other, what,
					d.wall.Seconds()/o.wall.Seconds(), d.cpu.Seconds()/o.cpu.Seconds(), float64(d.rss)/float64(o.rss))
			}
		}
	}
}

// mirrorBench fetches every file of dirURL with deref mirror, with deref
// -i (the list of URLs made beforehand, then -i with -O and --parallel:
// deref-i; the listing, then -i, timed together: deref-ls-i), with lftp's
// mirror -P 4, with wget -m, and for ftp: URLs with ftpfloor (the least a
// Go program does for the same copy: floor, built to floorBin); then it
// runs each mirror again on its own result, where nothing has changed.
// With baseBin, that build's mirror and -i are timed in the same rounds
// (base, base-i): a file system's pace drifts between runs (a folder of
// thousands of files just freed, a discard under way), so that two
// builds are compared only in turns.
func mirrorBench(bin, baseBin, floorBin, dirURL, dest string, runs, parallel int) {
	if !strings.HasSuffix(dirURL, "/") {
		dirURL += "/"
	}
	base, err := os.MkdirTemp(dest, "mirrors")
	check(err)
	defer os.RemoveAll(base)
	list := filepath.Join(base, "list")
	// ;type=i: the bytes as they are, as lftp and deref mirror fetch
	// them (a .txt name would have deref -i convert its line ends).
	listing := fmt.Sprintf(`set -e; %s -s --no-netrc %s | cut -f5 | sed 's/$/;type=i/' > "$1"`, bin, dirURL)
	script := listing + fmt.Sprintf(`; %s -s --no-netrc --parallel %d -O --output-dir "$2" -i "$1"`, bin, parallel)
	cmd := exec.Command("sh", "-c", listing, "sh", list)
	cmd.Stderr = os.Stderr
	check(cmd.Run())
	// A build's mirror (again: --only-newer) and its -i of the list.
	mirrorOf := func(b string, again bool) func(dir string) []string {
		return func(dir string) []string {
			args := []string{b, "mirror", "-s", "--no-netrc", "--parallel", fmt.Sprint(parallel)}
			if again {
				args = append(args, "--only-newer")
			}
			return append(args, dirURL, filepath.Join(dir, "out"))
		}
	}
	listOf := func(b string) func(dir string) []string {
		return func(dir string) []string {
			return []string{b, "-s", "--no-netrc", "--parallel", fmt.Sprint(parallel), "-O", "--output-dir", filepath.Join(dir, "out"), "-i", list}
		}
	}
	first := map[string]func(dir string) []string{
		"deref":   mirrorOf(bin, false),
		"deref-i": listOf(bin),
		"base":    mirrorOf(baseBin, false),
		"base-i":  listOf(baseBin),
		"deref-ls-i": func(dir string) []string {
			return []string{"sh", "-c", script, "sh", filepath.Join(dir, "list"), filepath.Join(dir, "out")}
		},
		"lftp": func(dir string) []string {
			return []string{"lftp", "-c", "mirror -P 4 " + dirURL + " " + filepath.Join(dir, "out")}
		},
		"wget": func(dir string) []string {
			return []string{"wget", "-q", "-m", "-nH", "-np", "-P", filepath.Join(dir, "out"), dirURL}
		},
		"floor": func(dir string) []string {
			return []string{floorBin, "-parallel", fmt.Sprint(parallel), dirURL, filepath.Join(dir, "out")}
		},
	}
	again := map[string]func(dir string) []string{
		"deref": mirrorOf(bin, true),
		"base":  mirrorOf(baseBin, true),
		"lftp": func(dir string) []string {
			return []string{"lftp", "-c", "mirror --only-newer -P 4 " + dirURL + " " + filepath.Join(dir, "out")}
		},
		"wget": first["wget"], // -m includes -N
	}
	names := []string{"deref", "deref-i", "deref-ls-i", "lftp", "wget", "floor", "base", "base-i"}
	names = slices.DeleteFunc(names, func(name string) bool {
		switch name {
		case "floor":
			return floorBin == ""
		case "base", "base-i":
			return baseBin == ""
		}
		_, err := exec.LookPath(name)
		return !strings.HasPrefix(name, "deref") && err != nil
	})
	// The tools take turns, each round in a different order, and no copy is
	// removed before the end: a file system that has just freed thousands
	// of inodes is slower to allocate new ones for a while (ext4 skips
	// recently deleted inodes), which would tax whoever runs next.
	ms, ms2 := map[string][]measure{}, map[string][]measure{}
	files := map[string]int{}
	fmt.Printf("fetching every file of %s into %s (median of %d rounds)\n", dirURL, dest, runs)
	for round := range runs {
		for i := range names {
			name := names[(i+round)%len(names)]
			dir := filepath.Join(base, fmt.Sprintf("%s-%d", name, round))
			check(os.MkdirAll(filepath.Join(dir, "out"), 0o755))
			syncDisks()
			m, err := runOnce(first[name](dir))
			if err != nil {
				fatal("%s: %v", name, err)
			}
			ms[name] = append(ms[name], m)
			files[name] = countFiles(filepath.Join(dir, "out"))
			if again[name] != nil {
				syncDisks()
				m, err := runOnce(again[name](dir))
				if err != nil {
					fatal("%s (again): %v", name, err)
				}
				ms2[name] = append(ms2[name], m)
			}
		}
	}
	res, res2 := map[string]measure{}, map[string]measure{}
	for _, name := range names {
		m := median(ms[name])
		res[name] = m
		fmt.Printf("%-10s %5d files %9s wall %9s cpu %9s machine %8d KiB\n", name, files[name], m.wall.Round(time.Millisecond), m.cpu.Round(time.Millisecond), m.busy.Round(time.Millisecond), m.rss)
		if len(ms2[name]) > 0 {
			m2 := median(ms2[name])
			res2[name] = m2
			fmt.Printf("%-10s   no change %9s wall %9s cpu %9s machine %8d KiB (%.2f of its first run)\n", name, m2.wall.Round(time.Millisecond), m2.cpu.Round(time.Millisecond), m2.busy.Round(time.Millisecond), m2.rss, m2.wall.Seconds()/m.wall.Seconds())
		}
	}
	// The CPU of the median run is one run's; the mean over the rounds,
	// with its standard error, says how far a ratio can be trusted.
	lftpCPU, _ := meanCPU(ms["lftp"])
	fmt.Printf("mean CPU of the %d rounds, with its standard error:\n", runs)
	for _, name := range names {
		m, se := meanCPU(ms[name])
		line := fmt.Sprintf("  %-10s %7s ± %s", name, m.Round(100*time.Microsecond), se.Round(100*time.Microsecond))
		if lftpCPU > 0 && name != "lftp" {
			line += fmt.Sprintf(" (%.2f of lftp's)", m.Seconds()/lftpCPU.Seconds())
		}
		fmt.Println(line)
	}
	// A file system's pace drifts from round to round (more so on a disk
	// than in memory); the ratio of two tools within each round does not
	// carry that drift, and its median over the rounds is printed too.
	fmt.Println("median of each round's ratio (CPU, wall):")
	for _, pair := range [][2]string{{"deref", "lftp"}, {"deref-i", "lftp"}, {"floor", "lftp"}, {"deref", "base"}, {"deref-i", "base-i"}} {
		if len(ms[pair[0]]) == 0 || len(ms[pair[1]]) == 0 {
			continue
		}
		cpu, wall := pairedRatios(ms[pair[0]], ms[pair[1]])
		fmt.Printf("  %s/%s: %.2f, %.2f\n", pair[0], pair[1], cpu, wall)
	}
	ratios(res, "a folder of files")
	if len(res2) > 1 {
		ratios(res2, "the same folder again, nothing changed")
	}
}

// writeSite writes an HTML site of n pages: index.html links the first
// ten; page i links pages i+1 ... i+5 (modulo n), the index, and a page
// seven times further; each page carries a paragraph of text.
func writeSite(dir string, n int) error {
	if err := os.MkdirAll(filepath.Join(dir, "p"), 0o755); err != nil {
		return err
	}
	var idx strings.Builder
	idx.WriteString("<!doctype html><title>site</title><h1>A generated site</h1><ul>")
	for i := range min(n, 10) {
		fmt.Fprintf(&idx, `<li><a href="p/%d.html">page %d</a>`, i, i)
	}
	idx.WriteString("</ul>")
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte(idx.String()), 0o644); err != nil {
		return err
	}
	text := strings.Repeat("Some words of a generated page, for the archive to hold. ", 20)
	for i := range n {
		var b strings.Builder
		fmt.Fprintf(&b, "<!doctype html><title>page %d</title><h1>Page %d</h1><p>%s</p><ul>", i, i, text)
		for _, j := range []int{i + 1, i + 2, i + 3, i + 4, i + 5, i * 7} {
			fmt.Fprintf(&b, `<li><a href="%d.html">page %d</a>`, j%n, j%n)
		}
		b.WriteString(`<li><a href="../index.html">home</a></ul>`)
		if err := os.WriteFile(filepath.Join(dir, "p", fmt.Sprintf("%d.html", i)), []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// crawlBench archives siteURL with deref crawl and with wget --mirror,
// each writing a WARC file and a copy of the site, taking turns round by
// round, and prints the wall times and the response records each WARC
// file holds.
func crawlBench(bin, siteURL, dest string, runs, perHost int) {
	base, err := os.MkdirTemp(dest, "crawls")
	check(err)
	defer os.RemoveAll(base)
	derefArgs := func(dir string) []string {
		return []string{bin, "crawl", "-s", "--no-netrc", "--per-host", fmt.Sprint(perHost), "--scope", "prefix", "--warc-file", filepath.Join(dir, "site"), siteURL}
	}
	cmds := map[string]func(dir string) []string{
		"deref": derefArgs,
		"deref-tree": func(dir string) []string {
			return append(derefArgs(dir), "--output-dir", filepath.Join(dir, "out"))
		},
		"wget": func(dir string) []string {
			return []string{"wget", "-q", "--mirror", "-np", "-P", filepath.Join(dir, "out"), "--warc-file=" + filepath.Join(dir, "site"), siteURL}
		},
	}
	names := []string{"deref", "deref-tree"}
	if _, err := exec.LookPath("wget"); err == nil {
		names = append(names, "wget")
	}
	ms := map[string][]measure{}
	records := map[string]int{}
	fmt.Printf("archiving %s (median of %d rounds; deref --per-host %d)\n", siteURL, runs, perHost)
	for round := range runs {
		for i := range names {
			name := names[(i+round)%len(names)]
			dir := filepath.Join(base, fmt.Sprintf("%s-%d", name, round))
			check(os.MkdirAll(dir, 0o755))
			syncDisks()
			m, err := runOnce(cmds[name](dir))
			if err != nil && name == "wget" {
				err = nil // wget -m exits 8 for any 404, robots.txt's included
			}
			check(err)
			ms[name] = append(ms[name], m)
			records[name] = countResponses(filepath.Join(dir, "site.warc.gz"))
		}
	}
	res := map[string]measure{}
	for _, name := range names {
		m := median(ms[name])
		res[name] = m
		fmt.Printf("%-10s %5d responses %9s wall %9s cpu %9s machine %8d KiB\n", name, records[name], m.wall.Round(time.Millisecond), m.cpu.Round(time.Millisecond), m.busy.Round(time.Millisecond), m.rss)
	}
	for _, name := range []string{"deref", "deref-tree"} {
		if w, ok := res["wget"]; ok {
			d := res[name]
			fmt.Printf("  %s/wget: wall %.2f, cpu %.2f, peak memory %.2f\n", name, d.wall.Seconds()/w.wall.Seconds(), d.cpu.Seconds()/w.cpu.Seconds(), float64(d.rss)/float64(w.rss))
		}
	}
}

// countResponses counts the response and revisit records of a gzipped
// WARC file (robots.txt's included: both tools fetch it).
func countResponses(path string) int {
	f, err := os.Open(path)
	check(err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	check(err)
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		if t := sc.Text(); t == "WARC-Type: response" || t == "WARC-Type: revisit" { // ScanLines drops the CR
			n++
		}
	}
	check(sc.Err())
	return n
}

func countFiles(dir string) int {
	n := 0
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			n++
		}
		return nil
	})
	return n
}

// pairedRatios is the median over the rounds of a's CPU and wall time
// to b's in the same round.
func pairedRatios(a, b []measure) (cpu, wall float64) {
	var cs, ws []float64
	for i := range min(len(a), len(b)) {
		cs = append(cs, a[i].cpu.Seconds()/b[i].cpu.Seconds())
		ws = append(ws, a[i].wall.Seconds()/b[i].wall.Seconds())
	}
	slices.Sort(cs)
	slices.Sort(ws)
	mid := func(v []float64) float64 {
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return mid(cs), mid(ws)
}

// meanCPU is the mean CPU time of ms and its standard error; zero for
// none.
func meanCPU(ms []measure) (mean, stderr time.Duration) {
	if len(ms) == 0 {
		return 0, 0
	}
	var sum float64
	for _, m := range ms {
		sum += m.cpu.Seconds()
	}
	mu := sum / float64(len(ms))
	if len(ms) > 1 {
		var ss float64
		for _, m := range ms {
			d := m.cpu.Seconds() - mu
			ss += d * d
		}
		stderr = time.Duration(math.Sqrt(ss/float64(len(ms)-1)/float64(len(ms))) * float64(time.Second))
	}
	return time.Duration(mu * float64(time.Second)), stderr
}

func median(ms []measure) measure {
	slices.SortFunc(ms, func(a, b measure) int { return int(a.wall - b.wall) })
	return ms[len(ms)/2]
}

func runOnce(argv []string) (measure, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return measure{}, err
	}
	defer null.Close()
	cmd.Stdout = null
	before := busyTime()
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return measure{}, err
	}
	wall := time.Since(start)
	return measure{wall: wall, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), busy: busyTime() - before, rss: maxRSS(cmd.ProcessState)}, nil
}

// busyTime is the CPU time all processors have spent on anything but
// idling since boot, from the first line of /proc/stat (in USER_HZ ticks,
// 100 per second on Linux); 0 where there is no /proc.
func busyTime() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	var ticks int64
	for i, v := range f {
		n, err := strconv.ParseInt(v, 10, 64)
		// user nice system idle iowait irq softirq steal: all but idle and iowait
		if i == 0 || err != nil || i == 4 || i == 5 || i > 8 {
			continue
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

// writeFile writes size bytes of pseudo-random data.
// writeMany creates the folder dir with n files of about 280 bytes,
// f1.txt to fN.txt.
func writeMany(dir string, n int) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	for i := 1; i <= n; i++ {
		body := fmt.Sprintf("file %d %0270d\n", i, 0)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.txt", i)), []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func writeFile(name string, size int64) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	block := make([]byte, 1<<20)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range block {
		block[i] = byte(r.Uint32())
	}
	for size > 0 {
		n := min(size, int64(len(block)))
		if _, err := f.Write(block[:n]); err != nil {
			f.Close()
			return err
		}
		size -= n
	}
	return f.Close()
}

func short(u string) string {
	if len(u) > 44 {
		return "..." + u[len(u)-41:]
	}
	return u
}

func check(err error) {
	if err != nil {
		fatal("%v", err)
	}
}

// cleanup removes what -serve wrote; fatal calls it too.
var cleanup = func() {}

func fatal(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "sidebyside: "+format+"\n", args...)
	cleanup()
	os.Exit(1)
}

// delayed starts a relay that passes the connections to u's server
// through with rtt/2 of delay each way, and returns u with the relay's
// address. The relay listens on the same loopback address as the
// server, so that an FTP data connection (made to the control
// connection's address and the port the server names) reaches the
// server directly: only the control connection is delayed. An HTTP
// site's relative links lead through the relay too.
func delayed(u string, rtt time.Duration) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok || (scheme != "ftp" && scheme != "http") {
		fatal("-rtt needs an ftp:// or http:// URL")
	}
	hostport, path, _ := strings.Cut(rest, "/")
	ln, err := testserver.Relay(hostport, rtt)
	check(err)
	fmt.Printf("connections relayed with %v round trip\n", rtt)
	return scheme + "://" + ln.Addr().String() + "/" + path
}
