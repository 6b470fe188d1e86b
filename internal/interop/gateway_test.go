//go:build interop

package interop

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"github.com/urlderef/deref/internal/testserver/askd"
	"github.com/urlderef/deref/internal/testserver/waisd"
)

// startServe runs deref serve --allow-private against the suite's
// daemons and returns its base URL and its access log, which also knows
// the process.
func startServe(t *testing.T, args ...string) (string, *accessLog) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "deref")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/deref").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	news := strings.TrimPrefix(env(t, "DEREF_INTEROP_NEWS"), "nntp://")
	cmd := exec.Command(bin, append([]string{"serve", "--listen", "127.0.0.1:0", "--allow-private", "--news-server", news}, args...)...)
	stdout, _ := cmd.StdoutPipe()
	stderr := &accessLog{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stderr.pid = cmd.Process.Pid
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	base, ok := strings.CutPrefix(strings.TrimSpace(line), "deref serve: ")
	if err != nil || !ok {
		t.Fatalf("deref serve said %q: %v", line, err)
	}
	return strings.TrimSuffix(base, "/"), stderr
}

// accessLog is what deref serve writes on standard error.
type accessLog struct {
	lockedBuffer
	pid int // the process's
}

// browse starts headless Chromium on base's first page, for the test's
// length, and returns its context.
func browse(t *testing.T, chromium, base string) context.Context {
	t.Helper()
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), chromedp.ExecPath(chromium), chromedp.Headless, chromedp.NoSandbox,
		chromedp.NoFirstRun, chromedp.UserDataDir(t.TempDir()), chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true))
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/")); err != nil { // starts the browser
		t.Fatal(err)
	}
	return ctx
}

// TestGatewayInBrowser drives headless Chromium (Debian's chromium,
// through chromedp) through deref serve: a pygopherd and a gophernicus
// menu, an item followed to its text, a search submitted, a vsftpd folder
// browsed and a file downloaded (the bytes the daemon serves), an INN
// article read, a search of the WAIS test server; asserting what each
// page shows.
func TestGatewayInBrowser(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("no chromium: the interop start script installs it")
	}
	ws := waisd.New()
	if err := ws.Start(); err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	ask, err := askd.Start() // no Debian Gopher server speaks Gopher+ +ASK
	if err != nil {
		t.Fatal(err)
	}
	defer ask.Close()
	base, _ := startServe(t)
	tree := env(t, "DEREF_INTEROP_TREE")
	gopher := gopherServers(t)
	pyg := strings.TrimPrefix(gopher["pygopherd"], "gopher://")
	gn := strings.TrimPrefix(gopher["gophernicus"], "gopher://")
	vs := strings.TrimPrefix(ftpServers(t)["vsftpd"], "ftp://")

	ctx := browse(t, chromium, base)
	step := func(name string, actions ...chromedp.Action[chromedp.Void]) string {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := chromedp.Do(sctx, append(actions, chromedp.WaitVisible(chromedp.CSS("main")))...); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		text, err := chromedp.Run(sctx, chromedp.Text(chromedp.CSS("main")))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return text
	}
	readme, _ := os.ReadFile(filepath.Join(tree, "pub", "README.txt"))

	if text := step("the index", chromedp.SendKeys(chromedp.CSS(`input[name=url]`), "gopher://"+pyg+"/1/pub"), chromedp.Submit(chromedp.CSS(`input[name=url]`)),
		chromedp.WaitVisible(chromedp.CSS("ul.menu"))); !strings.Contains(text, "README") || !strings.Contains(text, "nested") {
		t.Errorf("pygopherd's menu through the field: %q", text)
	}
	if text := step("an item", chromedp.Click(chromedp.CSS(`a[href$="/0/pub/README.txt"]`)), chromedp.WaitVisible(chromedp.CSS("pre"))); strings.TrimSpace(text) != "README.txt\n"+strings.TrimSpace(string(readme)) && !strings.Contains(text, strings.TrimSpace(string(readme))) {
		t.Errorf("the README's page: %q", text)
	}
	if text := step("gophernicus", chromedp.Navigate(base+"/gopher/"+gn+"/1/pub/"), chromedp.WaitVisible(chromedp.CSS("ul.menu"))); !strings.Contains(text, "README.txt") || !strings.Contains(text, "Gophered by Gophernicus") {
		t.Errorf("gophernicus's menu: %q", text)
	}
	if text := step("a search", chromedp.Navigate(base+"/gopher/"+pyg+"/7/cgi-bin/search"), chromedp.SendKeys(chromedp.CSS(`input[name=q]`), "hello world"),
		chromedp.Submit(chromedp.CSS(`input[name=q]`)), chromedp.WaitVisible(chromedp.CSS("ul.menu"))); !strings.Contains(text, "results for hello world") {
		t.Errorf("the search's results: %q", text)
	}
	if text := step("a Gopher+ form", chromedp.Navigate(base+"/gopher/"+ask.Addr()+"/1/"), chromedp.Click(chromedp.CSS(`a[href$="/0/form?ask=1"]`)),
		chromedp.WaitVisible(chromedp.CSS(`input[name=a0]`)), chromedp.SetValue(chromedp.CSS(`input[name=a0]`), "Ada Lovelace"),
		chromedp.SetValue(chromedp.CSS(`select[name=a1]`), "green"), chromedp.Submit(chromedp.CSS(`input[name=a0]`)),
		chromedp.WaitVisible(chromedp.CSS("pre"))); !strings.Contains(text, "Thanks, Ada Lovelace and green") || strings.Join(ask.Answers(), "|") != "+-1|Ada Lovelace|green" {
		t.Errorf("the form's reply: %q; the answers sent: %q", text, ask.Answers())
	}
	if text := step("an FTP folder", chromedp.Navigate(base+"/ftp/"+vs+"/pub/"), chromedp.WaitVisible(chromedp.CSS("table"))); !strings.Contains(text, "random.bin") || !strings.Contains(text, "3145745") {
		t.Errorf("vsftpd's folder: %q", text)
	}

	// A download: the bytes the daemon serves.
	dir := t.TempDir()
	progress := chromedp.Events(ctx, browser.DownloadProgress)
	if err := chromedp.Do(ctx,
		chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			events := true
			_, err := chromedp.Call(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
				Behavior: browser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: dir, EventsEnabled: &events})
			return err
		}),
		chromedp.Navigate(base+"/ftp/"+vs+"/pub/random.bin?download=1"),
	); err != nil && !strings.Contains(err.Error(), "net::ERR_ABORTED") { // a navigation that becomes a download is aborted
		t.Fatal(err)
	}
	deadline := time.After(60 * time.Second)
	for ev, err := range progress {
		if err != nil {
			t.Fatal(err)
		}
		if ev.State == browser.DownloadProgressStateCanceled {
			t.Fatal("the download was cancelled")
		}
		if ev.State == browser.DownloadProgressStateCompleted {
			got, _ := os.ReadFile(filepath.Join(dir, ev.GUID))
			want, _ := os.ReadFile(filepath.Join(tree, "pub", "random.bin"))
			if !bytes.Equal(got, want) {
				t.Errorf("downloaded %d bytes, not the %d served", len(got), len(want))
			}
			break
		}
		select {
		case <-deadline:
			t.Fatal("no download in a minute")
		default:
		}
	}

	if text := step("a group", chromedp.Navigate(base+"/news/local.test"), chromedp.WaitVisible(chromedp.CSS("table"))); !strings.Contains(text, "first article") {
		t.Errorf("INN's group: %q", text)
	}
	if text := step("an article", chromedp.Click(chromedp.CSS(`a[href^="/news/"][href*="@"]`)), chromedp.WaitVisible(chromedp.CSS("pre"))); !strings.Contains(text, "Newsgroups: local.test") {
		t.Errorf("INN's article: %q", text)
	}
	if text := step("a WAIS search", chromedp.Navigate(base+"/wais/"+ws.Addr()+"/test"), chromedp.SendKeys(chromedp.CSS(`input[name=q]`), "gophers"),
		chromedp.Submit(chromedp.CSS(`input[name=q]`)), chromedp.WaitVisible(chromedp.CSS("ol"))); !strings.Contains(text, "alpha.txt") || !strings.Contains(text, "score 191") {
		t.Errorf("the WAIS results: %q", text)
	}
	// The hit's document, text shown as the browser shows text/plain.
	sctx, cancel2 := context.WithTimeout(ctx, 30*time.Second)
	defer cancel2()
	if err := chromedp.Do(sctx, chromedp.Click(chromedp.CSS(`ol a`)), chromedp.WaitVisible(chromedp.CSS("pre"))); err != nil {
		t.Fatalf("a WAIS document: %v", err)
	}
	if text, err := chromedp.Run(sctx, chromedp.Text(chromedp.CSS("pre"))); err != nil || strings.TrimSpace(text) != strings.TrimSpace(waisd.Alpha) {
		t.Errorf("the WAIS document: %q %v", text, err)
	}
}

// TestGatewayCurlProxy: curl -x (deref serve as its HTTP proxy) fetches
// an ftp: URL through the proxy mode: the bytes vsftpd serves.
func TestGatewayCurlProxy(t *testing.T) {
	base, log := startServe(t)
	target := ftpServers(t)["vsftpd"] + "/pub/random.bin"
	out, err := exec.Command("curl", "-s", "-f", "-x", base, target).Output()
	want, _ := os.ReadFile(filepath.Join(env(t, "DEREF_INTEROP_TREE"), "pub", "random.bin"))
	if err != nil || !bytes.Equal(out, want) {
		t.Errorf("curl -x: %v, %d bytes of %d", err, len(out), len(want))
	}
	if !strings.Contains(log.String(), `"GET `+target+` HTTP/1.1" 200 `) {
		t.Errorf("curl did not ask the proxy; the log:\n%s", log)
	}
}

// TestGatewayLynx: lynx with gopher_proxy set fetches through deref
// serve's proxy mode and shows the menu and the text.
func TestGatewayLynx(t *testing.T) {
	lynx, err := exec.LookPath("lynx")
	if err != nil {
		t.Fatal("no lynx: the interop start script installs it")
	}
	base, log := startServe(t)
	pyg := gopherServers(t)["pygopherd"]
	readme, _ := os.ReadFile(filepath.Join(env(t, "DEREF_INTEROP_TREE"), "pub", "README.txt"))
	for target, want := range map[string]string{
		pyg + "/1/pub":            "README",
		pyg + "/0/pub/README.txt": strings.SplitN(string(readme), "\n", 2)[0],
	} {
		cmd := exec.Command(lynx, "-dump", "-nolist", "-noreferer", target)
		cmd.Env = append(os.Environ(), "gopher_proxy="+base+"/", "HOME="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), want) {
			t.Errorf("lynx %s: %v\n%s", target, err, out)
		}
		if !strings.Contains(log.String(), `"GET `+target+` HTTP/1.0" 200 `) {
			t.Errorf("lynx did not ask the proxy for %s; the log:\n%s", target, log)
		}
	}
	// lynx asks for HTML: the menu comes as a page, its links the
	// gateway's pages of the items (CERN's proxies answered browsers so),
	// not as the menu's raw TAB-separated lines.
	cmd := exec.Command(lynx, "-dump", "-noreferer", pyg+"/1/pub")
	cmd.Env = append(os.Environ(), "gopher_proxy="+base+"/", "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Contains(string(out), "\t") || !strings.Contains(string(out), base+"/gopher/") {
		t.Errorf("lynx's menu through the proxy is not a page with links: %v\n%s", err, out)
	}
}

// TestGatewayLoad: 200 clients at once read pages through deref serve
// from pygopherd (menus, text items, a 3 MiB binary): every request is
// answered in full, and the gateway's peak resident size stays under
// 128 MiB.
func TestGatewayLoad(t *testing.T) {
	base, log := startServe(t)
	pyg := strings.TrimPrefix(gopherServers(t)["pygopherd"], "gopher://")
	tree := env(t, "DEREF_INTEROP_TREE")
	random, _ := os.ReadFile(filepath.Join(tree, "pub", "random.bin"))
	pages := []struct{ path, want string }{
		{"/gopher/" + pyg + "/1/pub", "README"},
		{"/gopher/" + pyg + "/0/pub/README.txt", "The pub folder"},
		{"/gopher/" + pyg + "/1/pub/nested", "deeper"},
		{"/gopher/" + pyg + "/9/pub/random.bin", ""},
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 200}, Timeout: 5 * time.Minute}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 3 {
				p := pages[(i+k)%len(pages)]
				resp, err := client.Get(base + p.path)
				if err != nil {
					mu.Lock()
					failures = append(failures, err.Error())
					mu.Unlock()
					continue
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				ok := err == nil && resp.StatusCode == 200 && strings.Contains(string(b), p.want)
				if p.want == "" {
					ok = ok && bytes.Equal(b, random)
				}
				if !ok {
					mu.Lock()
					failures = append(failures, fmt.Sprintf("%s: %d, %d bytes, %v", p.path, resp.StatusCode, len(b), err))
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Errorf("%d of 600 requests failed, the first: %s", len(failures), failures[0])
	}
	peak := servePeak(t, log)
	t.Logf("600 requests from 200 clients at once; the gateway's peak resident size %.1f MiB", float64(peak)/1024)
	if peak > 128<<10 {
		t.Errorf("peak resident size %.1f MiB, bound 128 MiB", float64(peak)/1024)
	}
}

// servePeak is the peak resident size of the deref serve process, in KiB
// (VmHWM of /proc/PID/status).
func servePeak(t *testing.T, log *accessLog) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", log.pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			var kib int64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kib)
			return kib
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// TestGatewayGopherPlusLength: through deref serve, pygopherd's menu
// links its Gopher+ binary to its default view, and the object comes
// with the Content-Length the server states (as deref -I says it).
func TestGatewayGopherPlusLength(t *testing.T) {
	base, _ := startServe(t)
	pyg := strings.TrimPrefix(gopherServers(t)["pygopherd"], "gopher://")
	resp, err := http.Get(base + "/gopher/" + pyg + "/1/pub")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	link := `/gopher/` + pyg + `/9/pub/random.bin?view=default"`
	if !strings.Contains(string(b), link) {
		t.Fatalf("no %s in pygopherd's menu page:\n%s", link, b)
	}
	resp, err = http.Get(base + strings.TrimSuffix(link, `"`))
	if err != nil {
		t.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	st, _ := os.Stat(filepath.Join(env(t, "DEREF_INTEROP_TREE"), "pub", "random.bin"))
	if resp.StatusCode != 200 || resp.ContentLength != st.Size() || n != st.Size() {
		t.Errorf("random.bin through the gateway: %d, Content-Length %d, %d bytes, want %d", resp.StatusCode, resp.ContentLength, n, st.Size())
	}
}
