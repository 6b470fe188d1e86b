package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/mirror"
)

func TestProgressLine(t *testing.T) {
	var b bytes.Buffer
	p := newProgressLine(&b)
	start := time.Now().Add(-2 * time.Second)
	p.update(fetch.Progress{Bytes: 512 << 20, Total: 1 << 30, Start: start})
	line := b.String()
	for _, want := range []string{"\r", "512.0 MiB of 1.0 GiB (50%)", "/s", "left"} {
		if !strings.Contains(line, want) {
			t.Errorf("progress line %q lacks %q", line, want)
		}
	}
	b.Reset()
	p.update(fetch.Progress{Bytes: 100, Total: 1000, Start: start})
	if b.Len() != 0 {
		t.Errorf("a second update within 200ms drew %q", b.String())
	}
	p.update(fetch.Progress{Bytes: 1 << 30, Total: 1 << 30, Start: start, Done: true})
	if !strings.HasSuffix(b.String(), "\n") || strings.Contains(b.String(), "left") {
		t.Errorf("final line %q", b.String())
	}
}

// TestEndLine: an error after a progress line that did not finish starts
// on a fresh line; after a finished one, no blank line is added.
func TestEndLine(t *testing.T) {
	var b bytes.Buffer
	p := newProgressLine(&b)
	p.update(fetch.Progress{Bytes: 1, Total: 10, Start: time.Now()})
	p.endLine()
	if !strings.HasSuffix(b.String(), "\n") {
		t.Errorf("open line not ended: %q", b.String())
	}
	b.Reset()
	p.endLine()
	if b.Len() != 0 {
		t.Errorf("ended twice: %q", b.String())
	}
	p.last = time.Time{}
	p.update(fetch.Progress{Bytes: 10, Total: 10, Start: time.Now(), Done: true})
	b.Reset()
	p.endLine()
	if b.Len() != 0 {
		t.Errorf("a finished line got another newline: %q", b.String())
	}
}

// TestBarsHidePasswords: a bar named by a URL (deref -O --parallel) shows
// it without its password.
func TestBarsHidePasswords(t *testing.T) {
	var out syncBuffer
	b := newBarSet(context.Background(), &out)
	name := "ftp://alice:s3cret@h.example/f.bin"
	b.event(mirror.Event{Type: mirror.EventStart, Path: name, Size: 10})
	b.event(mirror.Event{Type: mirror.EventProgress, Path: name, Bytes: 10})
	b.finish(name, nil)
	b.wait()
	if s := out.String(); strings.Contains(s, "s3cret") || !strings.Contains(s, "xxxxx@h.example/f.bin") {
		t.Errorf("bars: %q", s)
	}
}

// TestBarsEndBelowTotal: a transfer that ends, without error, short of
// the size announced at its start (a listing's size that was not the
// size sent) does not keep the bars from ending; they used to wait for
// ever at the end of the run.
func TestBarsEndBelowTotal(t *testing.T) {
	var out syncBuffer
	b := newBarSet(context.Background(), &out)
	b.event(mirror.Event{Type: mirror.EventStart, Path: "f", Size: 10})
	b.event(mirror.Event{Type: mirror.EventProgress, Path: "f", Bytes: 5})
	b.finish("f", nil)
	done := make(chan struct{})
	go func() { b.wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the bars did not end")
	}
	if s := out.String(); !strings.Contains(s, "total 1 files") {
		t.Errorf("bars: %q", s)
	}
}
