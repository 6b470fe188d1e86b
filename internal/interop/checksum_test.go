//go:build interop

package interop

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/urlderef/deref/fetch/mirror"
)

// TestMirrorChecksum mirrors proftpd's pub folder (mod_digest answers
// HASH), then compares by digest: every file is unchanged by its SHA-256;
// a local file changed without a change of size or time is fetched again.
// vsftpd cannot hash: the run says so once, and size and time decide.
func TestMirrorChecksum(t *testing.T) {
	ftp := ftpServers(t)
	tree := filepath.Join(env(t, "DEREF_INTEROP_TREE"), "pub")
	files := treeFiles(t, tree)
	for _, name := range []string{"proftpd", "vsftpd"} {
		t.Run(name, func(t *testing.T) {
			src := ftp[name] + "/pub/"
			dst := t.TempDir()
			if _, err := mirror.Run(context.Background(), client(), src, dst, mirror.Options{}); err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			reasons := map[string]string{}
			var notes []string
			o := mirror.Options{OnlyNewer: true, Checksum: true, Events: func(ev mirror.Event) {
				mu.Lock()
				defer mu.Unlock()
				switch {
				case ev.Type == mirror.EventNote:
					notes = append(notes, ev.Reason)
				case ev.Type == mirror.EventDone:
					reasons[ev.Path] = ev.Action.String() + ": " + ev.Reason
				}
			}}
			rep, err := mirror.Run(context.Background(), client(), src, dst, o)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Unchanged != len(files) || rep.New+rep.Updated != 0 {
				t.Errorf("second run: %+v", rep)
			}
			want := "unchanged: same sha256 digest"
			if name == "vsftpd" {
				want = "unchanged: same size and time"
				if len(notes) != 1 || !strings.Contains(notes[0], "cannot tell digests") {
					t.Errorf("notes %q", notes)
				}
			} else if len(notes) != 0 {
				t.Errorf("notes %q", notes)
			}
			for _, rel := range files {
				if reasons[rel] != want {
					t.Errorf("%s: %q, want %q", rel, reasons[rel], want)
				}
			}
			// The same size and time, other bytes.
			p := filepath.Join(dst, "nested", "sibling.txt")
			st, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(p)
			for i := range b {
				b[i] = 'x'
			}
			os.WriteFile(p, b, 0o644)
			os.Chtimes(p, st.ModTime(), st.ModTime())
			rep, err = mirror.Run(context.Background(), client(), src, dst, mirror.Options{OnlyNewer: true, Checksum: true})
			if err != nil {
				t.Fatal(err)
			}
			if name == "proftpd" && (rep.Updated != 1 || len(rep.Items) != 1 || rep.Items[0].Path != "nested/sibling.txt") {
				t.Errorf("a changed local file: %+v", rep)
			}
			if name == "vsftpd" && rep.Updated != 0 {
				t.Errorf("size and time say unchanged: %+v", rep)
			}
		})
	}
}
