package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/urlderef/deref/fetch"
)

// progressLine draws one line on a terminal: bytes, rate and time left.
type progressLine struct {
	w    io.Writer
	mu   sync.Mutex
	last time.Time
	open bool // a line is drawn and not ended
}

// endLine ends a line drawn and not finished, so that what is written
// next starts on a fresh line.
func (p *progressLine) endLine() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.open {
		fmt.Fprintln(p.w)
		p.open = false
	}
}

func newProgressLine(w io.Writer) *progressLine { return &progressLine{w: w} }

func (p *progressLine) update(ev fetch.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if !ev.Done && now.Sub(p.last) < 200*time.Millisecond {
		return
	}
	p.last = now
	elapsed := now.Sub(ev.Start).Seconds()
	rate := 0.0
	if elapsed > 0 {
		rate = float64(ev.Bytes) / elapsed
	}
	// The whole object, what a resumed download had already included, as
	// curl's and wget's bars show it; the rate and the time left are this
	// transfer's.
	line := humanBytes(float64(ev.Offset + ev.Bytes))
	if ev.Total > 0 {
		whole := ev.Offset + ev.Total
		line += fmt.Sprintf(" of %s (%d%%)", humanBytes(float64(whole)), (ev.Offset+ev.Bytes)*100/whole)
	}
	line += fmt.Sprintf("  %s/s", humanBytes(rate))
	if ev.Total > 0 && rate > 0 && !ev.Done {
		left := time.Duration(float64(ev.Total-ev.Bytes) / rate * float64(time.Second))
		line += "  " + left.Round(time.Second).String() + " left"
	}
	fmt.Fprintf(p.w, "\r\033[K%s", line)
	p.open = !ev.Done
	if ev.Done {
		fmt.Fprintln(p.w)
	}
}

func humanBytes(n float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for n >= 1024 && i < len(units)-1 {
		n /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f %s", n, units[i])
	}
	return fmt.Sprintf("%.1f %s", n, units[i])
}
