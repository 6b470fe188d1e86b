package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"sync"
	"syscall"

	"golang.org/x/term"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/protocols/telnet"
	"github.com/urlderef/deref/url"
)

// escapeChar ends a session from the keyboard, as telnet's ^].
const escapeChar = 0x1d

// interact connects the terminal, or standard input and output, to an
// interactive session until either side ends it.
func interact(ctx context.Context, resp *fetch.Response, u *url.URL, o *options, stdout, stderr io.Writer) error {
	sess := resp.Session
	defer sess.Close()
	t, _ := u.Telnet()
	if t != nil && t.HasUser && !o.login {
		hint := "deref: the URL suggests logging in as " + t.User
		if t.HasPassword {
			hint += " (with the password it gives; --login types both)"
		}
		fmt.Fprintln(stderr, hint)
	}
	if t != nil && t.HasUser && o.login {
		ts, ok := sess.(*telnet.Session)
		if !ok {
			return errors.New("--login: this session cannot log in")
		}
		if err := ts.Login(ctx, t.User, t.Password, t.HasPassword, stdout); err != nil {
			return fmt.Errorf("--login: %w", err)
		}
	}
	in, isFile := o.stdin.(*os.File)
	if isFile && term.IsTerminal(int(in.Fd())) {
		return interactTerminal(ctx, sess, in, stdout, stderr)
	}
	return interactPipe(ctx, sess, o.stdin, stdout)
}

// interactPipe copies standard input to the session and the session to
// standard output until the server closes; at the end of the input the
// sending side is closed.
func interactPipe(ctx context.Context, sess protocols.Session, stdin io.Reader, stdout io.Writer) error {
	stop := context.AfterFunc(ctx, func() { sess.Close() })
	defer stop()
	go func() {
		io.Copy(sess, stdin)
		if cw, ok := sess.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
	}()
	err := copyOut(stdout, sess)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// copyOut copies the session's output until it ends. The server closing,
// even abruptly (a reset as it exits), ends the session normally; a
// failure to write the output is a write error.
func copyOut(w io.Writer, sess io.Reader) error {
	buf := make([]byte, 32<<10)
	for {
		n, rerr := sess.Read(buf)
		if n > 0 {
			if _, err := w.Write(buf[:n]); err != nil {
				return fetch.WriteError(err)
			}
		}
		switch {
		case rerr == nil:
		case errors.Is(rerr, io.EOF), errors.Is(rerr, net.ErrClosed), errors.Is(rerr, syscall.ECONNRESET):
			return nil
		default:
			return protocols.NetError(rerr)
		}
	}
}

// interactTerminal runs a session on the terminal: raw mode while the
// server echoes, the terminal's own line editing otherwise; ^] ends it;
// window size changes are reported. The terminal is restored on every way
// out.
func interactTerminal(ctx context.Context, sess protocols.Session, in *os.File, stdout, stderr io.Writer) error {
	fd := int(in.Fd())
	saved, err := term.GetState(fd)
	if err != nil {
		return err
	}
	var mu sync.Mutex
	raw := false
	setMode := func(wantRaw bool) {
		mu.Lock()
		defer mu.Unlock()
		if wantRaw == raw {
			return
		}
		if wantRaw {
			if _, err := term.MakeRaw(fd); err == nil {
				raw = true
			}
		} else {
			term.Restore(fd, saved)
			raw = false
		}
	}
	defer term.Restore(fd, saved)
	fmt.Fprintln(stderr, "deref: connected; ^] closes the session")

	ts, _ := sess.(*telnet.Session)
	echo := func() bool { return ts != nil && ts.RemoteEcho() }
	setMode(echo())

	sizeFd := fd // Windows knows a console's size from its output handle only
	if f, ok := stdout.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		defer enableVT(f)()
		sizeFd = int(f.Fd())
	}
	winch, stopResizes := resizes()
	defer stopResizes()
	lastW, lastH, err := term.GetSize(sizeFd)
	if err == nil {
		sess.SetWindowSize(lastW, lastH)
	}
	var echoCh <-chan struct{}
	if ts != nil {
		echoCh = ts.EchoChanged()
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case <-winch:
				if w, h, err := term.GetSize(sizeFd); err == nil && (w != lastW || h != lastH) {
					lastW, lastH = w, h
					sess.SetWindowSize(w, h)
				}
			case <-echoCh:
				setMode(echo())
			case <-ctx.Done():
				sess.Close()
				return
			case <-done:
				return
			}
		}
	}()
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := in.Read(buf)
			if n > 0 {
				p := buf[:n]
				if i := bytes.IndexByte(p, escapeChar); i >= 0 {
					sess.Write(p[:i])
					sess.Close()
					return
				}
				mu.Lock()
				isRaw := raw
				mu.Unlock()
				if isRaw {
					// A bare CR from a raw terminal is CR NUL on the wire
					// (RFC 854).
					p = bytes.ReplaceAll(p, []byte("\r"), []byte("\r\x00"))
				}
				if _, err := sess.Write(p); err != nil {
					return
				}
			}
			if err != nil {
				sess.Close()
				return
			}
		}
	}()
	err = copyOut(stdout, sess)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return err
	}
	mu.Lock()
	if raw {
		fmt.Fprint(stdout, "\r\n")
	}
	mu.Unlock()
	fmt.Fprintln(stderr, "deref: session closed")
	return nil
}

// handOver runs the external program for a URL that designates an
// interactive session (tn3270:, rlogin:; RFC 1630) on this terminal.
func handOver(ctx context.Context, u *url.URL, cs commandScheme, o *options, stdout, stderr io.Writer) error {
	prog := cs.program(o)
	if prog == "" {
		for _, p := range cs.programs {
			if path, err := exec.LookPath(p); err == nil {
				prog = path
				break
			}
		}
	}
	if prog == "" {
		return fmt.Errorf("%w: %s: an interactive session that deref hands to an external program; none of %v is installed (or name one with --%s)",
			fetch.ErrNotRetrievable, u.Scheme, cs.programs, u.Scheme)
	}
	args := cs.args(u)
	for _, a := range args {
		if err := url.CheckArg(u.Scheme, a); err != nil || (len(a) > 0 && a[0] == '-' && a != "-l" && a != "-p") {
			return fmt.Errorf("%w: %s: %q cannot be passed to a program", fetch.ErrBadURL, u.Scheme, a)
		}
	}
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = o.stdin, stdout, stderr
	fmt.Fprintf(stderr, "deref: handing %s to %s\n", u.Redacted(), prog)
	return cmd.Run()
}
