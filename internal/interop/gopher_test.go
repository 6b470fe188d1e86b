//go:build interop

package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/urlderef/deref/fetch"
)

func gopherServers(t *testing.T) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Fields(env(t, "DEREF_INTEROP_GOPHER")) {
		name, u, _ := strings.Cut(kv, "=")
		out[name] = u
	}
	return out
}

// TestGopher fetches menus, text and binary items from pygopherd and
// gophernicus and compares them with the tree.
func TestGopher(t *testing.T) {
	root := env(t, "DEREF_INTEROP_TREE")
	for name, base := range gopherServers(t) {
		t.Run(name, func(t *testing.T) {
			c := client()
			_, resp, err := read(t, c, base+"/1/pub/")
			if name == "pygopherd" {
				_, resp, err = read(t, c, base+"/1/pub")
			}
			if err != nil {
				t.Fatal(err)
			}
			files := map[string]string{}
			for _, e := range resp.Entries {
				if e.URL != "" {
					files[e.URL] = e.Type
				}
			}
			if len(files) < 5 {
				t.Fatalf("menu of /pub: %+v", resp.Entries)
			}
			// Every file item of the menu, fetched by its URL, is the file.
			checked := 0
			for u, typ := range files {
				if typ[0] != '0' && typ[0] != '9' {
					continue
				}
				rel := strings.TrimPrefix(u, base+"/"+typ[:1]+"/")
				want, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(strings.ReplaceAll(rel, "%20", " "))))
				if err != nil {
					continue // a name the server rewrote (gophernicus's #045): not comparable by path
				}
				got, _, err := read(t, c, u)
				if typ[0] == '0' {
					want = bytes.ReplaceAll(want, []byte("\r\n"), []byte("\n"))
				}
				if err != nil || !bytes.Equal(got, want) {
					t.Errorf("%s: %d bytes, %v (want %d)", u, len(got), err, len(want))
				}
				checked++
			}
			if checked < 4 {
				t.Errorf("only %d items compared: %v", checked, files)
			}
			// The search engine (type 7) with a query.
			_, resp, err = read(t, c, base+"/7/cgi-bin/search%09hello%20world")
			if err != nil {
				t.Fatalf("search: %v", err)
			}
			found := false
			for _, e := range resp.Entries {
				if e.Kind == fetch.KindInfo && strings.Contains(e.Name, "results for hello world") {
					found = true
				}
			}
			if !found {
				t.Errorf("search results: %+v", resp.Entries)
			}
			// The binary item, by sha256.
			got, _, err := read(t, c, base+"/9/pub/random.bin")
			want, _ := os.ReadFile(filepath.Join(root, "pub/random.bin"))
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("random.bin: %d bytes, %v", len(got), err)
			}
		})
	}
}

// TestGopherPlus speaks Gopher+ to pygopherd: the default view with its
// length header, attributes of an item and of a directory, and errors.
func TestGopherPlus(t *testing.T) {
	base := gopherServers(t)["pygopherd"]
	root := env(t, "DEREF_INTEROP_TREE")
	c := client()
	got, resp, err := read(t, c, base+"/0/hello.txt%09%09+")
	if err != nil {
		t.Fatalf("Gopher+ view: %v", err)
	}
	want, _ := os.ReadFile(filepath.Join(root, "hello.txt"))
	if !bytes.Equal(got, want) || resp.Size != int64(len(want)) {
		t.Errorf("Gopher+ view: %q size %d, %v", got, resp.Size, err)
	}
	got, _, err = read(t, c, base+"/9/pub/random.bin%09%09+")
	want, _ = os.ReadFile(filepath.Join(root, "pub/random.bin"))
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("Gopher+ binary: %d bytes, %v", len(got), err)
	}
	_, resp, err = read(t, c, base+"/0/hello.txt%09%09!")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, a := range resp.Attributes {
		names[a.Name] = true
	}
	if !names["INFO"] || !names["ADMIN"] || !names["VIEWS"] {
		t.Errorf("attributes of hello.txt: %+v", resp.Attributes)
	}
	_, resp, err = read(t, c, base+"/1/pub%09%09$")
	if err != nil {
		t.Errorf("attributes of /pub: %v", err)
	} else if len(resp.Attributes) < 10 {
		t.Errorf("attributes of /pub: only %d", len(resp.Attributes))
	}
	// deref -I asks a Gopher+ server for the size and the attributes.
	bin := filepath.Join(t.TempDir(), "deref")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/deref").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--no-netrc", "-I", base+"/0/hello.txt").CombinedOutput()
	want, _ = os.ReadFile(filepath.Join(root, "hello.txt"))
	for _, line := range []string{fmt.Sprintf("Content-Length: %d\r\n", len(want)), "Last-Modified: Thu, 02 Jan 2020 03:04:05 GMT\r\n"} {
		if err != nil || !strings.Contains(string(out), line) {
			t.Errorf("deref -I lacks %q: %s %v", line, out, err)
		}
	}
	// Header lines only, as curl -I: the attributes are -I --json's.
	for _, l := range strings.Split(strings.TrimRight(string(out), "\r\n"), "\r\n") {
		if k, _, ok := strings.Cut(l, ": "); !ok || strings.HasPrefix(k, "+") || strings.HasPrefix(k, " ") {
			t.Errorf("deref -I prints a line that is no header line: %q", l)
		}
	}
	out, err = exec.Command(bin, "--no-netrc", "-I", "--json", base+"/0/hello.txt").CombinedOutput()
	var meta struct {
		Attributes []struct {
			Name  string
			Lines []string
		}
	}
	if err != nil || json.Unmarshal(out, &meta) != nil || !slices.ContainsFunc(meta.Attributes, func(a struct {
		Name  string
		Lines []string
	}) bool {
		return a.Name == "VIEWS" && len(a.Lines) > 0 && strings.Contains(a.Lines[0], "text/plain")
	}) {
		t.Errorf("deref -I --json: %v %s", err, out)
	}
	if _, _, err := read(t, c, base+"/0/nope%09%09+"); !errors.Is(err, fetch.ErrNotFound) {
		t.Errorf("Gopher+ missing item: %v", err)
	}
	if _, _, err := read(t, c, base+"/0/nope"); !errors.Is(err, fetch.ErrNotFound) {
		t.Errorf("plain missing item: %v", err)
	}
}

// TestGopherNotFound: a selector the server does not have is ErrNotFound,
// from each server's own way of saying so: pygopherd's type 3 menu line,
// gophernicus' "Error: File or directory not found!" text.
func TestGopherNotFound(t *testing.T) {
	for name, base := range gopherServers(t) {
		_, err := client().Get(context.Background(), base+"/1/no-such-folder")
		if !errors.Is(err, fetch.ErrNotFound) {
			t.Errorf("%s: a missing menu: %v", name, err)
		}
	}
}
