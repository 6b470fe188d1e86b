package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// archiveCost times a deref command without and with --warc-file, the
// two taking turns round by round (which goes first alternating), and
// prints the median of the rounds' ratios (with, over without) with a
// 95% bootstrap interval of that median: on a machine whose load drifts,
// a ratio within a round is steadier than a ratio of two medians taken
// apart. argv gives the command with its WARC file's name, or without an
// archive when warc is "", writing what it writes under dir.
func archiveCost(what string, runs int, tmp string, argv func(dir, warc string) []string) {
	var without, with []measure
	var ratios []float64
	fmt.Printf("the archive's cost: %s (%d rounds)\n", what, runs)
	for round := range runs {
		var pair [2]measure // without, with
		for i := range 2 {
			archive := (i+round)%2 == 1
			dir := filepath.Join(tmp, fmt.Sprintf("cost-%d-%t", round, archive))
			check(os.MkdirAll(dir, 0o755))
			warc := ""
			if archive {
				warc = filepath.Join(dir, "cost")
			}
			syncDisks()
			m, err := runOnce(argv(dir, warc))
			if err != nil {
				fatal("%s: %v", what, err)
			}
			os.RemoveAll(dir)
			if archive {
				pair[1] = m
			} else {
				pair[0] = m
			}
		}
		without, with = append(without, pair[0]), append(with, pair[1])
		ratios = append(ratios, pair[1].wall.Seconds()/pair[0].wall.Seconds())
	}
	a, b := median(without), median(with)
	fmt.Printf("without --warc-file %9s wall %9s cpu %8d KiB\n", a.wall.Round(time.Millisecond), a.cpu.Round(time.Millisecond), a.rss)
	fmt.Printf("with --warc-file    %9s wall %9s cpu %8d KiB\n", b.wall.Round(time.Millisecond), b.cpu.Round(time.Millisecond), b.rss)
	lo, hi := bootstrapMedian(ratios)
	fmt.Printf("  with/without: median of the rounds' wall ratios %.3f (95%% interval %.3f to %.3f)\n", medianOf(ratios), lo, hi)
}

// bootstrapMedian is a 95% percentile bootstrap interval of the median
// of xs (2,000 resamples, a fixed seed: the same runs give the same
// interval).
func bootstrapMedian(xs []float64) (lo, hi float64) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 2000
	ms := make([]float64, n)
	sample := make([]float64, len(xs))
	for i := range ms {
		for j := range sample {
			sample[j] = xs[rng.IntN(len(xs))]
		}
		ms[i] = medianOf(sample)
	}
	slices.Sort(ms)
	return ms[n*25/1000], ms[n*975/1000-1]
}

func medianOf(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
