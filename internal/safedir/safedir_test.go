package safedir

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

func TestWriteTimeRename(t *testing.T) {
	dir := t.TempDir()
	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	f, err := d.OpenFile("a.part", os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	mtime := time.Date(2020, 1, 2, 3, 4, 5, 600, time.UTC)
	if err := d.SetTimes(f, "a.part", time.Now(), mtime); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Rename("a.part", "a"); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, "a"))
	if err != nil {
		t.Fatal(err)
	}
	if !st.ModTime().Equal(mtime) || st.Size() != 5 {
		t.Errorf("a: %d bytes at %v, want 5 at %v", st.Size(), st.ModTime(), mtime)
	}
	if size, regular, err := d.Stat("a"); err != nil || !regular || size != 5 {
		t.Errorf("Stat(a) = %d, %v, %v", size, regular, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.part")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a.part after the rename: %v", err)
	}
}

// TestNoWayOut: names of more than one element are refused before any
// system call, and a symbolic link at the name is never followed, even
// one that points inside the folder.
func TestNoWayOut(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "dst")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(base, "outside")
	if err := os.WriteFile(outside, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Skip(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "in"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("in", filepath.Join(dir, "toin")); err != nil {
		t.Fatal(err)
	}
	d, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	// Every name, if it were let through, would land in base: never
	// anything of the machine's own.
	for _, name := range []string{"../outside", outside, "a/b", "..", ".", "", "nul\x00"} {
		if f, err := d.OpenFile(name, os.O_CREATE|os.O_TRUNC, 0o644); !errors.Is(err, ErrName) {
			t.Errorf("OpenFile(%q): %v, want ErrName", name, err)
			if f != nil {
				f.Close()
			}
		}
		if err := d.Rename("in", name); !errors.Is(err, ErrName) {
			t.Errorf("Rename(in, %q): %v, want ErrName", name, err)
		}
	}
	for _, name := range []string{"out", "toin"} {
		f, err := d.OpenFile(name, os.O_CREATE|os.O_TRUNC, 0o644)
		if err == nil {
			f.Write([]byte("written"))
			f.Close()
			t.Errorf("OpenFile(%q) followed the link", name)
		}
		if _, regular, err := d.Stat(name); err != nil || regular {
			t.Errorf("Stat(%q): regular %v, %v; want a link, not followed", name, regular, err)
		}
		if _, regular, err := d.ModTime(name); err != nil || regular {
			t.Errorf("ModTime(%q): regular %v, %v; want a link, not followed", name, regular, err)
		}
		if name == "out" { // a link out of the folder is never read through
			if f, err := d.Open(name); err == nil {
				b, _ := io.ReadAll(f)
				f.Close()
				if runtime.GOOS == "linux" || string(b) == "keep" {
					t.Errorf("Open(%q) read %q through the link", name, b)
				}
			}
		}
	}
	for _, name := range []string{"../outside", outside, "a/b", ".."} {
		if f, err := d.Open(name); !errors.Is(err, ErrName) {
			t.Errorf("Open(%q): %v, want ErrName", name, err)
			if f != nil {
				f.Close()
			}
		}
	}
	if f, err := d.Open("in"); err != nil {
		t.Error(err)
	} else {
		b, _ := io.ReadAll(f)
		f.Close()
		if string(b) != "keep" {
			t.Errorf("in: %q", b)
		}
	}
	for _, p := range []string{outside, filepath.Join(dir, "in")} {
		if b, _ := os.ReadFile(p); string(b) != "keep" {
			t.Errorf("%s now holds %q", p, b)
		}
	}
}

func TestOpenInStaysInRoot(t *testing.T) {
	base := t.TempDir()
	if err := os.MkdirAll(filepath.Join(base, "dst", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(filepath.Join(base, "dst"))
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if _, err := OpenIn(root, ".."); err == nil {
		t.Error("OpenIn(root, ..) opened a folder outside the root")
	}
	d, err := OpenIn(root, "sub")
	if err != nil {
		t.Fatal(err)
	}
	f, err := d.OpenFile("x", os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	d.Close()
	if _, err := os.Stat(filepath.Join(base, "dst", "sub", "x")); err != nil {
		t.Error(err)
	}
}
