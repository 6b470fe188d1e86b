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

// TestPairedRatios: the median of the rounds' own ratios, which a drift
// common to both tools leaves as it is.
func TestPairedRatios(t *testing.T) {
	a := []measure{{cpu: 1 * time.Second, wall: 2 * time.Second}, {cpu: 3 * time.Second, wall: 4 * time.Second}, {cpu: 10 * time.Second, wall: 10 * time.Second}}
	b := []measure{{cpu: 2 * time.Second, wall: 2 * time.Second}, {cpu: 6 * time.Second, wall: 2 * time.Second}, {cpu: 10 * time.Second, wall: 20 * time.Second}}
	if cpu, wall := pairedRatios(a, b); cpu != 0.5 || wall != 1 {
		t.Errorf("pairedRatios = %v, %v; want 0.5, 1", cpu, wall)
	}
	if cpu, wall := pairedRatios(a[:2], b[:2]); cpu != 0.5 || wall != 1.5 {
		t.Errorf("two rounds: %v, %v; want 0.5, 1.5", cpu, wall)
	}
}
