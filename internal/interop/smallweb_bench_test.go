//go:build interop

package interop

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch/mirror"
	"github.com/urlderef/deref/protocols/gemini"
	"github.com/urlderef/deref/url"
)

// cpu is the process's CPU time so far, user and system.
func cpu() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkMollyBrownMirror mirrors molly-brown's folder of 2,000 pages
// side by side with the least a Go program does for the same pages (TLS
// with session resumption, one request each, in turn, the folder's
// listing first, each page written to a file of its own): full
// handshakes a page after the first, pages a second, and CPU, each run's
// against the floor's.
func BenchmarkMollyBrownMirror(b *testing.B) {
	base := os.Getenv("DEREF_INTEROP_GEMINI")
	if base == "" {
		b.Skip("DEREF_INTEROP_GEMINI is not set: start the daemons with .ci/interop/start first")
	}
	dirURL := base + "/many/"
	u := url.MustParse(dirURL)
	var derefCPU, floorCPU, derefWall, floorWall time.Duration
	pages := 0
	for b.Loop() {
		c := client()
		c.Gemini.KnownHosts = filepath.Join(b.TempDir(), "known_hosts")
		start, c0 := time.Now(), cpu()
		rep, err := mirror.Run(context.Background(), c, dirURL, b.TempDir(), mirror.Options{})
		if err != nil || rep.New != 2000 {
			b.Fatal(err, rep.New)
		}
		derefCPU += cpu() - c0
		derefWall += time.Since(start)
		full, _ := c.Gemini.Handshakes()
		b.ReportMetric(float64(full-1)/2000, "full-handshakes/page")

		start, c0 = time.Now(), cpu()
		cfg := &tls.Config{InsecureSkipVerify: true, ClientSessionCache: tls.NewLRUClientSessionCache(16)}
		get := func(raw string) string {
			conn, err := tls.Dial("tcp", u.HostPort(), cfg)
			if err != nil {
				b.Fatal(err)
			}
			io.WriteString(conn, raw+"\r\n")
			body, _ := io.ReadAll(bufio.NewReader(conn))
			conn.Close()
			return string(body)
		}
		listing := get(dirURL)
		n, out := 0, b.TempDir()
		for _, l := range gemini.Links(u, listing[strings.Index(listing, "\n")+1:]) {
			if strings.HasSuffix(l.URL, ".txt") {
				page := get(l.URL)
				body := page[strings.Index(page, "\n")+1:]
				if err := os.WriteFile(filepath.Join(out, l.Name), []byte(body), 0o644); err != nil {
					b.Fatal(err)
				}
				n++
			}
		}
		floorCPU += cpu() - c0
		floorWall += time.Since(start)
		pages = n
	}
	if pages != 2000 {
		b.Fatalf("the floor fetched %d pages", pages)
	}
	b.ReportMetric(float64(2000*b.N)/derefWall.Seconds(), "pages/s")
	b.ReportMetric(float64(2000*b.N)/floorWall.Seconds(), "floor-pages/s")
	b.ReportMetric(float64(derefCPU)/float64(floorCPU), "cpu-ratio")
}

// BenchmarkMollyBrownPage fetches one page from molly-brown with the
// deref command and with `openssl s_client -quiet` given the same
// request, in turn, each a new process and a full handshake: the wall
// time of each, and deref's against openssl's.
func BenchmarkMollyBrownPage(b *testing.B) {
	base := os.Getenv("DEREF_INTEROP_GEMINI")
	if base == "" {
		b.Skip("DEREF_INTEROP_GEMINI is not set: start the daemons with .ci/interop/start first")
	}
	bin := filepath.Join(b.TempDir(), "deref")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/deref").CombinedOutput(); err != nil {
		b.Fatalf("%v\n%s", err, out)
	}
	kh := filepath.Join(b.TempDir(), "known_hosts")
	u := base + "/hello.txt"
	var d, o time.Duration
	for b.Loop() {
		start := time.Now()
		out, err := exec.Command(bin, "--known-hosts", kh, u).Output()
		d += time.Since(start)
		if err != nil || string(out) != "Hello from molly-brown.\n" {
			b.Fatalf("deref: %q %v", out, err)
		}
		cmd := exec.Command("openssl", "s_client", "-quiet", "-connect", strings.TrimPrefix(base, "gemini://"), "-servername", "localhost")
		cmd.Stdin = strings.NewReader(u + "\r\n")
		start = time.Now()
		out, err = cmd.Output()
		o += time.Since(start)
		if err != nil || !strings.HasSuffix(string(out), "Hello from molly-brown.\n") {
			b.Fatalf("openssl: %q %v", out, err)
		}
	}
	b.ReportMetric(float64(d.Microseconds())/float64(b.N), "deref-µs/page")
	b.ReportMetric(float64(o.Microseconds())/float64(b.N), "openssl-µs/page")
	b.ReportMetric(float64(d)/float64(o), "ratio")
}
