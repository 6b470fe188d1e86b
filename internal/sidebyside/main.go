// Command sidebyside times deref against curl (and wget, when installed) on
// the same URLs over loopback, to /dev/null and to a file, and prints the
// ratios of wall time, CPU time and peak memory.
//
//	go run ./internal/sidebyside                 # serves a generated 1 GiB file itself
//	go run ./internal/sidebyside -url http://127.0.0.1:8080/big.bin
//
// With no -url it writes a file of -size bytes to a temporary folder and
// serves it over HTTP from this process (net/http, sendfile), and also
// compares file: URLs.
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

func main() {
	target := flag.String("url", "", "URL to fetch (default: serve a generated file)")
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
	urls := []string{*target}
	if *target == "" {
		name := filepath.Join(tmp, "big.bin")
		check(writeFile(name, *size))
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		check(err)
		go http.Serve(ln, http.FileServer(http.Dir(tmp)))
		urls = []string{"http://" + ln.Addr().String() + "/big.bin", "file://" + name}
	}
	tools := map[string]func(u, out string) []string{
		"deref": func(u, out string) []string { return []string{bin, "-s", "-o", out, u} },
		"curl":  func(u, out string) []string { return []string{"curl", "-s", "-f", "-o", out, u} },
		"wget":  func(u, out string) []string { return []string{"wget", "-q", "-O", out, u} },
	}
	order := []string{"deref", "curl", "wget"}
	fmt.Printf("%-6s %-9s %-48s %10s %10s %10s\n", "tool", "target", "url", "wall", "cpu", "peak RSS")
	for _, u := range urls {
		for _, dest := range []string{"/dev/null", "file"} {
			res := map[string]measure{}
			for _, tool := range order {
				if _, err := exec.LookPath(tools[tool]("", "")[0]); err != nil {
					continue
				}
				if tool == "wget" && strings.HasPrefix(u, "file:") {
					continue
				}
				out := "/dev/null"
				if dest == "file" {
					out = filepath.Join(tmp, "out-"+tool)
				}
				var ms []measure
				for range *runs {
					if dest == "file" {
						os.Remove(out) // never /dev/null
					}
					m, err := runOnce(tools[tool](u, out))
					if err != nil {
						fatal("%s %s: %v", tool, u, err)
					}
					ms = append(ms, m)
				}
				slices.SortFunc(ms, func(a, b measure) int { return int(a.wall - b.wall) })
				m := ms[len(ms)/2]
				res[tool] = m
				fmt.Printf("%-6s %-9s %-48s %10s %10s %7d KiB\n", tool, dest, short(u), m.wall.Round(time.Millisecond), m.cpu.Round(time.Millisecond), m.rss)
			}
			for _, other := range []string{"curl", "wget"} {
				d, ok1 := res["deref"]
				o, ok2 := res[other]
				if ok1 && ok2 {
					fmt.Printf("  deref/%s to %s: wall %.2f, cpu %.2f, peak memory %.2f\n", other, dest,
						d.wall.Seconds()/o.wall.Seconds(), d.cpu.Seconds()/o.cpu.Seconds(), float64(d.rss)/float64(o.rss))
				}
			}
		}
	}
}

func runOnce(argv []string) (measure, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = os.Stderr
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
	if len(u) > 48 {
		return "..." + u[len(u)-45:]
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
