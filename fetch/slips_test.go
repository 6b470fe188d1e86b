package fetch_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/url"
)

// A Wait given is waited exactly, doubling (curl's --retry-delay never
// waits less than asked); the default's waits are never under one
// second, doubling, with at most a quarter more.
func TestRetryWaits(t *testing.T) {
	fail := func() error { return fmt.Errorf("%w: try again", fetch.ErrTemporary) }
	var waits []time.Duration
	note := func(_ error, d time.Duration) { waits = append(waits, d) }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fetch.Retry{Attempts: 3, Wait: time.Millisecond}.Do(ctx, fail, note)
	if want := []time.Duration{time.Millisecond, 2 * time.Millisecond, 4 * time.Millisecond}; fmt.Sprint(waits) != fmt.Sprint(want) {
		t.Errorf("waits %v, want %v", waits, want)
	}
	// The default's waits, noted and then cut short.
	for range 50 {
		waits = nil
		first := true
		fetch.Retry{Attempts: 1}.Do(ctx, fail, func(err error, d time.Duration) {
			note(err, d)
			if first {
				first = false
				cancel()
			}
		})
		if len(waits) != 1 || waits[0] < time.Second || waits[0] > 1250*time.Millisecond {
			t.Fatalf("default first wait %v, want 1 s to 1.25 s", waits)
		}
		ctx, cancel = context.WithCancel(context.Background())
	}
	cancel()
}

// A transfer's own Progress runs before the Client's: a rate limit that
// holds the transfer back there makes the Client's progress see the
// bytes at the pace let through (deref --limit-rate's first progress
// line showed the first read's burst, 54.8 MiB/s under a 4 MiB/s limit).
func TestProgressOrder(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "f"), []byte(strings.Repeat("x", 100_000)), 0o644)
	c := fetch.NewClient()
	var order []string
	c.Progress = func(p fetch.Progress) { order = append(order, "client") }
	resp, err := c.FetchWith(context.Background(), url.MustParse("file://"+filepath.ToSlash(dir)+"/f"), fetch.FetchOptions{
		Progress: func(p fetch.Progress) { order = append(order, "own") },
	})
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if len(order) < 2 || order[0] != "own" || order[1] != "client" {
		t.Errorf("order %v", order)
	}
}
