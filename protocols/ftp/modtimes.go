package ftp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/textproto"
	"strings"
	"time"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// mdtmWindow is how many MDTM commands are written before the replies to
// earlier ones are read: enough to fill a long path, small enough that
// neither side's buffers fill while the other is not reading.
const mdtmWindow = 128

// ModTimes asks for the modification times of names in the folder
// req.URL names, with MDTM commands pipelined on one control connection
// (as lftp does): a mirror of a server whose listing gives times to the
// minute then needs no round trip per file for the exact time. Names the
// server gives no time for (550), and names holding CR, LF or NUL, are
// left out. A server without MDTM, or a control connection under explicit
// TLS (the library holds its encryption), gives errors.ErrUnsupported.
func (f *Fetcher) ModTimes(ctx context.Context, req *protocols.Request, names []string) (map[string]time.Time, error) {
	out := map[string]time.Time{}
	err := f.inFolder(ctx, req, names, func(s *session, ask []string) (bool, error) {
		if !s.c.IsGetTimeSupported() {
			return false, errors.ErrUnsupported
		}
		cmds := make([]string, len(ask))
		for i, n := range ask {
			cmds[i] = "MDTM " + n
		}
		return s.pipeline(cmds, func(i, code int, msg string) error {
			if code == 213 {
				if t, ok := parseMDTM(msg); ok {
					out[ask[i]] = s.f.mdtmTime(s.addr, t)
				}
			}
			return nil
		})
	})
	return out, err
}

// inFolder runs op on a control connection changed into the folder
// req.URL names, with the names fit for a command line (no CR, LF or
// NUL); it is not run when none are. A refused CWD or an unsupported
// command leaves the connection for reuse; a connection kept from before
// that turns out to be dead is replaced once.
func (f *Fetcher) inFolder(ctx context.Context, req *protocols.Request, names []string, op func(s *session, ask []string) (broken bool, err error)) error {
	fp, err := req.URL.FTP()
	if err != nil {
		return fmt.Errorf("%w: %w", protocols.ErrBadURL, err)
	}
	if fp.Name != "" || fp.Type == 'd' {
		return fmt.Errorf("%w: %s is not a folder URL (it ends in /)", protocols.ErrBadURL, req.URL.Redacted())
	}
	login, err := f.credentials(ctx, req)
	if err != nil {
		return err
	}
	ask := make([]string, 0, len(names))
	for _, n := range names {
		if n != "" && url.CheckArg("name", n) == nil {
			ask = append(ask, n)
		}
	}
	if len(ask) == 0 {
		return nil
	}
	for attempt := 0; ; attempt++ {
		s, reused, err := f.session(ctx, req, login)
		if err != nil {
			return err
		}
		broken, err := s.inFolder(ctx, req, fp.Dirs, ask, op)
		if err == nil {
			s.release()
			return nil
		}
		var re *ReplyError
		if !broken && (errors.As(err, &re) && re.Err.Code != 421 || errors.Is(err, errors.ErrUnsupported)) {
			s.release() // a refused CWD leaves the connection usable
		} else {
			s.discard()
		}
		if reused && attempt == 0 && stale(err) && ctx.Err() == nil {
			continue
		}
		return err
	}
}

func (s *session) inFolder(ctx context.Context, req *protocols.Request, dirs, ask []string, op func(s *session, ask []string) (bool, error)) (bool, error) {
	stop := s.bind(ctx, req)
	defer stop()
	s.mu.Lock()
	control := s.control
	s.mu.Unlock()
	if control == nil || s.ctl.encrypted {
		return false, errors.ErrUnsupported
	}
	if err := s.cwdTo(dirs, false); err != nil {
		return false, err
	}
	return op(s, ask)
}

// pipeline writes cmds on the control connection, a window of them ahead
// of the replies read, and calls each with every command's reply. A 4xx
// or 5xx reply is one command's refusal, passed on; 421, a reply that is
// no reply, or an error from each ends it, leaving the connection's state
// unknown (broken).
func (s *session) pipeline(cmds []string, each func(i, code int, msg string) error) (broken bool, err error) {
	s.mu.Lock()
	control := s.control
	s.mu.Unlock()
	// The library reads replies through a buffer of its own, which holds
	// nothing now: every reply to its commands has been read, and the
	// server sends nothing unasked.
	r := textproto.NewReader(bufio.NewReader(control))
	w := bufio.NewWriter(control)
	sent := 0
	for done := range cmds {
		if sent < len(cmds) && sent-done < mdtmWindow/2 {
			for ; sent < len(cmds) && sent-done < mdtmWindow; sent++ {
				w.WriteString(cmds[sent] + "\r\n")
			}
			if err := w.Flush(); err != nil {
				return true, mapErr(verb(cmds[done]), err)
			}
		}
		code, msg, err := r.ReadResponse(0)
		switch {
		case err != nil:
			return true, mapErr(cmds[done], err)
		case code == 421:
			return true, mapErr(cmds[done], &textproto.Error{Code: code, Msg: msg})
		case code/100 == 2, code/100 == 4, code/100 == 5:
			if err := each(done, code, msg); err != nil {
				return true, err
			}
		default:
			return true, fmt.Errorf("%w: %s: unexpected reply %d %s", protocols.ErrProtocol, cmds[done], code, msg)
		}
	}
	if r.R.Buffered() > 0 {
		return true, fmt.Errorf("%w: more replies than commands", protocols.ErrProtocol)
	}
	return false, nil
}

// verb is a command line's first word.
func verb(cmd string) string {
	v, _, _ := strings.Cut(cmd, " ")
	return v
}

// parseMDTM reads an MDTM reply's time: YYYYMMDDHHMMSS in UTC (RFC 3659
// §3), with an optional fraction of a second.
func parseMDTM(msg string) (time.Time, bool) {
	msg = strings.TrimSpace(msg)
	whole, frac, _ := strings.Cut(msg, ".")
	t, ok := mdtmSeconds(whole)
	if !ok {
		return time.Time{}, false
	}
	if frac != "" {
		if len(frac) > 9 || strings.Trim(frac, "0123456789") != "" {
			return time.Time{}, false
		}
		ns := 0
		for i := range 9 {
			ns *= 10
			if i < len(frac) {
				ns += int(frac[i] - '0')
			}
		}
		t = t.Add(time.Duration(ns))
	}
	return t, true
}

// mdtmSeconds reads YYYYMMDDHHMMSS in UTC, refusing what time.Parse
// refuses (a 30 February, an hour 24), at a tenth of its cost: one is
// read for every file fetched.
func mdtmSeconds(v string) (time.Time, bool) {
	if len(v) != 14 {
		return time.Time{}, false
	}
	var n [6]int
	for i, w := range [6]int{4, 2, 2, 2, 2, 2} {
		for range w {
			c := v[0]
			if c < '0' || c > '9' {
				return time.Time{}, false
			}
			n[i] = n[i]*10 + int(c-'0')
			v = v[1:]
		}
	}
	t := time.Date(n[0], time.Month(n[1]), n[2], n[3], n[4], n[5], 0, time.UTC)
	// time.Date carries what is out of range into the next field.
	if t.Year() != n[0] || int(t.Month()) != n[1] || t.Day() != n[2] || t.Hour() != n[3] || t.Minute() != n[4] || t.Second() != n[5] {
		return time.Time{}, false
	}
	return t, true
}
