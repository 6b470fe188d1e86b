// Package ftp dereferences ftp: and ftps: URLs as RFC 1738 §3.2 defines
// them, on top of github.com/jlaffaye/ftp, wrapped where that library
// falls short (the way rclone's FTP backend wraps it):
//
//   - each <cwd> segment, decoded on its own, is the argument of one CWD
//     (a "%2F" stays inside the argument); an empty segment sends CWD with
//     an empty argument, as §3.2.2 says, and a server that refuses it fails
//     the URL: a different file is never fetched silently;
//   - the library sends TYPE I at login: TYPE A is sent after SIZE, and
//     ASCII data has its CRLF turned into LF;
//   - errors the server sends after 150 arrive only when the body is
//     closed, and Close reports them;
//   - the library honours a context only while dialling: a context that
//     ends closes the connections;
//   - one transfer per control connection: connections are pooled, and a
//     pooled one returns to the entry directory (from PWD at login) before
//     its CWDs;
//   - the library sends a command only after the previous one's reply: on
//     a kept connection where EPSV has worked, the control connection's
//     writer sends RETR in the same write as its EPSV, and drops the
//     library's own RETR (Fetcher.NoPipelining turns this off). There, a
//     binary file whose size is known (from a listing, or a SIZE sent in
//     that same write) is read as soon as its data connection is made:
//     the library is shown a 150 at once, the server's is taken out of
//     the control conversation when it comes (a refusal in its place
//     ends the transfer in that error), and once every byte came the
//     226 is not waited for either: the next file's commands go out at
//     once, its replies read after the owed ones (control.take). One
//     round trip a file on a kept connection, where the library alone
//     takes two (BenchmarkRoundTrips).
//
// Data connections are dialled by this package, so a binary transfer can
// be spliced from the socket into a file.
package ftp

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	jftp "github.com/jlaffaye/ftp"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// Methods of reaching the file, as --ftp-method names them.
const (
	MethodRFC    = "rfc"    // one CWD per segment (RFC 1738 §3.2.2); the default
	MethodSingle = "single" // one CWD with the whole directory path
	MethodNone   = "none"   // no CWD: the whole path to SIZE and RETR
	MethodAuto   = "auto"   // RETR the whole path first, then fall back to the CWDs
)

// Fetcher retrieves files and listings over FTP. Set its fields before the
// first Fetch; it is then safe for concurrent use.
type Fetcher struct {
	// Method is how the url-path becomes commands: MethodRFC (default),
	// MethodSingle, MethodNone or MethodAuto.
	Method string
	// ExplicitTLS asks ftp:// URLs to upgrade with AUTH TLS; a server that
	// refuses fails the URL. ftps:// is implicit TLS (port 990).
	ExplicitTLS bool
	// AnonymousPassword is sent as the password of anonymous logins; empty
	// means $EMAIL, else user@host of this machine.
	AnonymousPassword string
	// TrustPASVAddress uses the address a PASV reply names instead of the
	// control connection's.
	TrustPASVAddress bool
	// DisableEPSV asks for data connections with PASV only, never EPSV
	// (curl's --disable-epsv), for servers or middleboxes that mishandle
	// it; otherwise EPSV is tried first, and PASV where it fails.
	DisableEPSV bool
	// MaxIdle is the number of idle control connections kept per server and
	// login; 0 means 4, negative none.
	MaxIdle int
	// SkipSize leaves out SIZE unless resuming, saving a round trip per
	// file: the size then comes from the 150 reply where the server puts it
	// there (vsftpd and proftpd do), and a short transfer that the server
	// reports as complete cannot be caught where it does not. Without it,
	// SIZE is asked until a 150 reply of the server has named a size; its
	// later transfers take the size from their 150 replies.
	SkipSize bool
	// NoPipelining sends each command on its own and waits for its reply.
	// By default, once EPSV has worked on a connection, a transfer's RETR
	// is sent together with its EPSV, saving a round trip per file (as
	// lftp's ftp:sync-mode off does); servers read commands in order, and
	// accept the data connection after RETR as well as before it. Servers
	// whose greeting names one known to lose such commands (Microsoft FTP
	// Service, MadGoat: lftp's auto-sync-mode list) never get them.
	NoPipelining bool
	// TimeZone is the zone of the servers' clocks, in which ls -l and
	// MS-DOS listings give their times (they name none). Nil: each
	// server's zone is found on its first such listing by comparing one
	// file's LIST time with its MDTM time, which RFC 3659 gives in UTC
	// (the trace says what was found); a server without MDTM is taken to
	// list in UTC. When set, a server whose MDTM times turn out to be
	// local too (vsftpd's use_localtime) has them read in this zone.
	// Year-less dates are placed relative to the server's clock.
	TimeZone *time.Location

	mu       sync.Mutex
	idle     map[poolID][]*session
	noEPSV   map[string]bool // servers whose EPSV failed once
	inTurn   map[string]bool // servers that refused a RETR sent with its EPSV
	sizes150 map[string]bool // servers whose 150 replies name the size
	zones    map[string]zoneState
	anonPass string
}

// pipelines says whether the server at addr may be sent a RETR with its
// EPSV: none of its connections refused one yet.
func (f *Fetcher) pipelines(addr string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return !f.inTurn[addr]
}

// InlineTimes reports whether transfers from req's server send each
// file's MDTM with its SIZE, EPSV and RETR once a connection is in use
// (protocols.InlineTimer): not over TLS (the library holds its
// conversation), not with NoPipelining, and not to a server that refused
// a RETR sent so or whose greeting names one that loses commands sent
// ahead.
func (f *Fetcher) InlineTimes(req *protocols.Request) bool {
	return req.URL.Scheme == "ftp" && !f.ExplicitTLS && !f.NoPipelining && f.pipelines(req.URL.HostPort())
}

// inTurnOnly remembers that the server at addr is sent one command at a
// time.
func (f *Fetcher) inTurnOnly(addr string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.inTurn == nil {
		f.inTurn = make(map[string]bool)
	}
	f.inTurn[addr] = true
}

// outOfTurn says whether err, the reply to a RETR sent with its EPSV,
// says the server takes no command before it has answered the last: 503
// (bad sequence of commands) or 425 (no data connection), where in turn
// the file would have come. The server is then sent one command at a time
// from here on (remembered by addr), and the transfer tried again.
func (f *Fetcher) outOfTurn(addr string, req *protocols.Request, err error) bool {
	var re *ReplyError
	if !errors.As(err, &re) || re.Err.Code != 503 && re.Err.Code != 425 {
		return false
	}
	f.inTurnOnly(addr)
	if req != nil {
		req.Tracef(protocols.TraceInfo, "the server refused a RETR sent with its EPSV ("+strconv.Itoa(re.Err.Code)+"): one command at a time from now on")
	}
	return true
}

// errInTurn is a pipelined RETR refused as out of turn (outOfTurn).
var errInTurn = errors.New("RETR refused out of turn")

// sizeIn150s says whether the server at addr has named a transfer's size
// in its 150 reply.
func (f *Fetcher) sizeIn150s(addr string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sizes150[addr]
}

// noteSizeIn150s records that the server at addr named a transfer's size
// in its 150 reply; it reports whether that is news.
func (f *Fetcher) noteSizeIn150s(addr string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.sizes150[addr] {
		return false
	}
	if f.sizes150 == nil {
		f.sizes150 = make(map[string]bool)
	}
	f.sizes150[addr] = true
	return true
}

// ReplyError is an FTP reply that ended a retrieval. It unwraps to the
// sentinel its code maps to and to the *textproto.Error.
type ReplyError struct {
	Cmd  string
	Err  *textproto.Error
	kind error
}

// Error gives the kind of failure, the command and the server's reply.
func (e *ReplyError) Error() string {
	return fmt.Sprintf("%v: %s: %d %s", e.kind, e.Cmd, e.Err.Code, strings.ReplaceAll(e.Err.Msg, "\n", " "))
}

// Unwrap returns the sentinel and the server's reply.
func (e *ReplyError) Unwrap() []error { return []error{e.kind, e.Err} }

// mapErr turns an error of an FTP command into one that unwraps to a
// sentinel: 550 not found (or permission when the text says so), 530
// login refused, 421 and other 4xx temporary, 426 an object that ended
// early; network errors stay network errors.
func mapErr(cmd string, err error) error {
	if err == nil {
		return nil
	}
	var te *textproto.Error
	if errors.As(err, &te) {
		kind := protocols.ErrProtocol
		msg := strings.ToLower(te.Msg)
		missing := strings.Contains(msg, "no such") || strings.Contains(msg, "not found") ||
			strings.Contains(msg, "not exist") || strings.Contains(msg, "doesn't exist")
		switch {
		case te.Code == 550 || te.Code == 450 && missing:
			kind = protocols.ErrNotFound
			if !missing && (strings.Contains(msg, "permission") || strings.Contains(msg, "denied")) {
				kind = protocols.ErrPermission
			}
		case te.Code == 553 || te.Code == 532:
			kind = protocols.ErrPermission
		case te.Code == 530 || te.Code == 331 || te.Code == 332:
			kind = protocols.ErrAuth
		case te.Code == 426:
			kind = protocols.ErrShortBody
		case te.Code >= 400 && te.Code < 500:
			kind = protocols.ErrTemporary
		}
		return &ReplyError{Cmd: cmd, Err: te, kind: kind}
	}
	if errors.Is(err, jftp.ErrInvalidCommand) {
		return fmt.Errorf("%w: %s: %w", protocols.ErrBadURL, cmd, err)
	}
	if errors.Is(err, protocols.ErrNetwork) || errors.Is(err, protocols.ErrTimeout) || errors.Is(err, context.Canceled) {
		return err
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
		return protocols.NetError(fmt.Errorf("%s: %w", cmd, err))
	}
	return fmt.Errorf("%w: %s: %w", protocols.ErrProtocol, cmd, err)
}

func (f *Fetcher) anonymousPassword() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.AnonymousPassword != "" {
		return f.AnonymousPassword
	}
	if f.anonPass == "" {
		f.anonPass = protocols.UserAddress()
	}
	return f.anonPass
}

// target is what a URL asks of the server, decoded.
type target struct {
	dirs []string
	name string
	typ  byte // 'a', 'i' or 'd'; 0 from the URL means choose
}

// Fetch retrieves the file, directory listing or name list the URL names.
func (f *Fetcher) Fetch(ctx context.Context, req *protocols.Request) (*protocols.Response, error) {
	fp, err := req.URL.FTP()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", protocols.ErrBadURL, err)
	}
	login, err := f.credentials(ctx, req)
	if err != nil {
		return nil, err
	}
	t := target{dirs: fp.Dirs, name: fp.Name, typ: fp.Type}
	var resp *protocols.Response
	for attempt := 0; ; attempt++ {
		s, reused, err := f.session(ctx, req, login)
		if err != nil {
			return nil, err
		}
		resp, err = f.retrieve(ctx, s, req, t)
		if err == nil {
			return resp, nil
		}
		var re *ReplyError
		if errors.As(err, &re) && re.Err.Code >= 500 || errors.Is(err, protocols.ErrRangeNotSatisfied) {
			s.release() // a refusal leaves the connection usable (its directory is marked unknown)
		} else {
			s.discard()
		}
		if s.epsvFailed && attempt == 0 {
			f.mu.Lock()
			if f.noEPSV == nil {
				f.noEPSV = make(map[string]bool)
			}
			f.noEPSV[s.addr] = true
			f.mu.Unlock()
			req.Tracef(protocols.TraceInfo, "EPSV data connection failed; trying again with PASV")
			continue
		}
		if errors.Is(err, errInTurn) && attempt == 0 && ctx.Err() == nil {
			continue // sent again, in turn
		}
		if s.ctl.desync && attempt == 0 && ctx.Err() == nil {
			req.Tracef(protocols.TraceInfo, "the RETR sent with EPSV was not answered in turn; trying again on a new connection")
			continue
		}
		if reused && attempt == 0 && stale(err) && ctx.Err() == nil {
			req.Tracef(protocols.TraceInfo, "the kept connection failed; trying again on a new one")
			continue // the pooled connection had gone stale, or cannot find its way back
		}
		return nil, err
	}
}

// stale reports whether err, on a connection kept from an earlier URL,
// says the connection rather than the URL failed: a network error, a
// directory it cannot return to, or a 421 (the server closing it, as
// vsftpd's "421 Timeout." after an idle time).
func stale(err error) bool {
	var re *ReplyError
	return errors.Is(err, protocols.ErrNetwork) || errors.Is(err, errStale) || errors.As(err, &re) && re.Err.Code == 421
}

type loginInfo struct {
	user, password string
	tls            byte // 0 none, 'e' explicit, 'i' implicit
	noPassword     bool // a user was named, and no password found or asked for
}

func (f *Fetcher) credentials(ctx context.Context, req *protocols.Request) (loginInfo, error) {
	c := req.Credentials
	l := loginInfo{user: "anonymous", password: f.anonymousPassword()}
	if req.URL.Scheme == "ftps" {
		l.tls = 'i'
	} else if f.ExplicitTLS {
		l.tls = 'e'
	}
	if c.HasUser {
		l.user, l.password = c.User, c.Password
		if !c.HasPassword && c.Prompt != nil {
			pw, err := c.Prompt(ctx, c.User)
			if err != nil {
				return l, err
			}
			l.password = pw
		}
		l.noPassword = c.NoPassword()
	}
	if err := url.CheckArg("user", l.user); err != nil {
		return l, fmt.Errorf("%w: %w", protocols.ErrBadURL, err)
	}
	if url.CheckArg("password", l.password) != nil {
		return l, fmt.Errorf("%w: password: decoded CR, LF or NUL is not allowed", protocols.ErrBadURL)
	}
	return l, nil
}

// retrieve runs the commands for t on s. On success the session belongs
// to the response body, which returns it to the pool when closed.
func (f *Fetcher) retrieve(ctx context.Context, s *session, req *protocols.Request, t target) (*protocols.Response, error) {
	stop := s.bind(ctx, req)
	defer stop()
	method := f.Method
	if method == "" {
		method = MethodRFC
	}
	plain := true // no segment holds "/" or is empty: a Unix path can stand for them
	for _, d := range t.dirs {
		if d == "" || strings.Contains(d, "/") {
			plain = false
		}
	}
	full := strings.Join(append(append([]string{}, t.dirs...), t.name), "/")
	switch {
	case method == MethodNone && plain && t.name != "" && t.typ != 'd':
		if err := s.toEntry(); err != nil {
			return nil, err
		}
		return f.file(ctx, s, req, full, t)
	case method == MethodAuto && plain && t.name != "" && t.typ != 'd' && len(t.dirs) > 0:
		if err := s.toEntry(); err != nil {
			return nil, err
		}
		resp, err := f.file(ctx, s, req, full, t)
		if err == nil || !errors.Is(err, protocols.ErrNotFound) {
			return resp, err
		}
		req.Tracef(protocols.TraceInfo, "direct retrieval failed; changing directories")
	}
	if method == MethodSingle && plain && len(t.dirs) > 0 {
		if err := s.cwdTo(t.dirs, true); err != nil {
			return nil, err
		}
	} else if err := s.cwdTo(t.dirs, false); err != nil {
		return nil, err
	}
	if t.typ == 'd' {
		return f.nameList(s, req, t)
	}
	if t.name == "" {
		return f.list(s, req)
	}
	resp, err := f.file(ctx, s, req, t.name, t)
	if err != nil && t.typ == 0 && errors.Is(err, protocols.ErrNotFound) && !isNetErr(err) {
		return nil, folderHint(s, req, t, err)
	}
	return resp, err
}

// folderHint is the error for a name RETR did not find: when the server
// then takes CWD to it, the name is a folder and the URL lacks its
// closing slash (ftp://h/pub for ftp://h/pub/), which the error says; the
// error is still the not-found one.
func folderHint(s *session, req *protocols.Request, t target, err error) error {
	if s.c.ChangeDir(t.name) != nil {
		return err
	}
	s.cwd = append(append([]string(nil), t.dirs...), t.name)
	folder, perr := url.Parse(req.URL.String() + "/")
	if perr != nil {
		return fmt.Errorf("%w: %s is a folder: did you mean %s/ ?", err, t.name, req.URL.Redacted())
	}
	return &protocols.FolderError{Err: err, Name: t.name, Folder: folder}
}

// textSuffixes are the name endings that choose TYPE A when the URL gives
// no ;type= (RFC 1738 §3.2.3 asks the client to guess from the name).
var textSuffixes = map[string]bool{
	".txt": true, ".text": true, ".asc": true, ".htm": true, ".html": true, ".md": true,
	".c": true, ".h": true, ".csv": true, ".tsv": true, ".xml": true, ".ps": true,
	".tex": true, ".rtf": true, ".1": true, ".me": true, ".doc": false,
}

// chooseType implements §3.2.3: the typecode when given, else TYPE A for
// names with a text suffix (and READMEs), else TYPE I.
func chooseType(t target) byte {
	if t.typ != 0 {
		return t.typ
	}
	name := strings.ToLower(t.name)
	if textSuffixes[path.Ext(name)] || name == "readme" || name == "index" {
		return 'a'
	}
	return 'i'
}

func (f *Fetcher) file(ctx context.Context, s *session, req *protocols.Request, name string, t target) (*protocols.Response, error) {
	typ := chooseType(t)
	if req.Verbatim && t.typ == 0 {
		typ = 'i' // the server's bytes, whatever the name
	}
	resp := &protocols.Response{Kind: protocols.KindFile, Size: -1, Name: suggestedName(req.URL)}
	size := int64(-1)
	// SIZE in TYPE I, before any TYPE A: servers refuse SIZE in ASCII mode.
	// SIZE lets a short transfer be caught even when the server then
	// reports success; without it, the size comes from the 150 reply where
	// the server puts one there.
	askSize := req.Offset > 0 || req.HeadOnly || req.LocalSize > 0 && !req.IfModifiedSince.IsZero() || !f.SkipSize && req.SizeHint <= 0 && !f.sizeIn150s(s.addr)
	if s.ascii && (askSize || typ != 'a') {
		if err := s.c.Type(jftp.TransferTypeBinary); err != nil {
			return nil, mapErr("TYPE I", err)
		}
		s.ascii = false
	}
	var sizeErr error
	if askSize {
		if n, err := s.c.FileSize(name); err == nil {
			size = n
		} else if isNetErr(err) {
			return nil, mapErr("SIZE "+name, err)
		} else {
			sizeErr = mapErr("SIZE "+name, err)
		}
	}
	// A file sent for with its EPSV (see below) has its time asked in the
	// same write, binary or text, unless the time decides whether to
	// fetch it.
	inlineTime := req.Offset == 0 && !req.HeadOnly && req.IfModifiedSince.IsZero() && s.canReadEarly()
	if !req.ModTimeHint.IsZero() {
		resp.ModTime = req.ModTimeHint
	} else if s.c.IsGetTimeSupported() && !inlineTime {
		if mt, err := s.c.GetTime(name); err == nil {
			resp.ModTime = f.mdtmTime(s.addr, mt)
		} else if isNetErr(err) {
			return nil, mapErr("MDTM "+name, err)
		}
	}
	if since := req.IfModifiedSince; !since.IsZero() && !resp.ModTime.IsZero() && !resp.ModTime.After(since) &&
		(req.LocalSize <= 0 || size < 0 || size == req.LocalSize) {
		s.release()
		return nil, fmt.Errorf("%w since %s (MDTM %s)", protocols.ErrNotModified, since.UTC().Format(time.RFC3339), resp.ModTime.UTC().Format(time.RFC3339))
	}
	if req.HeadOnly {
		// Metadata only: no RETR. A name SIZE refuses with a 550 (no such
		// file, or none to be read: a folder too) and MDTM does not date
		// is not there, as curl has it since 7.73; a SIZE the server does
		// not know says nothing, and the name may still be a file it
		// would send.
		if size < 0 && resp.ModTime.IsZero() && (errors.Is(sizeErr, protocols.ErrNotFound) || errors.Is(sizeErr, protocols.ErrPermission)) {
			return nil, sizeErr
		}
		s.release()
		resp.Size = size
		if typ == 'a' {
			resp.MediaType = "text/plain" // as the RETR would have it
		}
		resp.Body = io.NopCloser(strings.NewReader(""))
		return resp, nil
	}
	if typ == 'a' {
		if !s.ascii {
			if err := s.c.Type(jftp.TransferTypeASCII); err != nil {
				return nil, mapErr("TYPE A", err)
			}
			s.ascii = true
		}
		resp.MediaType = "text/plain"
	}
	offset := req.Offset
	if offset > 0 && size >= 0 {
		if offset > size {
			return nil, fmt.Errorf("%w: offset %d, size %d", protocols.ErrRangeNotSatisfied, offset, size)
		}
		if offset == size {
			s.release()
			resp.Body, resp.Size, resp.Offset = io.NopCloser(strings.NewReader("")), 0, offset
			return resp, nil
		}
	}
	if offset > 0 && typ == 'a' {
		offset = 0 // REST counts bytes on the wire, which ASCII conversion changes
	}
	s.mu.Lock()
	s.data, s.rawData = nil, nil
	s.expect = -1
	switch {
	case typ == 'a':
	case size >= 0:
		s.expect = size - offset
	case req.SizeHint > 0:
		s.expect = req.SizeHint - offset
	}
	s.mu.Unlock()
	s.ctl.size150.Store(-1)
	early := false
	if offset == 0 && s.canReadEarly() {
		s.ctl.pipe = "RETR " + name + "\r\n"
		// A binary file whose size is known, or asked with the same write,
		// is read as soon as its data connection is made, and ended
		// without waiting for the final reply: one round trip a file.
		if typ != 'a' {
			early = true
			s.ctl.early, s.ctl.sizeN, s.ctl.sizeBad = true, -1, false
			switch {
			case size >= 0:
				s.ctl.sizeN = size
			case req.SizeHint > 0:
				s.ctl.sizeN = req.SizeHint
			default:
				s.ctl.preSize = "SIZE " + name + "\r\n"
			}
		}
		if inlineTime && resp.ModTime.IsZero() && s.c.IsGetTimeSupported() {
			s.ctl.preTime = "MDTM " + name + "\r\n"
		}
	}
	pipelined := s.ctl.pipe != ""
	r, err := s.c.RetrFrom(name, uint64(offset))
	s.ctl.retrDone(err == nil)
	s.mu.Lock()
	s.expect = -1
	s.mu.Unlock()
	s.ctl.early, s.ctl.preSize, s.ctl.preTime = false, "", ""
	mdtm := s.ctl.mdtm // this file's, or none: never kept for a later one
	s.ctl.mdtm = ""
	if err != nil {
		err = mapErr("RETR "+name, err)
		if pipelined && f.outOfTurn(s.addr, req, err) {
			return nil, fmt.Errorf("%w: %w", errInTurn, err)
		}
		return nil, err
	}
	if t, ok := parseMDTM(mdtm); ok && resp.ModTime.IsZero() {
		resp.ModTime = f.mdtmTime(s.addr, t)
	}
	if early && !s.ctl.sizeBad && s.ctl.sizeN >= 0 {
		size = s.ctl.sizeN
	} else {
		early = false
	}
	wire := size - offset
	if size < 0 {
		wire = -1
	}
	if n := s.ctl.size150.Load(); n >= 0 {
		wire = n
		if size < 0 && typ != 'a' {
			size = n + offset // the 150 reply counts what is sent, after REST
		}
		if f.noteSizeIn150s(s.addr) {
			req.Tracef(protocols.TraceInfo, "the server's 150 replies name the size: no SIZE before its next transfers")
		}
	}
	s.mu.Lock()
	body := &dataBody{s: s, r: r, raw: s.rawData, conn: s.data, ascii: typ == 'a', wire: wire, early: early}
	s.mu.Unlock()
	if s.ctl.pending150() {
		// The data is read before the 150: a refusal in its place breaks
		// the data connection, for the transfer to end on the refusal.
		data := body.conn
		body.watch = func() func() {
			return s.control.watch150(func() {
				if data != nil {
					data.Close()
				}
			})
		}
	}
	if typ != 'a' && size >= 0 {
		resp.Size = size - offset
		body.left = resp.Size
		body.batching = body.raw != nil
	} else {
		body.left = -1
	}
	resp.Offset = offset
	if typ == 'a' {
		body.conv = &crlfReader{r: r}
	}
	resp.Body = body
	return resp, nil
}

func isNetErr(err error) bool {
	var te *textproto.Error
	return !errors.As(err, &te)
}

func (f *Fetcher) list(s *session, req *protocols.Request) (*protocols.Response, error) {
	raw, mlsd, err := s.capture(func() error {
		_, err := s.c.List("")
		return err
	})
	if err != nil {
		return nil, mapErr("LIST", err)
	}
	now := time.Now()
	loc, probe := f.listZone(s.addr)
	lines := ParseListing(raw, mlsd, now.In(loc))
	if probe && !mlsd {
		if z, ok := f.probeZone(s, req, lines, loc); ok {
			f.setServerZone(s.addr, z)
			if z.list != loc {
				lines = ParseListing(raw, mlsd, now.In(z.list))
			}
		}
	}
	s.release()
	return listingResponse(req, raw, lines), nil
}

func (f *Fetcher) nameList(s *session, req *protocols.Request, t target) (*protocols.Response, error) {
	raw, _, err := s.capture(func() error {
		_, err := s.c.NameList(t.name)
		return err
	})
	if err != nil {
		return nil, mapErr("NLST "+t.name, err)
	}
	s.release()
	var lines []Line
	for _, l := range strings.Split(raw, "\n") {
		l = strings.TrimSuffix(l, "\r")
		if l == "" || l == "." || l == ".." {
			continue
		}
		name := l
		if t.name != "" && strings.HasPrefix(name, t.name+"/") {
			name = name[len(t.name)+1:] // some servers answer NLST dir with dir/name
		}
		lines = append(lines, Line{Raw: l, Name: name, Size: -1})
	}
	return listingResponse(req, raw, lines), nil
}

// listingResponse turns parsed lines into entries whose URLs are relative
// to the listed directory, with the server's own bytes as the body.
func listingResponse(req *protocols.Request, raw string, lines []Line) *protocols.Response {
	base := *req.URL
	base.HasFragment, base.Fragment = false, ""
	p := base.Path
	if i := strings.LastIndexByte(p, ';'); i >= 0 && i > strings.LastIndexByte(p, '/') {
		p = p[:i] // drop ;type=d
	}
	if !strings.HasSuffix(p, "/") {
		p += "/"
	}
	base.Path = p
	prefix := base.String()
	entries := make([]protocols.Entry, 0, len(lines))
	for _, l := range lines {
		e := protocols.Entry{Kind: protocols.KindFile, Name: l.Name, Size: l.Size, ModTime: l.ModTime, Target: l.Target}
		seg := url.EscapeSegment(l.Name)
		switch {
		case l.Dir:
			e.Kind = protocols.KindDirectory
			seg += "/"
		case l.Link:
			e.Kind = protocols.KindLink
		}
		if l.Parsed || l.Name != l.Raw || !strings.ContainsAny(l.Name, " \t") {
			e.URL = prefix + seg
		}
		if !l.Parsed && l.Format == "" && l.Name == l.Raw && strings.ContainsAny(l.Raw, " \t") {
			e.Type = "unparsed"
		}
		entries = append(entries, e)
	}
	return &protocols.Response{
		Kind:      protocols.KindDirectory,
		Body:      io.NopCloser(strings.NewReader(raw)),
		Size:      int64(len(raw)),
		MediaType: "text/plain",
		Name:      suggestedName(req.URL),
		Entries:   entries,
	}
}

// dialTLSConfig returns the TLS configuration for host.
func dialTLSConfig(req *protocols.Request, host string) *tls.Config {
	var c *tls.Config
	if req.TLS != nil {
		c = req.TLS.Clone()
	} else {
		c = &tls.Config{}
	}
	if c.ServerName == "" {
		c.ServerName = host
	}
	if c.ClientSessionCache == nil {
		c.ClientSessionCache = tls.NewLRUClientSessionCache(8) // servers that want the data channel to resume the session
	}
	return c
}
