//go:build linux

package xattr

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSet: the attributes written read back as written.
func TestSet(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	os.WriteFile(p, []byte("x"), 0o644)
	err := Set(p, [][2]string{{"user.xdg.origin.url", "http://h/f"}, {"user.mime_type", "text/plain"}})
	if errors.Is(err, unix.ENOTSUP) {
		t.Skip("this file system keeps no user attributes")
	}
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"user.xdg.origin.url": "http://h/f", "user.mime_type": "text/plain"} {
		buf := make([]byte, 64)
		n, err := unix.Getxattr(p, name, buf)
		if err != nil || string(buf[:n]) != want {
			t.Errorf("%s: %q %v", name, buf[:n], err)
		}
	}
	if err := Set(filepath.Join(t.TempDir(), "none"), [][2]string{{"user.a", "b"}}); err == nil {
		t.Error("a file not there took an attribute")
	}
}
