package gopher

import (
	"io"
	"sync"
)

// wireTap passes on what it reads from the connection and gives it to a
// tap (protocols.Tapper): held until Tap is called (what was read while
// the reply was looked at, or a whole menu), written to the tap's writer
// from then on.
type wireTap struct {
	r    io.Reader
	mu   sync.Mutex
	held []byte
	hold bool
	w    io.Writer
	err  error // the tap's writer's
}

func (t *wireTap) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if n > 0 {
		t.mu.Lock()
		switch {
		case t.w != nil && t.err == nil:
			_, t.err = t.w.Write(p[:n])
		case t.hold:
			t.held = append(t.held, p[:n]...)
		}
		t.mu.Unlock()
	}
	return n, err
}

// tap sends what is held to w, and what is read from now on.
func (t *wireTap) tap(w io.Writer) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.w, t.hold = w, false
	if len(t.held) > 0 {
		_, t.err = w.Write(t.held)
	}
	t.held = nil
}

// release stops holding: the body is read with no tap.
func (t *wireTap) release() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.hold, t.held = false, nil
}

// tappedText is a text item's body that can be tapped for the bytes the
// server sent.
type tappedText struct {
	closer
	wire *wireTap
	read bool
}

// Tap implements protocols.Tapper.
func (b *tappedText) Tap(w io.Writer) { b.wire.tap(w) }

func (b *tappedText) Read(p []byte) (int, error) {
	if !b.read {
		b.read = true
		if b.wire.w == nil {
			b.wire.release() // read untapped: nothing more is held
		}
	}
	return b.closer.Read(p)
}

// tappedMenu is a menu's body, read whole already, with the bytes the
// server sent for it.
type tappedMenu struct {
	io.Reader
	wire []byte
}

// Tap implements protocols.Tapper.
func (b *tappedMenu) Tap(w io.Writer) { w.Write(b.wire) }

// Close implements io.Closer.
func (b *tappedMenu) Close() error { return nil }
