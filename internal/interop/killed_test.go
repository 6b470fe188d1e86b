//go:build interop

package interop

import (
	"bytes"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/urlderef/deref/url"
)

// TestKilledAtRandom kills deref (SIGKILL: no clean-up at all) at 20
// random points of a run, each run starting from what the last one left,
// then lets a last run finish: the copy must then equal the served tree
// with no stray .part file, and after every kill no file under its final
// name may differ from the served one. Once for deref mirror, once for
// deref -i LIST -O.
func TestKilledAtRandom(t *testing.T) {
	tree := filepath.Join(env(t, "DEREF_INTEROP_TREE"), "pub")
	bin := filepath.Join(t.TempDir(), "deref")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/deref").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	src := mirrorSources(t)["vsftpd"]
	// -i -O names files after their URLs: the top folder's files.
	var top []string
	des, _ := os.ReadDir(tree)
	for _, de := range des {
		if de.Type().IsRegular() {
			top = append(top, de.Name())
		}
	}
	list := filepath.Join(t.TempDir(), "urls")
	var urls strings.Builder
	for _, n := range top {
		urls.WriteString(src + url.EscapeSegment(n) + ";type=i\n") // bytes as they are, as the mirror fetches them
	}
	os.WriteFile(list, []byte(urls.String()), 0o644)

	seed := uint64(time.Now().UnixNano())
	t.Logf("kill times from seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	for _, mode := range []string{"mirror", "list"} {
		t.Run(mode, func(t *testing.T) {
			dst := t.TempDir()
			args := func(slow bool) []string {
				var a []string
				if mode == "mirror" {
					a = []string{"mirror", "-s", "--no-netrc", "--parallel", "2", "--only-newer"}
				} else {
					a = []string{"-s", "-q", "--no-netrc", "--parallel", "2", "-i", list, "-O", "--output-dir", dst, "-C", "-"}
				}
				if slow {
					a = append(a, "--limit-rate", "2M")
				}
				if mode == "mirror" {
					a = append(a, src, dst)
				}
				return a
			}
			for i := range 20 {
				cmd := exec.Command(bin, args(true)...)
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				time.Sleep(time.Duration(rng.IntN(1200)) * time.Millisecond)
				cmd.Process.Signal(syscall.SIGKILL)
				cmd.Wait()
				filepath.WalkDir(dst, func(p string, de os.DirEntry, err error) error {
					if err != nil || de.IsDir() || strings.HasSuffix(p, ".part") {
						return err
					}
					rel, _ := filepath.Rel(dst, p)
					got, _ := os.ReadFile(p)
					want, err := os.ReadFile(filepath.Join(tree, rel))
					if err != nil || !bytes.Equal(got, want) {
						t.Errorf("after kill %d: %s under its final name is not the served file (%d bytes, %v)", i+1, rel, len(got), err)
					}
					return nil
				})
			}
			if out, err := exec.Command(bin, args(false)...).CombinedOutput(); err != nil {
				t.Fatalf("last run: %v\n%s", err, out)
			}
			if mode == "mirror" {
				compareTree(t, dst, tree, false)
			} else {
				for _, n := range top {
					got, _ := os.ReadFile(filepath.Join(dst, n))
					want, _ := os.ReadFile(filepath.Join(tree, n))
					if !bytes.Equal(got, want) {
						t.Errorf("%s: %d bytes, want %d", n, len(got), len(want))
					}
				}
			}
			filepath.WalkDir(dst, func(p string, de os.DirEntry, err error) error {
				if strings.HasSuffix(p, ".part") {
					t.Errorf("stray %s", p)
				}
				return nil
			})
		})
	}
}
