// Command sidebyside times deref against curl, wget and lftp (those that
// are installed) on the same URLs over loopback, to /dev/null and to a
// file, and prints the ratios of wall time, CPU time and peak memory.
//
//	go run ./internal/sidebyside                          # serves a generated 1 GiB file over HTTP itself
//	go run ./internal/sidebyside -url ftp://127.0.0.1:2121/big.bin
//	go run ./internal/sidebyside -mirror ftp://127.0.0.1:2121/many/
//
// -mirror fetches every file of a directory with deref mirror (and with
// deref -i -O --parallel), lftp "mirror -P 4" and wget -m, then runs each
// mirror again where nothing changed (--only-newer).
//
// Dirty pages of one run slow the next one's writes, so the runner calls
// sync(2) before every timed run.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

type measure struct {
	wall, cpu time.Duration
	rss       int64 // KiB
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
	parallel := flag.Int("parallel", 8, "deref's --parallel for -mirror")
	size := flag.Int64("size", 1<<30, "size of the generated file in bytes")
	runs := flag.Int("runs", 5, "runs per tool and target; the median is reported")
	deref := flag.String("deref", "", "deref binary (default: build ./cmd/deref)")
	flag.Parse()

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
	if *mirror != "" {
		mirrorBench(bin, *mirror, tmp, *runs, *parallel)
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
				var ms []measure
				for range *runs {
					if out != "" {
						os.Remove(out) // never /dev/null: out is a file of the temporary folder
					}
					syscall.Sync()
					m, err := runOnce(t.argv(u, out))
					if err != nil {
						fatal("%s %s: %v", t.name, u, err)
					}
					ms = append(ms, m)
				}
				m := median(ms)
				res[t.name] = m
				fmt.Printf("%-6s %-9s %-44s %9s %9s %8d KiB\n", t.name, dest, short(u), m.wall.Round(time.Millisecond), m.cpu.Round(time.Millisecond), m.rss)
			}
			ratios(res, dest)
		}
	}
}

func orNull(out string) string {
	if out == "" {
		return os.DevNull
	}
	return out
}

func ratios(res map[string]measure, what string) {
	d, ok := res["deref"]
	if !ok {
		return
	}
	for _, other := range []string{"curl", "wget", "lftp"} {
		if o, ok := res[other]; ok {
			fmt.Printf("  deref/%s to %s: wall %.2f, cpu %.2f, peak memory %.2f\n", other, what,
				d.wall.Seconds()/o.wall.Seconds(), d.cpu.Seconds()/o.cpu.Seconds(), float64(d.rss)/float64(o.rss))
		}
	}
}

// mirrorBench fetches every file of dirURL with deref mirror, with deref
// -i (listing, then -i with -O and --parallel), with lftp's mirror -P 4
// and with wget -m; then it runs each mirror again on its own result,
// where nothing has changed.
func mirrorBench(bin, dirURL, tmp string, runs, parallel int) {
	if !strings.HasSuffix(dirURL, "/") {
		dirURL += "/"
	}
	script := fmt.Sprintf(`set -e; %s -s --no-netrc %s | cut -f5 > "$1/list"; %s -s --no-netrc --parallel %d -O --output-dir "$1/out" -i "$1/list"`, bin, dirURL, bin, parallel)
	first := map[string]func(dir string) []string{
		"deref": func(dir string) []string {
			return []string{bin, "mirror", "-s", "--no-netrc", "--parallel", fmt.Sprint(parallel), dirURL, filepath.Join(dir, "out")}
		},
		"deref-i": func(dir string) []string { return []string{"sh", "-c", script, "sh", dir} },
		"lftp": func(dir string) []string {
			return []string{"lftp", "-c", "mirror -P 4 " + dirURL + " " + filepath.Join(dir, "out")}
		},
		"wget": func(dir string) []string {
			return []string{"wget", "-q", "-m", "-nH", "-np", "-P", filepath.Join(dir, "out"), dirURL}
		},
	}
	again := map[string]func(dir string) []string{
		"deref": func(dir string) []string {
			return []string{bin, "mirror", "-s", "--no-netrc", "--only-newer", "--parallel", fmt.Sprint(parallel), dirURL, filepath.Join(dir, "out")}
		},
		"lftp": func(dir string) []string {
			return []string{"lftp", "-c", "mirror --only-newer -P 4 " + dirURL + " " + filepath.Join(dir, "out")}
		},
		"wget": first["wget"], // -m includes -N
	}
	res, res2 := map[string]measure{}, map[string]measure{}
	fmt.Printf("fetching every file of %s (median of %d runs)\n", dirURL, runs)
	for _, name := range []string{"deref", "deref-i", "lftp", "wget"} {
		if tool := strings.TrimSuffix(name, "-i"); tool != "deref" {
			if _, err := exec.LookPath(tool); err != nil {
				continue
			}
		}
		var ms, ms2 []measure
		files := 0
		for range runs {
			dir, err := os.MkdirTemp(tmp, name)
			check(err)
			check(os.Mkdir(filepath.Join(dir, "out"), 0o755))
			syscall.Sync()
			m, err := runOnce(first[name](dir))
			if err != nil {
				fatal("%s: %v", name, err)
			}
			ms = append(ms, m)
			files = countFiles(filepath.Join(dir, "out"))
			if again[name] != nil {
				syscall.Sync()
				m, err := runOnce(again[name](dir))
				if err != nil {
					fatal("%s (again): %v", name, err)
				}
				ms2 = append(ms2, m)
			}
			os.RemoveAll(dir)
		}
		m := median(ms)
		res[name] = m
		fmt.Printf("%-8s %5d files %9s wall %9s cpu %8d KiB\n", name, files, m.wall.Round(time.Millisecond), m.cpu.Round(time.Millisecond), m.rss)
		if len(ms2) > 0 {
			m2 := median(ms2)
			res2[name] = m2
			fmt.Printf("%-8s   no change %9s wall %9s cpu %8d KiB (%.2f of its first run)\n", name, m2.wall.Round(time.Millisecond), m2.cpu.Round(time.Millisecond), m2.rss, m2.wall.Seconds()/m.wall.Seconds())
		}
	}
	ratios(res, "a folder of files")
	if len(res2) > 1 {
		ratios(res2, "the same folder again, nothing changed")
	}
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
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return measure{}, err
	}
	wall := time.Since(start)
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return measure{wall: wall, cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), rss: ru.Maxrss}, nil
}

// writeFile writes size bytes of pseudo-random data.
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

func fatal(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "sidebyside: "+format+"\n", args...)
	os.Exit(1)
}
