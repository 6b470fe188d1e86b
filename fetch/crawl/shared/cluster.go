package shared

import (
	"context"
	"fmt"
	"sort"
	"strconv"
)

// crc16 is Redis Cluster's CRC16 (XMODEM) of s.
func crc16(s string) uint16 {
	var c uint16
	for i := 0; i < len(s); i++ {
		c ^= uint16(s[i]) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
	}
	return c
}

// slot is the cluster slot of a key's hash tag.
func slot(tag string) int { return int(crc16(tag) % 16384) }

// place chooses the shards' tags of a new crawl in a cluster: as many
// as asked (shards=N), or one a master, "PREFIX:K" for the least K whose
// slot is on the master next in turn, so that the shards are spread
// over the masters evenly as the cluster stands when the crawl begins.
func (f *Frontier) place(ctx context.Context) ([]string, error) {
	shards, err := f.cluster.ClusterShards(ctx).Result()
	if err != nil {
		return nil, fmt.Errorf("CLUSTER SHARDS: %w", err)
	}
	owner := make([]string, 16384)
	var masters []string
	for _, s := range shards {
		m := ""
		for _, n := range s.Nodes {
			if n.Role == "master" {
				m = n.ID
			}
		}
		if m == "" || len(s.Slots) == 0 {
			continue
		}
		masters = append(masters, m)
		for _, r := range s.Slots {
			for i := max(r.Start, 0); i <= r.End && i < 16384; i++ {
				owner[i] = m
			}
		}
	}
	if len(masters) == 0 {
		return nil, fmt.Errorf("the cluster has no masters with slots")
	}
	sort.Strings(masters)
	n := len(f.shards)
	if n == 0 {
		n = len(masters)
	}
	var tags []string
	used := map[int]bool{}
	for i := range n {
		want := masters[i%len(masters)]
		for k := 0; ; k++ {
			t := f.prefix + ":" + strconv.Itoa(k)
			if s := slot(t); owner[s] == want && !used[s] {
				used[s] = true
				tags = append(tags, t)
				break
			}
			if k > 1<<20 {
				return nil, fmt.Errorf("no tag of %s found on %s", f.prefix, want)
			}
		}
	}
	return tags, nil
}

// Shards are the bases of the crawl's shards' keys ("{PREFIX:K}" in a
// cluster, the prefix elsewhere), for a program that reads them.
func (f *Frontier) Shards() []string { return append([]string(nil), f.shards...) }
