package mirror_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/fetch/mirror"
)

// TestSecondRunRefused: a mirror into a folder another mirror is writing
// is refused at once with a line saying so, and the first run finishes
// whole; once it has ended, the folder is free again. Runs that split a
// tree (Shards) share the folder.
func TestSecondRunRefused(t *testing.T) {
	root := t.TempDir()
	makeTree(t, root, sample)
	src := serveFTP(t, root)
	dst := filepath.Join(t.TempDir(), "copy")
	c := fetch.NewClient()
	c.NetrcFile = ""
	var once sync.Once
	var second error
	rep, err := mirror.Run(context.Background(), c, src, dst, mirror.Options{Events: func(mirror.Event) {
		once.Do(func() { _, second = mirror.Run(context.Background(), c, src, dst, mirror.Options{}) })
	}})
	if err != nil || rep.Failed != 0 {
		t.Fatalf("the first run: %v %+v", err, rep)
	}
	if second == nil || !strings.Contains(second.Error(), "being written by another mirror") || !strings.Contains(second.Error(), dst) {
		t.Errorf("the second run, while the first wrote: %v", second)
	}
	sameTree(t, readTree(t, dst), sample)
	if _, err := mirror.Run(context.Background(), c, src, dst, mirror.Options{}); err != nil {
		t.Errorf("after the first ended: %v", err)
	}
	once = sync.Once{}
	second = nil
	_, err = mirror.Run(context.Background(), c, src, dst, mirror.Options{Shards: 2, Shard: 0, Events: func(mirror.Event) {
		once.Do(func() { _, second = mirror.Run(context.Background(), c, src, dst, mirror.Options{Shards: 2, Shard: 1}) })
	}})
	if err != nil || second != nil {
		t.Errorf("two shards into one folder: %v, %v", err, second)
	}
}
