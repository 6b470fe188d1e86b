//go:build interop

package interop

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/url"
)

// ftpServers returns name -> base URL of the FTP daemons started.
func ftpServers(t *testing.T) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Fields(env(t, "DEREF_INTEROP_FTP")) {
		name, u, _ := strings.Cut(kv, "=")
		out[name] = u
	}
	return out
}

func read(t *testing.T, c *fetch.Client, u string) ([]byte, *fetch.Response, error) {
	t.Helper()
	resp, err := c.Get(context.Background(), u)
	if err != nil {
		return nil, nil, err
	}
	b, err := io.ReadAll(resp.Body)
	if cerr := resp.Body.Close(); err == nil {
		err = cerr
	}
	return b, resp, err
}

// head fetches the metadata of u only (deref -I).
func head(c *fetch.Client, u string) (*fetch.Response, error) {
	pu, err := url.Parse(u)
	if err != nil {
		return nil, err
	}
	return c.FetchWith(context.Background(), pu, fetch.FetchOptions{HeadOnly: true})
}

// TestFTPFiles fetches every file of the tree from each FTP daemon in
// binary mode and compares sha256; text files are fetched again with the
// type chosen from the name and compared with CRLF read as LF.
func TestFTPFiles(t *testing.T) {
	root := env(t, "DEREF_INTEROP_TREE")
	for name, base := range ftpServers(t) {
		t.Run(name, func(t *testing.T) {
			c := client()
			for _, rel := range treeFiles(t, root) {
				if strings.HasPrefix(rel, "home/") {
					continue
				}
				want, _ := os.ReadFile(filepath.Join(root, rel))
				got, resp, err := read(t, c, base+"/"+urlPath(rel)+";type=i")
				if err != nil || !bytes.Equal(got, want) {
					t.Errorf("%s (binary): %d bytes, %v", rel, len(got), err)
					continue
				}
				// Once the server's 150 replies have named sizes, SIZE is no
				// longer asked; proftpd names none for an empty file, whose
				// size is then unknown until read.
				sizeOK := resp.Size == int64(len(want)) || name == "proftpd" && len(want) == 0 && resp.Size == -1
				if !sizeOK || !resp.ModTime.Equal(modTime) {
					t.Errorf("%s: size %d, modified %v", rel, resp.Size, resp.ModTime)
				}
				if strings.HasSuffix(rel, ".txt") {
					got, _, err := read(t, c, base+"/"+urlPath(rel))
					norm := bytes.ReplaceAll(want, []byte("\r\n"), []byte("\n"))
					if err != nil || !bytes.Equal(got, norm) {
						t.Errorf("%s (text): %q, %v", rel, got, err)
					}
				}
			}
			// Download: spliced into the file.
			dir := t.TempDir()
			p, err := c.Download(context.Background(), base+"/pub/random.bin", dir)
			if err != nil || fileSum(t, p, 0) != fileSum(t, filepath.Join(root, "pub/random.bin"), 0) {
				t.Errorf("download random.bin: %v", err)
			}
			// Resume with REST.
			resp, err := c.Fetch(context.Background(), url.MustParse(base+"/pub/random.bin"), 2000000)
			if err != nil {
				t.Fatal(err)
			}
			s, _, err := sum(resp.Body)
			resp.Body.Close()
			if err != nil || s != fileSum(t, filepath.Join(root, "pub/random.bin"), 2000000) {
				t.Errorf("resume: %v", err)
			}
		})
	}
}

func TestFTPLoginsListingsErrors(t *testing.T) {
	for name, base := range ftpServers(t) {
		t.Run(name, func(t *testing.T) {
			c := client()
			hostport := strings.TrimPrefix(base, "ftp://")
			// alice logs in to /home/alice: a relative and an absolute path.
			for _, u := range []string{"ftp://alice:secret@" + hostport + "/alice.txt", "ftp://alice:secret@" + hostport + "/%2Fhome/alice/alice.txt"} {
				got, _, err := read(t, c, u)
				if err != nil || string(got) != "alice's own file\n" {
					t.Errorf("%s: %q, %v", u, got, err)
				}
			}
			if _, _, err := read(t, c, "ftp://alice:wrong@"+hostport+"/alice.txt"); !errors.Is(err, fetch.ErrAuth) || strings.Contains(err.Error(), "wrong") {
				t.Errorf("wrong password: %v", err)
			}
			if _, _, err := read(t, c, base+"/pub/nope.txt"); !errors.Is(err, fetch.ErrNotFound) {
				t.Errorf("missing file: %v", err)
			}
			if _, _, err := read(t, c, base+"/nodir/x.txt"); !errors.Is(err, fetch.ErrNotFound) {
				t.Errorf("missing folder: %v", err)
			}
			// Metadata only (-I): a missing file and a folder named as a
			// file are not found, as RETR would find them; a file is.
			for _, p := range []string{"/pub/nope.txt", "/pub/nested"} {
				if resp, err := head(c, base+p); !errors.Is(err, fetch.ErrNotFound) {
					t.Errorf("metadata of %s: %v (%+v), want not found", p, err, resp)
				}
			}
			if resp, err := head(c, base+"/pub/README.txt"); err != nil || resp.Size != 369 {
				t.Errorf("metadata of README.txt: %v, %+v", err, resp)
			} else {
				resp.Body.Close()
			}
			// An empty segment sends CWD with an empty argument; these
			// servers refuse it, and nothing else is fetched instead.
			if got, _, err := read(t, c, base+"//pub/README.txt"); err == nil {
				t.Errorf("//pub/README.txt fetched %q", got)
			}
			// The listing: entries parsed, names with spaces and ";" intact.
			_, resp, err := read(t, c, base+"/pub/")
			if err != nil {
				t.Fatal(err)
			}
			kinds := map[string]fetch.Kind{}
			for _, e := range resp.Entries {
				kinds[e.Name] = e.Kind
			}
			for n, k := range map[string]fetch.Kind{"README.txt": fetch.KindFile, "with space.txt": fetch.KindFile, "semi;colon.txt": fetch.KindFile, "nested": fetch.KindDirectory, "random.bin": fetch.KindFile} {
				if kinds[n] != k {
					t.Errorf("listing: %q is %v (entries %v)", n, kinds[n], kinds)
				}
			}
			for _, e := range resp.Entries {
				if e.Kind == fetch.KindFile {
					if _, _, err := read(t, c, e.URL+";type=i"); err != nil {
						t.Errorf("entry %s: %v", e.URL, err)
					}
				}
			}
			// ;type=d: NLST.
			_, resp, err = read(t, c, base+"/pub/nested;type=d")
			if err != nil {
				t.Fatal(err)
			}
			names := map[string]bool{}
			for _, e := range resp.Entries {
				names[e.Name] = true
			}
			if !names["sibling.txt"] || !names["deeper"] || names["."] {
				t.Errorf("NLST entries %v", names)
			}
		})
	}
}

// TestFTPModTimes asks vsftpd and proftpd for the times of the pub
// folder's files with MDTM pipelined on one connection, and compares them
// with the files' own times, to the second.
func TestFTPModTimes(t *testing.T) {
	tree := filepath.Join(env(t, "DEREF_INTEROP_TREE"), "pub")
	des, err := os.ReadDir(tree)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	want := map[string]time.Time{}
	for _, de := range des {
		if de.Type().IsRegular() {
			info, err := de.Info()
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, de.Name())
			want[de.Name()] = info.ModTime().Truncate(time.Second)
		}
	}
	names = append(names, "no-such-file", "nested") // no time: left out
	for name, base := range ftpServers(t) {
		t.Run(name, func(t *testing.T) {
			u, err := url.Parse(base + "/pub/")
			if err != nil {
				t.Fatal(err)
			}
			got, err := client().ModTimes(context.Background(), u, names)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Errorf("%d times for %d files: %v", len(got), len(want), got)
			}
			for n, w := range want {
				if g := got[n]; !g.Truncate(time.Second).Equal(w) {
					t.Errorf("%s: %v, want %v", n, g, w)
				}
			}
		})
	}
}
