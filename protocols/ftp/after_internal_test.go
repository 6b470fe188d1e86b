package ftp

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestAfter: a watch stopped before its delay never starts; one stopped
// after it has started is stopped once, and the stop waits for it.
func TestAfter(t *testing.T) {
	var starts, stops atomic.Int32
	start := func() func() {
		starts.Add(1)
		return func() { stops.Add(1) }
	}
	stop := after(50*time.Millisecond, start)
	stop()
	time.Sleep(100 * time.Millisecond)
	if starts.Load() != 0 || stops.Load() != 0 {
		t.Errorf("stopped before the delay: %d starts, %d stops", starts.Load(), stops.Load())
	}

	stop = after(time.Millisecond, start)
	for deadline := time.Now().Add(5 * time.Second); starts.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	stop()
	if starts.Load() != 1 || stops.Load() != 1 {
		t.Errorf("stopped after the delay: %d starts, %d stops, want 1 and 1", starts.Load(), stops.Load())
	}
}
