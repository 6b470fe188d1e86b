package protocols

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/user"
	"strings"
	"time"

	"github.com/urlderef/deref/url"
)

// Fetcher performs exactly one retrieval over one protocol. It is the
// protocol's counterpart of http.RoundTripper: it neither retries nor
// chooses proxies (it dials with Request.Dial), and it returns a nil error
// whenever the server produced an object, even an empty one. A Fetcher is
// safe for concurrent use.
//
// The caller must close Response.Body. Closing early abandons the transfer
// and releases the connection.
type Fetcher interface {
	Fetch(ctx context.Context, req *Request) (*Response, error)
}

// ModTimer is implemented by a Fetcher that can tell the modification
// times of many files of one folder in one exchange (FTP pipelines MDTM on
// one control connection). Request.URL names the folder; the result maps
// each name the server gave a time for to that time, exact to the second
// or better. Names it has no time for are left out.
type ModTimer interface {
	ModTimes(ctx context.Context, req *Request, names []string) (map[string]time.Time, error)
}

// InlineTimer is implemented by a ModTimer whose retrievals can ask a
// file's time with their own commands, at no round trip of their own
// (FTP's MDTM sent with SIZE, EPSV and RETR): InlineTimes reports whether
// that holds for req's server as far as the Fetcher knows. Asking a
// folder's times beforehand (ModTimes) then gains nothing.
type InlineTimer interface {
	InlineTimes(req *Request) bool
}

// Hasher is implemented by a Fetcher whose servers can tell the digests
// of many files of one folder (FTP HASH, XSHA256 and kin). Request.URL
// names the folder; the result is the algorithm ("sha256", "sha512",
// "sha1" or "md5") and each name's digest. Names the server gave no
// digest for are left out; a server that cannot hash gives an error
// wrapping errors.ErrUnsupported.
type Hasher interface {
	Digests(ctx context.Context, req *Request, names []string) (alg string, sums map[string][]byte, err error)
}

// DialFunc opens a connection, as net.Dialer.DialContext does.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Request is one retrieval: the URL and everything the engine decided about
// how to perform it.
type Request struct {
	URL *url.URL

	// Offset asks for the object from this byte on (resume). A Fetcher that
	// cannot resume returns the whole object and sets Response.Offset to 0.
	Offset int64
	// Length > 0 asks for no more than Length bytes from Offset on (a byte
	// range, curl's -r): an HTTP Range with its last byte. A Fetcher may
	// send more; the engine reads no further.
	Length int64
	// Compressed asks for a compressed transfer where the protocol has one
	// (HTTP: Accept-Encoding: gzip, unless a Header field names its own);
	// a Fetcher that gets one says so in Response.Encoding.
	Compressed bool

	// Credentials for the server; see Credentials.
	Credentials Credentials

	// Dial opens connections; nil means a plain net.Dialer.
	Dial DialFunc

	// ConnectTimeout is the engine's bound on connecting. A protocol whose
	// server speaks first (an FTP or NNTP greeting) waits no longer than
	// that for it either (AwaitGreeting): the greeting is part of
	// connecting, as curl counts it. 0 means no bound of its own.
	ConnectTimeout time.Duration

	// DataDial, when set, opens connections to IP addresses that carry
	// one object, a file or a listing, and are read to its end (FTP data
	// connections): it may skip the per-connection work of a general
	// dialer. For a connection whose context says Bulk (a file of known
	// size, 4 MiB or more) it may use blocking system calls, which cost
	// less a byte than the runtime's network poller. Nil means Dial.
	DataDial DialFunc

	// Active, when set, is told that the server is heard from on a
	// connection not opened with Dial for this request (one kept from an
	// earlier retrieval): once when the connection is taken up again, and
	// whenever bytes arrive on it. The engine's idle time-out counts from
	// then. Protocols call MarkActive.
	Active func()

	// TLS is the TLS configuration to use for TLS connections; nil means
	// the defaults, which verify the server's certificate.
	TLS *tls.Config

	// Proxy, when set, is the HTTP proxy or gateway the engine chose for
	// this URL. Only the http protocol acts on it.
	Proxy *url.URL

	// MaxLineLength bounds every line read from the server; 0 means 64 KiB.
	MaxLineLength int
	// Memory is the engine's budget for what its retrievals hold whole at
	// once (see Budget); nil means none.
	Memory *Budget

	// Exchange, when set, asks the fetcher to keep the exchange's heads as
	// they went over the wire, for an archive (an HTTP request and
	// response); a fetcher that cannot leaves it as it is.
	Exchange *Exchange

	// MaxListing bounds a listing, menu or reply held whole in memory to
	// be parsed (an FTP listing, a Gopher menu, a multi-line FTP reply);
	// 0 means 16 MiB. Passing it is an error wrapping ErrTooLarge.
	MaxListing int64

	// Trace, when set, receives the protocol conversation.
	Trace func(TraceEvent)

	// Header holds extra request fields for protocols that have them
	// (HTTP): name and value.
	Header [][2]string

	// ErrorBody asks an HTTP server's error page (a status of 400 or
	// more) for a body: the Response then carries it, and Failure says
	// what the status means, as curl's --fail-with-body has it.
	ErrorBody bool

	// Verbatim asks for the bytes as the server holds them where the URL
	// does not say otherwise: FTP's TYPE I for a URL without ;type=,
	// rather than RFC 1738's guess from the name (TYPE A, CRLF made LF,
	// for a .txt). A crawl or an archive wants the server's bytes.
	Verbatim bool

	// Jar, when set, holds the cookies of HTTP requests to http: and
	// https: URLs: the ones it gives for the URL are sent, and those the
	// response sets are given to it.
	Jar http.CookieJar

	// Anonymous says the retrieval is made for someone other than the
	// user running the program (a gateway's visitor): a fetcher asks the
	// user nothing (a Gopher+ form goes unanswered, as without an Ask
	// function) and logs in with Credentials only, which then hold what
	// the URL itself carries.
	Anonymous bool

	// HeadOnly asks for the object's metadata only: HTTP sends HEAD, FTP
	// stops after SIZE and MDTM. The Response's Body then yields nothing.
	// Protocols that cannot tell metadata apart from the object ignore it,
	// and the caller closes the Body unread.
	HeadOnly bool

	// IfModifiedSince makes the retrieval conditional where the protocol
	// can say so (HTTP; FTP by MDTM and SIZE before RETR; Gopher+ by
	// Mod-Date): an object not
	// modified since then is ErrNotModified. Zero means unconditional.
	IfModifiedSince time.Time
	// LocalSize is the size of the copy IfModifiedSince describes: a
	// protocol that learns the object's size treats another size as a
	// change. 0 means unknown.
	LocalSize int64
	// HTTPAuth is how an HTTP request logs in with Credentials.
	HTTPAuth HTTPAuth
	// IfNoneMatch makes an HTTP retrieval conditional on an entity tag,
	// as the server gave it in Response.ETag (quotes and all): a server
	// whose copy still has it answers ErrNotModified. Other protocols,
	// which have no entity tags, ignore it.
	IfNoneMatch string

	// SizeHint and ModTimeHint are what the caller already knows of the
	// object, from a listing (SizeHint > 0; ModTimeHint exact to the
	// second). A protocol may then skip asking the server (FTP SIZE and
	// MDTM) and report ModTimeHint as the time. The size is never trusted
	// to cut the body short.
	SizeHint    int64
	ModTimeHint time.Time
}

// HTTPAuth says how an HTTP request logs in with its Credentials.
type HTTPAuth int

// The ways of HTTPAuth.
const (
	// AuthBasic sends Basic credentials with the request, as curl does
	// by default, and answers a Digest challenge to them.
	AuthBasic HTTPAuth = iota
	// AuthDigest sends no credentials until the server challenges, and
	// answers with Digest only (curl --digest): the password itself never
	// crosses the wire.
	AuthDigest
	// AuthAny sends no credentials until the server challenges, and
	// answers with Digest where it is offered, else Basic (curl
	// --anyauth).
	AuthAny
)

// Credentials says who to log in as. User and Password come from the URL or
// from ~/.netrc; Prompt, when set, asks for a missing password (the
// command asks on the terminal).
type Credentials struct {
	User        string
	HasUser     bool
	Password    string
	HasPassword bool
	Prompt      func(ctx context.Context, user string) (string, error)
}

// NoPassword says whether the credentials name a user with no password
// and no way to ask for one: a refused login then says so (PasswordHint).
func (c Credentials) NoPassword() bool { return c.HasUser && !c.HasPassword && c.Prompt == nil }

// PasswordHint is what a login refused for want of a password adds to
// its error: that none was given for the user, and the ways to give one.
func PasswordHint(u *url.URL, user string) string {
	if u.Site() == "" { // news:, whose server is configured
		return fmt.Sprintf("no password was given for %s (none in the netrc file, and no terminal to ask on): give one with -u %s:PASSWORD, or in ~/.netrc", user, user)
	}
	return fmt.Sprintf("no password was given for %s (none in the URL or the netrc file, and no terminal to ask on): give one as %s://%s:PASSWORD@%s/, with -u %s:PASSWORD, or in ~/.netrc",
		user, u.Scheme, url.EscapeUserinfo(user), u.Site(), user)
}

// PasswordHint is PasswordHint for the request: an anonymous one (a
// gateway's visitor) is told of the URL only, since no flag, netrc file
// or terminal of the one running the program is theirs.
func (r *Request) PasswordHint(user string) string {
	if !r.Anonymous {
		return PasswordHint(r.URL, user)
	}
	if r.URL.Site() == "" {
		return fmt.Sprintf("no password was given for %s, and a %s: URL carries none", user, r.URL.Scheme)
	}
	return fmt.Sprintf("no password was given for %s: give it in the URL, as %s://%s:PASSWORD@%s/", user, r.URL.Scheme, url.EscapeUserinfo(user), r.URL.Site())
}

// Secret returns the password, if one is known, so that traces can hide it.
func (c Credentials) Secret() string {
	if c.HasPassword {
		return c.Password
	}
	return ""
}

// TraceDir says which way a traced line went.
type TraceDir int

// Directions of a TraceEvent.
const (
	TraceInfo TraceDir = iota // a note from the client: connecting, TLS, redirect
	TraceSend                 // sent to the server
	TraceRecv                 // received from the server
)

// TraceEvent is one line of the protocol conversation, with passwords
// already redacted.
type TraceEvent struct {
	Dir  TraceDir
	Text string
}

// Tracef reports a line of the conversation to r.Trace, if set, with the
// request's password and any argument of a PASS or AUTHINFO PASS command
// replaced by "xxxxx".
func (r *Request) Tracef(dir TraceDir, text string) {
	if r.Trace == nil {
		return
	}
	r.Trace(TraceEvent{Dir: dir, Text: Redact(text, r.Credentials.Secret())})
}

// Redact hides secret in text, and the argument of a PASS or AUTHINFO PASS
// command line, and Basic or Bearer credentials of an Authorization header.
func Redact(text, secret string) string {
	if secret != "" {
		text = strings.ReplaceAll(text, secret, "xxxxx")
	}
	for _, p := range []string{"PASS ", "AUTHINFO PASS ", "AUTHORIZATION: ", "PROXY-AUTHORIZATION: "} {
		if len(text) >= len(p) && strings.EqualFold(text[:len(p)], p) {
			return text[:len(p)] + "xxxxx"
		}
	}
	return text
}

// Dialer returns the request's dial function, or a plain dialer.
func (r *Request) Dialer() DialFunc {
	if r.Dial != nil {
		return r.Dial
	}
	var d net.Dialer
	return d.DialContext
}

// DataDialer returns the request's dial function for data connections;
// see DataDial.
func (r *Request) DataDialer() DialFunc {
	if r.DataDial != nil {
		return r.DataDial
	}
	return r.Dialer()
}

type bulkKey struct{}

// WithBulk returns ctx marked for a DataDial call whose connection
// carries one large object of known size, read to its end.
func WithBulk(ctx context.Context) context.Context {
	return context.WithValue(ctx, bulkKey{}, true)
}

// Bulk reports whether ctx was marked by WithBulk.
func Bulk(ctx context.Context) bool {
	b, _ := ctx.Value(bulkKey{}).(bool)
	return b
}

// MarkActive calls Active, if set.
func (r *Request) MarkActive() {
	if r != nil && r.Active != nil {
		r.Active()
	}
}

// ErrNoGreeting is the error of a server that accepted the connection and
// did not greet within the connect time-out. It wraps ErrTimeout.
var ErrNoGreeting = fmt.Errorf("%w: no greeting from the server", ErrTimeout)

// AwaitGreeting bounds the wait for the first bytes on conn, a connection
// just made, by ConnectTimeout. Call done once the greeting has come; it
// lifts the bound unless ctx has ended (its cancellation may have set a
// deadline of its own). GreetingError turns the read's error into
// ErrNoGreeting when the bound was what ended it.
func (r *Request) AwaitGreeting(ctx context.Context, conn net.Conn) (done func()) {
	if r.ConnectTimeout <= 0 {
		return func() {}
	}
	conn.SetReadDeadline(time.Now().Add(r.ConnectTimeout))
	return func() {
		if ctx.Err() == nil {
			conn.SetReadDeadline(time.Time{})
		}
	}
}

// GreetingError explains err, met while awaiting a greeting: a deadline
// that passed is ErrNoGreeting with the time waited.
func (r *Request) GreetingError(ctx context.Context, err error) error {
	if err != nil && ctx.Err() == nil && r.ConnectTimeout > 0 && errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("%w within %v (the connect time-out)", ErrNoGreeting, r.ConnectTimeout)
	}
	return err
}

// ListingLimit returns MaxListing or its default, 16 MiB: far beyond a
// real server's folder (100,000 entries of ls -l are about 8 MiB).
func (r *Request) ListingLimit() int64 {
	if r.MaxListing > 0 {
		return r.MaxListing
	}
	return 16 << 20
}

// LineLimit returns MaxLineLength or its default.
func (r *Request) LineLimit() int {
	if r.MaxLineLength > 0 {
		return r.MaxLineLength
	}
	return 64 << 10
}

// Kind says what a response designates.
type Kind int

// Kinds of response.
const (
	KindFile        Kind = iota // a data object: Body is its bytes
	KindDirectory               // a directory or menu: Entries lists it, Body holds the raw listing
	KindSearchIndex             // a searchable index: it must be given a search to yield anything
	KindArticleList             // a newsgroup's articles: Entries lists them
	KindSession                 // an interactive session: Session is set, Body is nil
	KindRedirect                // the server points elsewhere: Location is set
	KindInfo                    // a line of text in a listing (a Gopher "i" item), nothing to fetch
	KindLink                    // a listing's symbolic link: Entry.Target says where it points, when known
)

var kindNames = [...]string{"file", "directory", "search", "articles", "session", "redirect", "info", "link"}

// String names the kind.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Response is the result of a retrieval.
type Response struct {
	// Body streams the object (or, for a listing, the server's own listing
	// bytes). It must be closed; Close reports an error the server sends
	// after the data, such as FTP's final reply.
	Body io.ReadCloser

	Kind      Kind
	Size      int64     // bytes that Body will yield; -1 when unknown
	Offset    int64     // where Body starts within the object (resume); 0 otherwise
	ModTime   time.Time // zero when unknown
	MediaType string    // such as "text/plain"; empty when unknown
	// Charset is the character set the server named for a text (a
	// Gemini META's charset parameter); empty when it named none.
	Charset string
	Name    string  // a suggested local file name, from the URL, never from the server
	Entries []Entry // for KindDirectory and KindArticleList

	// Location is where a KindRedirect response points; Status is the
	// protocol's status text ("301 Moved Permanently").
	Location *url.URL
	Status   string
	// Note is a remark for the user about an otherwise normal answer, such
	// as a WAIS search that matched nothing and offers the catalog instead.
	Note string
	// Prompt is the question of a server that asks for input (Gemini's
	// 10 and 11, a KindSearchIndex): the answer goes in the URL's query.
	// Sensitive marks an answer not to be shown (a password).
	Prompt    string
	Sensitive bool

	// Session is the interactive session of a KindSession response.
	Session Session

	// Attributes holds item attributes when the URL asked for them (Gopher+
	// "!" and "$").
	Attributes []Attribute

	// Failure, when set, is what the retrieval failed with although a
	// Body came: an HTTP error page asked for with Request.ErrorBody.
	Failure error

	// ETag is the entity tag HTTP gave the object, as sent (quotes, and a
	// W/ prefix for a weak one); empty when none. See Request.IfNoneMatch.
	ETag string

	// Encoding is the content coding Body is in ("gzip") when the request
	// asked for a compressed transfer (Request.Compressed) and got one;
	// Size is then the coded size. A fetch.Client decodes it, so that its
	// callers always find "" and the object itself.
	Encoding string
}

// Tapper is implemented by a Body whose bytes are converted from those
// the server sent (Gopher's text items and menus: the "." line removed,
// the dot-stuffing undone, CRLF made LF). Tap, called before the first
// Read, has the bytes as they came written to w as the Body is read,
// those that came before at once, so that an archive records what the
// server sent; the Body still yields the object. A Fetcher offers it
// where Request.Verbatim is set.
type Tapper interface {
	Tap(w io.Writer)
}

// Aborter is implemented by a Body whose Close must not run while a Read
// is under way. Abort breaks the transfer's connection, from any
// goroutine, so that a blocked Read returns at once; the caller still
// calls Close afterwards. The engine uses it to enforce time-outs and
// cancellation.
type Aborter interface {
	Abort()
}

// Session is an interactive session (telnet): reading gives the server's
// output, writing sends input, and SetWindowSize reports the terminal's
// size to the server when it asked for it.
type Session interface {
	io.ReadWriteCloser
	SetWindowSize(width, height int) error
}

// Attribute is one attribute block of an item, such as Gopher+'s +ADMIN:
// its name without "+" and ":", the text after the colon, and its indented
// lines with the indentation removed.
type Attribute struct {
	Item  string // the item the block belongs to (its +INFO line), for "$" replies
	Name  string
	Value string
	Lines []string
}

// Entry is one item of a listing: a directory entry, a menu item, an
// article, a search hit. FormatEntry and deref's help topic "listings"
// (cmd/deref/help/listings.md) give the text and JSON forms of every
// field.
type Entry struct {
	Kind Kind   // KindFile, KindDirectory, KindLink, KindSearchIndex, KindSession, KindInfo, KindArticleList
	Name string // the display name
	// Size is in bytes; -1 when unknown (folders, links, sizes a listing
	// gives beyond what an int64 holds). A news article's is the server's
	// count (OVER's :bytes): the article as the server holds it, CRLF line
	// ends, which is what its Body yields (INN may count some of the
	// dot-stuffing of lines beginning with "." too).
	Size int64
	// ModTime is zero when unknown, and never a time the listing cannot
	// mean (a three-digit year, month 13). FTP LIST times, which name no
	// zone, are in UTC once the server's zone is known (ftp.Fetcher's
	// TimeZone).
	ModTime time.Time
	URL     string // where the entry can be dereferenced; empty when it cannot
	Type    string // the protocol's own type (a Gopher type with its Gopher+ "+" or "?" flag, a MIME type), if any

	// Selector, Host and Port address the item where the protocol does so
	// (Gopher menus); URL says the same as a locator.
	Selector string
	Host     string
	Port     int
	// Score is a search hit's relevance as the server ranks it (higher is
	// better, relative to this search only) and Lines its length in lines;
	// both are 0 when the protocol gives none (WAIS gives both).
	Score int64
	Lines int64
	// Number, Author and MessageID describe a news article (its number in
	// the group listed, From, Message-ID); for a newsgroup, Number is the
	// server's estimate of its articles and Description its one-line
	// description.
	Number      int64
	Author      string
	MessageID   string
	Description string

	// Target is where a KindLink entry points, as the server wrote it;
	// empty when the listing does not say.
	Target string
}

// Sentinel errors. Protocols wrap them (fmt.Errorf("...: %w", ErrNotFound))
// and keep their own reply reachable with errors.As.
var (
	ErrBadURL            = errors.New("bad URL")
	ErrUnsupportedScheme = errors.New("unsupported scheme")
	ErrNotRetrievable    = errors.New("not a retrievable object")
	ErrNotFound          = errors.New("not found")
	ErrPermission        = errors.New("permission denied")
	ErrAuth              = errors.New("login refused")
	ErrNetwork           = errors.New("network failure")
	ErrTimeout           = errors.New("timed out")
	ErrProtocol          = errors.New("protocol error")
	ErrShortBody         = errors.New("object ended early")
	ErrTemporary         = errors.New("temporary failure, try again later")
	ErrTooLarge          = errors.New("object larger than the limit")
	ErrRangeNotSatisfied = errors.New("resume offset beyond the end of the object")
	// ErrNotModified answers a conditional retrieval
	// (Request.IfModifiedSince) whose object has not changed.
	ErrNotModified = errors.New("not modified")
	// ErrWrite marks a failure to write the object locally (a full disk, a
	// closed pipe), as opposed to a failure to fetch it.
	ErrWrite = errors.New("write error")
	// ErrLoginWait marks a retrieval ended while it waited for the answer
	// to a password (a time-out, the context): the engine says so as a
	// refused login, never a time-out to try again, since servers that
	// delay an answer (pure-ftpd's, to a wrong password) delay refusals,
	// and trying again would send the password once more.
	ErrLoginWait = errors.New("no answer to the login")
)

// FolderError says the URL names a folder without its closing slash
// (ftp://h/pub for ftp://h/pub/): Folder is the URL with it. It unwraps
// to the not-found error the retrieval met, so that the URL as given
// stays an ErrNotFound; a gateway redirects to Folder, as nginx does.
type FolderError struct {
	Err    error
	Name   string   // the name that is a folder
	Folder *url.URL // the URL with its closing slash
}

// Error says what is missing and the URL to use instead.
func (e *FolderError) Error() string {
	return fmt.Sprintf("%v: %s is a folder: did you mean %s ?", e.Err, e.Name, e.Folder.Redacted())
}

// Unwrap returns the not-found error.
func (e *FolderError) Unwrap() error { return e.Err }

// NetError classifies an error from dialing or reading a connection: a
// timeout wraps ErrTimeout, anything else ErrNetwork, and the original
// error stays reachable.
func NetError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrNetwork) || errors.Is(err, ErrTimeout) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &wrapped{ErrTimeout, err}
	}
	return &wrapped{ErrNetwork, err}
}

type wrapped struct{ kind, err error }

func (w *wrapped) Error() string   { return w.kind.Error() + ": " + w.err.Error() }
func (w *wrapped) Unwrap() []error { return []error{w.kind, w.err} }

// Copier is implemented by bodies that can copy themselves into w faster
// than a Read loop, such as by splicing a socket into a file. CopyTo calls
// step after each chunk with the chunk's size; an error from step stops the
// copy and is returned.
type Copier interface {
	CopyTo(w io.Writer, step func(n int64) error) (int64, error)
}

// UserAddress is the user's mail address as deref states it where a
// protocol asks for one (FTP's anonymous password, a mail's sender): $EMAIL
// when it is fit for a command line, else USER@HOST from the account and
// the host name.
func UserAddress() string {
	if a := os.Getenv("EMAIL"); a != "" && url.CheckArg("", a) == nil {
		return a
	}
	name := "deref"
	if u, err := user.Current(); err == nil && u.Username != "" && url.CheckArg("", u.Username) == nil {
		name = u.Username
	}
	host, _ := os.Hostname()
	if host == "" || url.CheckArg("", host) != nil {
		host = "localhost"
	}
	return name + "@" + host
}

// Exchange is what went over the wire for one retrieval, as an archive
// keeps it: the request head as sent (Authorization values hidden) and
// the response head as received, through its blank line, and the
// server's address. Body is the body of a response the fetcher does not
// pass on (a redirect's, an error's), when it was read whole (Whole): up
// to MaxExchangeBody bytes.
type Exchange struct {
	Request, Response []byte
	IP                string
	Body              []byte
	Whole             bool
	// Type is the media type of the exchange's records where it is not
	// HTTP's ("application/gemini": a request record of the request line,
	// a response record of the header line and the body, as the Gemini
	// archivers write them; "application/finger": Response empty, the
	// response record the answer alone); "" means application/http. Status and
	// PayloadType then say what the index says of the response (its
	// status, its body's media type), and Protocol what WARC-Protocol
	// names ("gemini", "tls/1.3").
	Type                string
	Status, PayloadType string
	Protocol            []string
}

// MaxExchangeBody is the most of a redirect's or an error's body an
// Exchange keeps.
const MaxExchangeBody = 64 << 10
