package dirlock

import (
	"errors"
	"testing"
)

// TestLock: a folder locked is refused to a second exclusive or shared
// taker until released; shared holders share it, and keep an exclusive
// taker out.
func TestLock(t *testing.T) {
	dir := t.TempDir()
	release, err := Lock(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Lock(dir, false); !errors.Is(err, ErrLocked) {
		t.Errorf("a second exclusive lock: %v", err)
	}
	if _, err := Lock(dir, true); !errors.Is(err, ErrLocked) {
		t.Errorf("a shared lock beside an exclusive one: %v", err)
	}
	release()
	r1, err := Lock(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := Lock(dir, true)
	if err != nil {
		t.Errorf("a second shared lock: %v", err)
	}
	if _, err := Lock(dir, false); !errors.Is(err, ErrLocked) {
		t.Errorf("an exclusive lock beside shared ones: %v", err)
	}
	r1()
	r2()
	if r, err := Lock(dir, false); err != nil {
		t.Errorf("after release: %v", err)
	} else {
		r()
	}
	if _, err := Lock(dir+"/none", false); err == nil || errors.Is(err, ErrLocked) {
		t.Errorf("a folder that is not there: %v", err)
	}
}
