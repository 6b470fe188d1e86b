package mirror_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/mirror"
	"github.com/urlderef/deref/internal/testserver"
)

// BenchmarkMirrorFTP mirrors a folder of 200 small files from the
// in-process FTP server, the shape of an archive of many small files.
func BenchmarkMirrorFTP(b *testing.B) {
	root := b.TempDir()
	for i := range 200 {
		os.WriteFile(filepath.Join(root, fmt.Sprintf("f%03d.txt", i)), []byte(fmt.Sprintf("file %d\n", i)), 0o644)
	}
	src := serveFTP(b, root)
	c := fetch.NewClient()
	b.ReportAllocs()
	for b.Loop() {
		dst := b.TempDir()
		rep, err := mirror.Run(context.Background(), c, src, dst, mirror.Options{})
		if err != nil || rep.New != 200 {
			b.Fatalf("%v %+v", err, rep)
		}
	}
}

// BenchmarkMirrorFileSize mirrors one file of growing size over FTP:
// bytes and allocations per run stay flat, the file is streamed.
func BenchmarkMirrorFileSize(b *testing.B) {
	for _, size := range []int64{1 << 20, 16 << 20, 128 << 20} {
		b.Run(fmt.Sprintf("%dMiB", size>>20), func(b *testing.B) {
			root := b.TempDir()
			f, _ := os.Create(filepath.Join(root, "big.bin"))
			f.Truncate(size)
			f.Close()
			src := serveFTP(b, root)
			c := fetch.NewClient()
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				rep, err := mirror.Run(context.Background(), c, src, b.TempDir(), mirror.Options{})
				if err != nil || rep.Bytes != size {
					b.Fatalf("%v %+v", err, rep)
				}
			}
		})
	}
}

// TestMirrorTreeChild is the mirror BenchmarkMirrorTree times in a
// process of its own; it does nothing unless started by it.
func TestMirrorTreeChild(t *testing.T) {
	src, dst := os.Getenv("DEREF_TREE_SRC"), os.Getenv("DEREF_TREE_DST")
	if src == "" {
		t.Skip("run by BenchmarkMirrorTree")
	}
	rep, err := mirror.Run(context.Background(), fetch.NewClient(), src, dst, mirror.Options{OnlyNewer: true, FailuresOnly: true})
	if err != nil || rep.Failed > 0 {
		t.Fatalf("%v %+v", err, rep)
	}
}

// BenchmarkMirrorTree mirrors a tree of empty files, 100 a folder
// (DEREF_BENCH_TREE files, 200,000 by default; DEREF_BENCH_DIR the
// folder to write it in, a tmpfs say), with deref mirror's library in a
// process of its own, then again where nothing changed: peak-RSS-MiB is
// that process's peak resident memory, which the largest folder bounds,
// not the tree; s/100k-files the time per 100,000 files.
func BenchmarkMirrorTree(b *testing.B) {
	files := 200_000
	if s := os.Getenv("DEREF_BENCH_TREE"); s != "" {
		files, _ = strconv.Atoi(s)
	}
	base := os.Getenv("DEREF_BENCH_DIR")
	if base == "" {
		base = b.TempDir()
	}
	root, err := os.MkdirTemp(base, "tree")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(root)
	for d := range files / 100 {
		dir := filepath.Join(root, "src", fmt.Sprintf("d%05d", d))
		os.MkdirAll(dir, 0o755)
		for f := range 100 {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d", f)), nil, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	for range b.N {
		dst := filepath.Join(root, "dst")
		os.RemoveAll(dst)
		for _, run := range []string{"first", "rerun"} {
			begin := time.Now()
			cmd := exec.Command(os.Args[0], "-test.run=^TestMirrorTreeChild$")
			cmd.Env = append(os.Environ(), "DEREF_TREE_SRC=file://"+filepath.ToSlash(filepath.Join(root, "src"))+"/", "DEREF_TREE_DST="+dst)
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
			b.ReportMetric(time.Since(begin).Seconds()*100_000/float64(files), run+"-s/100k-files")
			if rss := testserver.MaxRSS(cmd.ProcessState); rss > 0 {
				b.ReportMetric(float64(rss)/(1<<20), run+"-peak-RSS-MiB")
			}
		}
	}
}
