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
	fp, err := req.URL.FTP()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", protocols.ErrBadURL, err)
	}
	if fp.Name != "" || fp.Type == 'd' {
		return nil, fmt.Errorf("%w: %s is not a folder URL (it ends in /)", protocols.ErrBadURL, req.URL.Redacted())
	}
	login, err := f.credentials(ctx, req)
	if err != nil {
		return nil, err
	}
	ask := make([]string, 0, len(names))
	for _, n := range names {
		if n != "" && url.CheckArg("name", n) == nil {
			ask = append(ask, n)
		}
	}
	if len(ask) == 0 {
		return map[string]time.Time{}, nil
	}
	for attempt := 0; ; attempt++ {
		s, reused, err := f.session(ctx, req, login)
		if err != nil {
			return nil, err
		}
		out, broken, err := s.modTimes(ctx, req, fp.Dirs, ask)
		if err == nil {
			s.release()
			return out, nil
		}
		var re *ReplyError
		if !broken && (errors.As(err, &re) || errors.Is(err, errors.ErrUnsupported)) {
			s.release() // a refused CWD leaves the connection usable
		} else {
			s.discard()
		}
		if reused && attempt == 0 && (errors.Is(err, protocols.ErrNetwork) || errors.Is(err, errStale)) && ctx.Err() == nil {
			continue
		}
		return nil, err
	}
}

// modTimes changes into dirs and pipelines MDTM for names. An error after
// the first MDTM is sent leaves the connection's state unknown: broken is
// then true.
func (s *session) modTimes(ctx context.Context, req *protocols.Request, dirs, names []string) (out map[string]time.Time, broken bool, err error) {
	stop := s.bind(ctx, req)
	defer stop()
	s.mu.Lock()
	control := s.control
	s.mu.Unlock()
	if control == nil || control.encrypted || !s.c.IsGetTimeSupported() {
		return nil, false, errors.ErrUnsupported
	}
	if err := s.cwdTo(dirs, false); err != nil {
		return nil, false, err
	}
	out = make(map[string]time.Time, len(names))
	// The library reads replies through a buffer of its own, which holds
	// nothing now: every reply to its commands has been read, and the
	// server sends nothing unasked.
	r := textproto.NewReader(bufio.NewReader(control))
	w := bufio.NewWriter(control)
	sent := 0
	for done := range names {
		if sent < len(names) && sent-done < mdtmWindow/2 {
			for ; sent < len(names) && sent-done < mdtmWindow; sent++ {
				fmt.Fprintf(w, "MDTM %s\r\n", names[sent])
			}
			if err := w.Flush(); err != nil {
				return nil, true, mapErr("MDTM", err)
			}
		}
		code, msg, err := r.ReadResponse(0)
		switch {
		case err != nil:
			return nil, true, mapErr("MDTM "+names[done], err)
		case code == 213:
			if t, ok := parseMDTM(msg); ok {
				out[names[done]] = s.f.mdtmTime(s.addr, t)
			}
		case code == 421:
			return nil, true, mapErr("MDTM "+names[done], &textproto.Error{Code: code, Msg: msg})
		case code/100 == 4 || code/100 == 5:
			// no time for this one (a folder, gone, refused, busy): its
			// transfer asks again
		default:
			return nil, true, fmt.Errorf("%w: MDTM %s: unexpected reply %d %s", protocols.ErrProtocol, names[done], code, msg)
		}
	}
	if r.R.Buffered() > 0 {
		return nil, true, fmt.Errorf("%w: more replies than MDTM commands", protocols.ErrProtocol)
	}
	return out, false, nil
}

// parseMDTM reads an MDTM reply's time: YYYYMMDDHHMMSS in UTC (RFC 3659
// §3), with an optional fraction of a second.
func parseMDTM(msg string) (time.Time, bool) {
	msg = strings.TrimSpace(msg)
	whole, frac, _ := strings.Cut(msg, ".")
	t, err := time.ParseInLocation("20060102150405", whole, time.UTC)
	if err != nil {
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
