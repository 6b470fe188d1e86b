package main

import (
	"testing"
	"time"
)

// TestMeanCPU: the mean of the rounds' CPU times and its standard error
// (the sample deviation over the square root of the count).
func TestMeanCPU(t *testing.T) {
	ms := []measure{{cpu: time.Second}, {cpu: 2 * time.Second}, {cpu: 3 * time.Second}}
	mean, se := meanCPU(ms)
	if mean != 2*time.Second {
		t.Errorf("mean %v, want 2s", mean)
	}
	if want := 577350269 * time.Nanosecond; se < want-time.Microsecond || se > want+time.Microsecond {
		t.Errorf("standard error %v, want %v", se, want)
	}
	if mean, se := meanCPU(ms[:1]); mean != time.Second || se != 0 {
		t.Errorf("one round: %v ± %v", mean, se)
	}
	if mean, se := meanCPU(nil); mean != 0 || se != 0 {
		t.Errorf("no rounds: %v ± %v", mean, se)
	}
}
