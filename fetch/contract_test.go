package fetch_test

import (
	"context"
	"errors"
	"io"
	nethttp "net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/internal/testserver/gopherd"
	"github.com/urlderef/deref/internal/testserver/nntpd"
	"github.com/urlderef/deref/internal/testserver/prosperod"
	"github.com/urlderef/deref/internal/testserver/waisd"
	"github.com/urlderef/deref/url"
)

// contractEnv is one protocol's in-process server, as the contract cases
// see it: URLs of objects with known content, of a listing, of what is
// missing. An empty URL leaves a case out where the protocol has no such
// thing.
type contractEnv struct {
	object, want string // an object and its content
	suffix       bool   // want is the end of the object (an article's body after its head)
	empty        string // an object of no bytes
	listing      string // a listing that holds an entry named listed
	listed       string
	missing      string // the server answers "not found"
	forbidden    string // the server answers "permission denied"
	large        string // an object of at least 4 MiB
	resumes      bool   // an offset is honoured (else the whole object comes)
	// secret is a password in the user info of object's URL, which no
	// trace may show.
	secret string
}

// contracts are the protocols the suite runs: one line each.
var contracts = []struct {
	name  string
	setup func(t *testing.T, root string) contractEnv
}{
	{"file", fileContract},
	{"ftp", ftpContract},
	{"http", httpContract},
	{"gopher", gopherContract},
	{"nntp", nntpContract},
	{"wais", waisContract},
	{"prospero", prosperoContract},
}

// contractTree is what the file-serving protocols serve.
var contractTree = map[string]string{
	"pub/a.txt":   "the object of the contract\n",
	"pub/empty":   "",
	"pub/big.bin": strings.Repeat("0123456789abcdef", 1<<18), // 4 MiB
}

func fileContract(t *testing.T, root string) contractEnv {
	base := fileURLOf(root)
	return contractEnv{object: base + "pub/a.txt", want: contractTree["pub/a.txt"], empty: base + "pub/empty",
		listing: base + "pub/", listed: "a.txt", missing: base + "pub/none.txt", large: base + "pub/big.bin", resumes: true}
}

func ftpContract(t *testing.T, root string) contractEnv {
	s := serveFTP(t, root)
	base := "ftp://alice:s3cret-pass@" + s.Addr() + "/"
	return contractEnv{object: base + "pub/a.txt;type=i", want: contractTree["pub/a.txt"], empty: base + "pub/empty",
		listing: base + "pub/", listed: "a.txt", missing: base + "pub/none.txt", large: base + "pub/big.bin", resumes: true, secret: "s3cret-pass"}
}

func httpContract(t *testing.T, root string) contractEnv {
	files := nethttp.FileServer(nethttp.Dir(root))
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		if r.URL.Path == "/pub/forbidden" {
			nethttp.Error(w, "no", nethttp.StatusForbidden)
			return
		}
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	base := "http://alice:s3cret-pass@" + strings.TrimPrefix(s.URL, "http://") + "/"
	return contractEnv{object: base + "pub/a.txt", want: contractTree["pub/a.txt"], empty: base + "pub/empty",
		missing: base + "pub/none.txt", forbidden: base + "pub/forbidden", large: base + "pub/big.bin", resumes: true, secret: "s3cret-pass"}
}

func gopherContract(t *testing.T, root string) contractEnv {
	s := &gopherd.Server{Root: root}
	startOrFail(t, s.Start, s.Close)
	base := "gopher://" + s.Addr() + "/"
	return contractEnv{object: base + "0/pub/a.txt", want: contractTree["pub/a.txt"], empty: base + "9/pub/empty",
		listing: base + "1/pub", listed: "a.txt", missing: base + "0/pub/none.txt", large: base + "9/pub/big.bin"}
}

func nntpContract(t *testing.T, root string) contractEnv {
	s := nntpd.New()
	s.AddGroup("local.test", "")
	s.Post("local.test", "<a1@test>", []string{"From: A <a@test>", "Subject: the object"}, contractTree["pub/a.txt"])
	s.Post("local.test", "<big@test>", []string{"From: B <b@test>", "Subject: large"}, strings.Repeat("a line of the large article\n", 160000))
	startOrFail(t, s.Start, s.Close)
	base := "nntp://" + s.Addr() + "/local.test/"
	return contractEnv{object: base + "1", want: "\r\n\r\n" + strings.ReplaceAll(contractTree["pub/a.txt"], "\n", "\r\n"), suffix: true,
		listing: base, listed: "the object", missing: base + "999", large: base + "2"}
}

func waisContract(t *testing.T, root string) contractEnv {
	s := waisd.New()
	startOrFail(t, s.Start, s.Close)
	base := "wais://" + s.Addr()
	return contractEnv{object: base + alphaPath, want: waisd.Alpha, listing: base + "/test?gophers", resumes: true,
		missing: base + strings.ReplaceAll(alphaPath, "alpha.txt", "gone.txt")}
}

func prosperoContract(t *testing.T, root string) contractEnv {
	files := map[string]string{"root/forbidden": "x"}
	for name, content := range contractTree {
		files["ftp/"+name] = content
	}
	s := &prosperod.Server{Files: files, Reply: func(req string) (string, bool) {
		if strings.Contains(req, "'AFTP/pub/forbidden'") {
			return "FAILURE NOT-AUTHORIZED\n", true
		}
		return "", false
	}}
	startOrFail(t, s.Start, s.Close)
	base := "prospero://" + s.Addr() + "/AFTP/"
	return contractEnv{object: base + "pub/a.txt", want: contractTree["pub/a.txt"], empty: base + "pub/empty",
		listing: base + "pub", listed: "a.txt", missing: base + "pub/none.txt", forbidden: base + "pub/forbidden", large: base + "pub/big.bin", resumes: true}
}

// TestContract runs every protocol's in-process server through the same
// cases: an object, an empty object, a listing, resume, not found,
// permission, cancel in mid-body, close early, concurrent use, and a trace
// that never shows the password. A new protocol is checked by adding one
// line to contracts.
func TestContract(t *testing.T) {
	root := writeTree(t, contractTree)
	for _, p := range contracts {
		t.Run(p.name, func(t *testing.T) {
			env := p.setup(t, root)
			var mu sync.Mutex
			var trace strings.Builder
			c := newClient()
			c.Trace = func(u *url.URL, ev fetch.TraceEvent) {
				mu.Lock()
				trace.WriteString(ev.Text + "\n")
				mu.Unlock()
			}
			ctx := context.Background()
			get := func(u string, offset int64) (*fetch.Response, string, error) {
				t.Helper()
				resp, err := c.Fetch(ctx, url.MustParse(u), offset)
				if err != nil {
					return nil, "", err
				}
				b, err := io.ReadAll(resp.Body)
				if cerr := resp.Body.Close(); err == nil {
					err = cerr
				}
				return resp, string(b), err
			}
			check := func(got string) bool {
				if env.suffix {
					return strings.HasSuffix(got, env.want)
				}
				return got == env.want
			}

			t.Run("object", func(t *testing.T) {
				resp, got, err := get(env.object, 0)
				if err != nil || !check(got) || resp.Kind != fetch.KindFile {
					t.Errorf("%q %v", got, err)
				}
				if resp != nil && resp.Size >= 0 && resp.Size != int64(len(got)) {
					t.Errorf("Size %d for %d bytes", resp.Size, len(got))
				}
			})
			t.Run("empty", func(t *testing.T) {
				if env.empty == "" {
					t.Skip("the protocol has no empty object")
				}
				if _, got, err := get(env.empty, 0); err != nil || got != "" {
					t.Errorf("%q %v", got, err)
				}
			})
			t.Run("listing", func(t *testing.T) {
				if env.listing == "" {
					t.Skip("the server lists nothing here")
				}
				resp, _, err := get(env.listing, 0)
				if err != nil {
					t.Fatal(err)
				}
				if resp.Kind != fetch.KindDirectory && resp.Kind != fetch.KindArticleList {
					t.Errorf("kind %v", resp.Kind)
				}
				found := false
				for _, e := range resp.Entries {
					found = found || e.Name == env.listed || env.listed == "" && e.URL != ""
				}
				if !found {
					t.Errorf("no entry %q in %+v", env.listed, resp.Entries)
				}
			})
			t.Run("resume", func(t *testing.T) {
				resp, got, err := get(env.object, 4)
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case resp.Offset == 4 && env.resumes:
					if !strings.HasSuffix(env.want, got) || len(got) != len(env.want)-4 && !env.suffix {
						t.Errorf("from 4: %q", got)
					}
				case resp.Offset == 0 && !env.resumes:
					if !check(got) {
						t.Errorf("the whole object: %q", got)
					}
				default:
					t.Errorf("Offset %d (resumes: %v)", resp.Offset, env.resumes)
				}
			})
			t.Run("not found", func(t *testing.T) {
				if env.missing == "" {
					t.Skip()
				}
				if _, _, err := get(env.missing, 0); !errors.Is(err, fetch.ErrNotFound) {
					t.Errorf("%v", err)
				}
			})
			t.Run("permission", func(t *testing.T) {
				if env.forbidden == "" {
					t.Skip("no refusal can be made here")
				}
				if _, _, err := get(env.forbidden, 0); !errors.Is(err, fetch.ErrPermission) {
					t.Errorf("%v", err)
				}
			})
			t.Run("cancel mid-body", func(t *testing.T) {
				if env.large == "" {
					t.Skip("no large object")
				}
				cctx, cancel := context.WithCancel(ctx)
				defer cancel()
				resp, err := c.Fetch(cctx, url.MustParse(env.large), 0)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				if _, err := io.ReadFull(resp.Body, make([]byte, 1000)); err != nil {
					t.Fatal(err)
				}
				cancel()
				done := make(chan error, 1)
				go func() { _, err := io.Copy(io.Discard, resp.Body); done <- err }()
				select {
				case err := <-done:
					if !errors.Is(err, context.Canceled) {
						t.Errorf("read after cancel: %v", err)
					}
				case <-time.After(10 * time.Second):
					t.Error("the body went on after cancel")
				}
			})
			t.Run("close early", func(t *testing.T) {
				if env.large == "" {
					t.Skip("no large object")
				}
				for range 3 {
					resp, err := c.Fetch(ctx, url.MustParse(env.large), 0)
					if err != nil {
						t.Fatal(err)
					}
					io.ReadFull(resp.Body, make([]byte, 1000))
					resp.Body.Close()
				}
				if _, got, err := get(env.object, 0); err != nil || !check(got) {
					t.Errorf("after: %q %v", got, err)
				}
			})
			t.Run("concurrent", func(t *testing.T) {
				var wg sync.WaitGroup
				errs := make(chan error, 8)
				for range 8 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						resp, err := c.Fetch(ctx, url.MustParse(env.object), 0)
						if err != nil {
							errs <- err
							return
						}
						b, err := io.ReadAll(resp.Body)
						resp.Body.Close()
						if err == nil && !check(string(b)) {
							err = errors.New("other content: " + string(b))
						}
						errs <- err
					}()
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					if err != nil {
						t.Error(err)
					}
				}
			})
			t.Run("trace", func(t *testing.T) {
				mu.Lock()
				defer mu.Unlock()
				if trace.Len() == 0 {
					t.Error("nothing traced")
				}
				if env.secret != "" && strings.Contains(trace.String(), env.secret) {
					t.Errorf("the password is in the trace")
				}
			})
		})
	}
}
