package main

import (
	"errors"
	"io"
	nethttp "net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestXattr: --xattr writes the file's origin, without the password of
// the URL, and its media type, as curl --xattr does.
func TestXattr(t *testing.T) {
	s := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		io.WriteString(w, "a,b\n")
	}))
	defer s.Close()
	dir := t.TempDir()
	probe := filepath.Join(dir, "probe")
	os.WriteFile(probe, nil, 0o644)
	if err := unix.Setxattr(probe, "user.probe", []byte("x"), 0); errors.Is(err, unix.ENOTSUP) {
		t.Skip("this file system keeps no user attributes")
	}
	target := filepath.Join(dir, "data.csv")
	u := strings.Replace(s.URL, "http://", "http://alice:secret@", 1) + "/data.csv"
	r := runDeref(t, "", "--xattr", "-o", target, u)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for name, want := range map[string]string{"user.xdg.origin.url": s.URL + "/data.csv", "user.mime_type": "text/csv"} {
		buf := make([]byte, 256)
		n, err := unix.Getxattr(target, name, buf)
		if err != nil || string(buf[:n]) != want {
			t.Errorf("%s: %q %v, want %q", name, buf[:n], err, want)
		}
	}
}
