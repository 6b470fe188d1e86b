//go:build unix

package fetch_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch"
)

// TestFileFaults: the file: scheme's hostile cases. An endless device
// (/dev/zero) ends at MaxBytes, and a named pipe whose writer stops
// mid-way at the idle time-out, neither leaving a file under its final
// name; a named pipe that no one writes to is read as empty at once,
// rather than holding the retrieval in its open call.
func TestFileFaults(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	stalled := filepath.Join(dir, "stalled")
	syscall.Mkfifo(stalled, 0o600)
	// A writer that sends a little, then nothing, held open (O_RDWR does
	// not wait for a reader) before the retrieval starts.
	w, err := os.OpenFile(stalled, os.O_RDWR, 0)
	if err != nil {
		t.Skip(err)
	}
	defer w.Close()
	w.Write([]byte("the start"))
	c := fetch.NewClient()
	c.IdleTimeout, c.MaxBytes = 500*time.Millisecond, 1<<20
	for _, tt := range []struct {
		path string
		want error
	}{
		{"/dev/zero", fetch.ErrTooLarge},
		{stalled, fetch.ErrTimeout},
		{fifo, nil},
	} {
		out := t.TempDir()
		start := time.Now()
		_, err := c.DownloadWith(context.Background(), "file://"+filepath.ToSlash(tt.path), out, fetch.DownloadOptions{Name: "obj"})
		if !errors.Is(err, tt.want) || tt.want == nil && err != nil {
			t.Errorf("%s: %v, want %v", tt.path, err, tt.want)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: took %v", tt.path, d)
		}
		if st, err := os.Stat(filepath.Join(out, "obj")); tt.want != nil && !errors.Is(err, os.ErrNotExist) || tt.want == nil && (err != nil || st.Size() != 0) {
			t.Errorf("%s: the file under the final name: %v", tt.path, err)
		}
	}
}
