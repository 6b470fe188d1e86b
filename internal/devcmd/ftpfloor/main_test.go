package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urlderef/deref/internal/testserver/ftpd"
)

// TestCopiesFolder has ftpfloor copy a folder from an FTP server written
// independently of deref: every file the same bytes, with the server's
// time, and no NAME.part left.
func TestCopiesFolder(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "pub", "many")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	when := time.Date(2020, 5, 17, 8, 30, 0, 0, time.UTC)
	for i := range 40 {
		name := filepath.Join(src, fmt.Sprintf("f%d.txt", i))
		if err := os.WriteFile(name, bytes.Repeat([]byte{byte('a' + i%26)}, 100*i), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(name, when, when)
	}
	s, err := ftpd.Start(root)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dest := filepath.Join(t.TempDir(), "out")
	if err := run(s.URL()+"pub/many/", dest, 4); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadDir(dest)
	if len(got) != 40 {
		t.Fatalf("%d files in the copy, want 40", len(got))
	}
	for _, e := range got {
		if strings.HasSuffix(e.Name(), ".part") {
			t.Errorf("%s left", e.Name())
			continue
		}
		want, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatalf("%s: not on the server: %v", e.Name(), err)
		}
		have, _ := os.ReadFile(filepath.Join(dest, e.Name()))
		if !bytes.Equal(have, want) {
			t.Errorf("%s: %d bytes, want %d", e.Name(), len(have), len(want))
		}
		if info, _ := e.Info(); !info.ModTime().Equal(when) {
			t.Errorf("%s: time %v, want %v", e.Name(), info.ModTime(), when)
		}
	}
}

// TestNoFolder is the error of a folder the server does not have.
func TestNoFolder(t *testing.T) {
	s, err := ftpd.Start(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	err = run(s.URL()+"none/", t.TempDir(), 2)
	if err == nil || !strings.Contains(err.Error(), "CWD /none") {
		t.Fatalf("err = %v, want the CWD refused", err)
	}
}
