package ftp

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// TestMDTMSeconds: the MDTM time is read as time.ParseInLocation reads
// it, valid or not.
func TestMDTMSeconds(t *testing.T) {
	cases := []string{"20261128170608", "19700101000000", "00000101000000", "99991231235959",
		"20240229120000", "20230229120000", "20261131000000", "20261300000000", "20261200000000",
		"20261128240000", "20261128236000", "20261128235960", "2026112817060", "202611281706080",
		"2026112817060x", "+0261128170608", "2026-1128170608", "", "20261128 70608"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		cases = append(cases, fmt.Sprintf("%04d%02d%02d%02d%02d%02d", r.IntN(10000), r.IntN(14), r.IntN(33), r.IntN(26), r.IntN(62), r.IntN(62)))
	}
	for _, c := range cases {
		want, err := time.ParseInLocation("20060102150405", c, time.UTC)
		got, ok := mdtmSeconds(c)
		if ok != (err == nil) || !got.Equal(want) {
			t.Errorf("%q: %v %v, time.Parse says %v %v", c, got, ok, want, err)
		}
	}
}
