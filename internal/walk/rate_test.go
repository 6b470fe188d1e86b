package walk

import (
	"bytes"
	"context"
	"io"
	"testing"
)

// RateReader reads no more than a burst at once, and all of the body;
// a rate of 0 wraps nothing.
func TestRateReader(t *testing.T) {
	if NewLimiter(0) != nil {
		t.Error("a limiter for no limit")
	}
	l := NewLimiter(1 << 30) // a burst of 64 KiB, tokens plenty
	if l.Burst() != 64<<10 {
		t.Errorf("burst %d", l.Burst())
	}
	body := bytes.Repeat([]byte("x"), 1<<20)
	r := RateReader(context.Background(), bytes.NewReader(body), l)
	buf := make([]byte, 1<<20)
	n, err := r.Read(buf)
	if n != 64<<10 || err != nil {
		t.Errorf("first read: %d, %v", n, err)
	}
	rest, err := io.ReadAll(r)
	if err != nil || n+len(rest) != len(body) {
		t.Errorf("read %d in all, %v", n+len(rest), err)
	}
	if small := NewLimiter(100); small.Burst() != 12 {
		t.Errorf("burst of 100 B/s: %d", small.Burst())
	}
}
