package fetch

import (
	"bufio"
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	nethttp "net/http"
	neturl "net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/urlderef/deref/internal/blockconn"
	"github.com/urlderef/deref/internal/keylock"
	"github.com/urlderef/deref/internal/netrc"
	"github.com/urlderef/deref/internal/version"
	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/protocols/finger"
	"github.com/urlderef/deref/protocols/ftp"
	"github.com/urlderef/deref/protocols/gemini"
	"github.com/urlderef/deref/protocols/gopher"
	"github.com/urlderef/deref/protocols/http"
	"github.com/urlderef/deref/protocols/mail"
	"github.com/urlderef/deref/protocols/nex"
	"github.com/urlderef/deref/protocols/nntp"
	"github.com/urlderef/deref/protocols/prospero"
	"github.com/urlderef/deref/protocols/spartan"
	"github.com/urlderef/deref/protocols/telnet"
	"github.com/urlderef/deref/protocols/wais"
	"github.com/urlderef/deref/url"
)

// The contract types, aliased so that users import one package.
type (
	// Response is a streamed object and its metadata (the fields are
	// documented at protocols.Response):
	//
	//	Body       io.ReadCloser  // the object, streamed; Close reports a final error (FTP's 226); never nil, empty for a session
	//	Kind       Kind           // KindFile, KindDirectory, KindSearchIndex, KindArticleList, KindSession, KindRedirect
	//	Size       int64          // bytes Body yields; -1 when unknown
	//	Offset     int64          // where Body starts within the object (resume)
	//	ModTime    time.Time      // zero when unknown
	//	MediaType  string         // "text/plain"; empty when unknown
	//	Name       string         // a local file name suggested by the URL, never by the server
	//	Entries    []Entry        // a listing's items (KindDirectory, KindArticleList)
	//	Location   *url.URL       // where a KindRedirect points; Status its status text
	//	Note       string         // a remark about an otherwise normal answer
	//	Session    protocols.Session   // a KindSession's interactive session
	//	Attributes []protocols.Attribute // Gopher+ attributes when asked for
	//
	// What each scheme gives in them:
	//
	//   - http, https: Body is the entity (decoded when a gzip transfer
	//     was asked for), KindFile; Size is Content-Length, ModTime
	//     Last-Modified, MediaType Content-Type's type, Status the status
	//     line's text, ETag the entity tag. Redirects are followed by the
	//     Client: a caller never sees KindRedirect.
	//   - ftp, ftps: a file is KindFile with its bytes (TYPE I, or TYPE A
	//     where the URL or a text name asks: LF line ends), Size from SIZE
	//     or the 150 reply, ModTime from MDTM; a folder (a URL ending in
	//     "/", or ;type=d) is KindDirectory, Entries from MLSD or LIST
	//     (Size, ModTime, Target of links), Body the server's listing.
	//   - gopher, gophers: a text item (0) is KindFile, dot-terminator and
	//     dot-stuffing removed, CRLF line ends made LF; a menu (1) KindDirectory with an Entry per
	//     line (Type, Selector, Host, Port; info lines KindInfo); a search
	//     (7) with no words KindSearchIndex, with words the menu of hits;
	//     other types the bytes until the server closes. Gopher+ items
	//     give Size, ModTime and MediaType from +INFO and +VIEWS, and
	//     Attributes for "!" and "$".
	//   - news, nntp (and snews, nntps): an article is KindFile,
	//     message/rfc822, as the server holds it (CRLF line ends), ModTime
	//     its Date, Attributes its Subject, From, Date, Newsgroups and
	//     Message-ID; a group is KindArticleList with an Entry per article
	//     (Number, Author, MessageID, Lines, Size as the overview gives
	//     it, ModTime); news:* and wildmats are KindDirectory of groups
	//     (Number the article count, Description with NNTP.Descriptions).
	//   - wais: a database without words is KindSearchIndex; a search is
	//     KindDirectory with an Entry per hit (Score, Lines, Size), Note
	//     saying when nothing matched; a document is KindFile.
	//   - file: a file is KindFile with Size and ModTime from the file
	//     system, a folder KindDirectory.
	//   - telnet: KindSession, its Session to read and write.
	Response = protocols.Response
	// Entry is one item of a listing; see protocols.Entry.
	Entry = protocols.Entry
	// Kind says what a Response designates; see protocols.Kind.
	Kind = protocols.Kind
	// TraceEvent is one line of a protocol conversation.
	TraceEvent = protocols.TraceEvent
	// Fetcher is what a protocol implements; see protocols.Fetcher.
	Fetcher = protocols.Fetcher
	// Request is what a Fetcher is given; see protocols.Request.
	Request = protocols.Request
	// Scheme describes a scheme to Client.Register; see protocols.Scheme.
	Scheme = protocols.Scheme
	// HTTPAuth is how HTTP requests log in; see Client.HTTPAuth.
	HTTPAuth = protocols.HTTPAuth
)

// The ways of HTTPAuth, re-exported from package protocols.
const (
	AuthBasic  = protocols.AuthBasic
	AuthDigest = protocols.AuthDigest
	AuthAny    = protocols.AuthAny
)

// Kinds of response, re-exported from package protocols.
const (
	KindFile        = protocols.KindFile
	KindDirectory   = protocols.KindDirectory
	KindSearchIndex = protocols.KindSearchIndex
	KindArticleList = protocols.KindArticleList
	KindSession     = protocols.KindSession
	KindRedirect    = protocols.KindRedirect
	KindInfo        = protocols.KindInfo
	KindLink        = protocols.KindLink
)

// Sentinel errors, re-exported from package protocols.
var (
	ErrBadURL            = protocols.ErrBadURL
	ErrUnsupportedScheme = protocols.ErrUnsupportedScheme
	ErrNotRetrievable    = protocols.ErrNotRetrievable
	ErrNotFound          = protocols.ErrNotFound
	ErrPermission        = protocols.ErrPermission
	ErrAuth              = protocols.ErrAuth
	ErrNetwork           = protocols.ErrNetwork
	ErrTimeout           = protocols.ErrTimeout
	ErrProtocol          = protocols.ErrProtocol
	ErrShortBody         = protocols.ErrShortBody
	ErrTemporary         = protocols.ErrTemporary
	ErrTooLarge          = protocols.ErrTooLarge
	ErrRangeNotSatisfied = protocols.ErrRangeNotSatisfied
	ErrNotModified       = protocols.ErrNotModified
	// ErrExists is a download skipped because its file is there already
	// (DownloadOptions.SkipExisting).
	ErrExists = errors.New("the file is there already")
	// ErrNoName is a download of a URL that names no file (a folder,
	// http://h/, ftp://h/pub/) with no DownloadOptions.Name: curl -O
	// refuses it too, where a name made up would be overwritten by the
	// next such URL.
	ErrNoName = errors.New("the URL names no file to save it as")
	// ErrUnsafePort refuses a URL whose port belongs to another protocol
	// (RFC 1738 §6). It wraps [ErrBadURL].
	ErrUnsafePort = fmt.Errorf("%w: unsafe port", protocols.ErrBadURL)
	// ErrRedirect refuses a redirect: to file:, from https to http, to a
	// scheme not allowed, a loop, or too many. It wraps ErrProtocol.
	ErrRedirect = fmt.Errorf("%w: redirect refused", protocols.ErrProtocol)
)

// Error is the error of every Client method: the operation, the URL with
// its password redacted, and the cause, which unwraps to a sentinel such as
// [ErrNotFound] and to the protocol's own error.
type Error struct {
	Op  string // "get", "download"
	URL string // redacted
	Err error
}

// Error says what failed, on which URL (its password hidden), and why.
// An Error whose cause is an Error of the same URL says the URL once:
// "mirror URL: network failure: ...", not "mirror URL: get URL: ...".
func (e *Error) Error() string { return e.Op + " " + e.URL + ": " + Cause(e).Error() }

// Cause is what err says after its URL: the cause of a *Error (of any
// depth of them for one URL), for a line that names the URL itself;
// any other error as it is.
func Cause(err error) error {
	e, ok := err.(*Error)
	if !ok {
		return err
	}
	cause := e.Err
	for {
		inner, ok := cause.(*Error)
		if !ok || inner.URL != e.URL {
			return cause
		}
		cause = inner.Err
	}
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Client dereferences URLs. Its zero value is not usable: call NewClient,
// which wires every built-in protocol. A Client is safe for concurrent use
// once configured.
//
// Each built-in protocol is configured through its fetcher, a field of
// the Client set before the first retrieval, not by registering the
// scheme again (which panics):
//
//	c := fetch.NewClient()
//	c.NNTP.Server = "news.example.org:119" // the server of news: URLs
//	c.FTP.ExplicitTLS = true               // AUTH TLS on ftp:// URLs
//	c.Gopher.Ask = askOnTerminal           // answers to Gopher+ forms
//	c.Mail.Dir = "/home/me/Maildir"        // where mid: URLs are looked up
type Client struct {
	// ConnectTimeout bounds each dial; 0 means 30 seconds.
	ConnectTimeout time.Duration
	// IdleTimeout ends a transfer (with ErrTimeout) when no byte arrives for
	// this long, and bounds the wait for a server's first reply; 0 means
	// 2 minutes, negative means no limit.
	IdleTimeout time.Duration
	// LowSpeedLimit ends a transfer (with ErrTimeout) that moves fewer
	// than LowSpeedLimit bytes a second for LowSpeedTime on end (30
	// seconds when 0), as curl's --speed-limit and --speed-time do: a
	// server that trickles a byte now and then keeps IdleTimeout from
	// ever running out. 0 means no such limit.
	LowSpeedLimit int64
	LowSpeedTime  time.Duration
	// MaxLineLength bounds every line read from a server (replies,
	// headers, menu and overview lines); 0 means 64 KiB. MaxListing bounds
	// what is held whole to be parsed (a listing, a menu, a multi-line
	// reply); 0 means 16 MiB. Passing either is an error, never more
	// memory.
	MaxLineLength int
	MaxListing    int64
	// MemoryBudget bounds what all retrievals of the Client hold whole at
	// once (listings, menus, overviews, response heads), so that many
	// servers sending without end at once cannot exhaust memory: a
	// retrieval that finds it spent fails with a temporary error, which
	// retries (the mirror's, --retry) try again. 0 means 64 MiB, negative
	// no bound. Set it before the first retrieval.
	MemoryBudget int64

	// MaxBytes ends a transfer with ErrTooLarge past this many bytes, and
	// refuses one whose announced size is larger before its body; 0
	// means no limit.
	MaxBytes int64

	// MaxRedirects bounds the redirects followed; 0 means 10, negative none.
	MaxRedirects int
	// AllowDowngrade lets a redirect lead from a secure scheme to its
	// plain counterpart (https to http, ftps to ftp).
	AllowDowngrade bool
	// RedirectSchemes names the schemes a redirect may lead to besides
	// http, https and ftp. A redirect never leads to file:.
	RedirectSchemes []string
	// RedirectOnly, when not nil, names the only schemes a redirect may
	// lead to, in place of http, https, ftp and RedirectSchemes (curl's
	// --proto-redir). A redirect never leads to file: all the same.
	RedirectOnly []string
	// OnlySchemes, when not nil, names the only schemes retrieved, whether a
	// URL is asked for, a redirect leads to it, or another scheme's URL is
	// handed to it (curl's --proto); any other is ErrUnsupportedScheme.
	OnlySchemes []string

	// AllowPorts lists ports that may be used even though they are the
	// well-known port of another protocol (RFC 1738 §6).
	AllowPorts []int

	// Proxy chooses the proxy for a URL: an http:// proxy or gateway, or a
	// socks5:// (or socks5h://) one. nil means ProxyFromEnvironment; a
	// function returning nil, nil means no proxy. NetHTTPProxy makes one
	// of a function written for net/http's Transport.Proxy.
	Proxy func(u *url.URL) (*url.URL, error)
	// NoProxy lists hosts and domain suffixes reached directly, whatever
	// Proxy or the environment says (curl's --noproxy), as no_proxy lists
	// them: "example.org, .local"; "*" is every host.
	NoProxy string
	// Gateways maps a scheme to an HTTP gateway for it, used before any
	// proxy. A gateway given as "http://gw:8001/" receives the absolute URL
	// in its request line, as a proxy does; one holding "%s" is requested
	// with the URL, escaped, put in place of the "%s".
	Gateways map[string]string

	// NetrcFile is the netrc file consulted for credentials the URL lacks;
	// NewClient sets it to $NETRC or ~/.netrc; empty means none.
	NetrcFile string
	// Prompt asks for the password of a user the URL names without one;
	// when nil, the netrc file is consulted, and without an entry there the
	// server's refusal is ErrAuth.
	Prompt func(ctx context.Context, u *url.URL, user string) (string, error)
	// User and Password log in to servers whose URL names no user, on
	// every scheme with a login, as curl's -u does (before the netrc
	// file); HasPassword false with a Prompt asks for the password. They
	// are not sent to another site a redirect leads to.
	User        string
	Password    string
	HasPassword bool

	// Header holds request header fields sent with every HTTP request
	// (and to HTTP gateways), name and value, after deref's own; a field
	// named here replaces deref's (User-Agent, Accept). Authorization and
	// Cookie fields are not sent after a redirect to another site (scheme,
	// host or port), as User is not, and as curl leaves them out.
	Header [][2]string
	// Jar, when set, keeps the cookies of HTTP(S) responses and sends them
	// back with the requests that follow, redirects included, to the
	// sites they belong to (net/http/cookiejar makes one).
	Jar nethttp.CookieJar
	// HTTPAuth is how HTTP requests log in with a user and password:
	// AuthBasic (the zero value) sends Basic credentials with the request
	// and answers a Digest challenge to them; AuthDigest waits for the
	// challenge and answers with Digest only; AuthAny waits and answers
	// Digest, or Basic where that is all the server takes. In every mode
	// a Digest login a server accepted answers the next requests to that
	// server (scheme, host and port) before it asks, with the same nonce
	// and the next nonce count, until it asks again.
	HTTPAuth HTTPAuth

	// Retry, when set, tries a retrieval again after a temporary failure
	// (Temporary), as the mirror does: FetchWith when no Response has come
	// yet, DownloadWith at any point, continuing NAME.part. Nil tries once.
	Retry *Retry

	// Recorder, when set, is given every retrieval for an archive (the
	// fetch/warc package writes them as WARC records). A retrieval of part
	// of an object (FetchOptions.Offset past its first byte that the
	// server honoured, or a Length) is given to it only where the exchange
	// says so itself (an HTTP 206 response): elsewhere its record would
	// claim the part was the object. DownloadWith then fetches objects
	// whole (see DownloadOptions.Resume), and every retrieval asks for the
	// server's bytes (FetchOptions.Verbatim: FTP's TYPE I where the URL
	// names no type), not text with its line ends made this machine's.
	Recorder Recorder

	// Trace receives each protocol exchange, passwords redacted.
	Trace func(u *url.URL, ev TraceEvent)
	// Progress, when set, is called as body bytes arrive.
	Progress func(p Progress)

	// TLSConfig is used for TLS connections; nil verifies certificates
	// against the system roots.
	TLSConfig *tls.Config
	// Dial opens network connections; nil means a net.Dialer with
	// ConnectTimeout.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Network, when "tcp4" or "tcp6", connects over that IP version only
	// (curl's and wget's -4 and -6): a host name's addresses of the other
	// are passed over, and an address of the other is an error. Dial is
	// given it in place of "tcp".
	Network string
	// LocalAddr, when set, is the address connections are made from
	// (curl's --interface, wget's --bind-address): only the server's
	// addresses of its IP version are tried. It is for the plain dialer:
	// with Dial set it is an error.
	LocalAddr net.IP
	// Resolve sends the connections for a "host:port" key (host in lower
	// case, an IPv6 one in brackets) to the "address:port" it maps to,
	// whatever the DNS says (curl's --resolve); the request still names
	// the host.
	Resolve map[string]string
	// Compressed asks HTTP servers for a gzip transfer of a whole object
	// (not of a range, a resume, a segment or a HEAD), as curl's
	// --compressed does, and decodes it: fewer bytes on the wire, the
	// same object, whose Size is then unknown (-1). A Recorder gets the
	// transfer as it came.
	Compressed bool

	// FTP is the ftp: and ftps: fetcher; set its fields (method, explicit
	// TLS, anonymous password) before the first Get.
	FTP *ftp.Fetcher
	// Gopher is the gopher: and gophers: fetcher; set Ask to fill in
	// Gopher+ forms.
	Gopher *gopher.Fetcher
	// WAIS is the wais: fetcher.
	WAIS *wais.Fetcher
	// Prospero is the prospero: fetcher (ARDP over UDP): its time-outs,
	// retries and window.
	Prospero *prospero.Fetcher
	// Gemini is the gemini: fetcher: its known-hosts file of keys
	// trusted on first use (KnownHosts) and its TLS session cache.
	Gemini *gemini.Fetcher
	// Finger, Spartan and Nex are the fetchers of finger:, spartan: and
	// nex: (Finger.Forward sends user@host queries, refused otherwise).
	Finger  *finger.Fetcher
	Spartan *spartan.Fetcher
	Nex     *nex.Fetcher
	// Mail is the mid: and cid: fetcher; set its Dir to a Maildir or mbox.
	Mail *mail.Fetcher
	// URNResolver is the RFC 2169 resolver urn: names are resolved by
	// (an http or https URL); empty means urn: URLs fail.
	URNResolver string
	// Telnet is the telnet: fetcher: its responses are sessions.
	Telnet *telnet.Fetcher
	// NNTP is the news:, snews:, nntp: and nntps: fetcher; set its Server
	// for news: URLs (else $NNTPSERVER, else "news").
	NNTP *nntp.Fetcher

	mu      sync.RWMutex
	schemes map[string]protocols.Scheme

	budgetOnce sync.Once
	budget     *protocols.Budget

	netrcMu   sync.Mutex
	netrcSeen netrcStamp
	netrcList []netrc.Entry
	httpF     *http.Fetcher

	targets keylock.Set // the files being downloaded (see Client.download)
	folders openFolders // the folders they are written into
}

// Progress reports a transfer's state to [Client.Progress].
type Progress struct {
	URL   *url.URL
	Bytes int64 // received so far in this transfer
	Total int64 // expected in this transfer; -1 when unknown
	// Offset is the byte of the object this transfer began at: what a
	// resumed download had already, 0 otherwise. A bar for the whole
	// object shows Offset+Bytes of Offset+Total.
	Offset int64
	Start  time.Time
	Done   bool
}

// NewClient returns a Client with every built-in protocol registered.
func NewClient() *Client {
	c := &Client{NetrcFile: netrc.DefaultPath()}
	c.httpF = &http.Fetcher{UserAgent: version.UserAgent()}
	c.FTP = &ftp.Fetcher{}
	c.Gopher = &gopher.Fetcher{}
	c.WAIS = &wais.Fetcher{}
	c.Prospero = &prospero.Fetcher{}
	c.Gemini = &gemini.Fetcher{}
	c.Finger, c.Spartan, c.Nex = &finger.Fetcher{}, &spartan.Fetcher{}, &nex.Fetcher{}
	c.Mail = &mail.Fetcher{}
	c.Telnet = &telnet.Fetcher{}
	c.NNTP = &nntp.Fetcher{}
	c.Register(c.builtins()...)
	return c
}

// Schemes lists the registered schemes that have a fetcher, sorted.
func (c *Client) Schemes() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var s []string
	for k, v := range c.schemes {
		if v.Fetcher != nil {
			s = append(s, k)
		}
	}
	slices.Sort(s)
	return s
}

var defaultClient = sync.OnceValue(NewClient)

// DefaultClient returns the Client used by the package-level functions.
func DefaultClient() *Client { return defaultClient() }

// Get dereferences raw with the default client.
func Get(ctx context.Context, raw string) (*Response, error) {
	return DefaultClient().Get(ctx, raw)
}

// Download dereferences raw with the default client into dir.
func Download(ctx context.Context, raw, dir string) (string, error) {
	return DefaultClient().Download(ctx, raw, dir)
}

// Get parses raw and dereferences it: see Fetch.
func (c *Client) Get(ctx context.Context, raw string) (*Response, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, &Error{Op: "get", URL: url.RedactString(raw), Err: fmt.Errorf("%w: %w", ErrBadURL, err)}
	}
	return c.Fetch(ctx, u, 0)
}

// Fetch dereferences u from byte offset on, following redirects, and
// returns the streamed response. The caller must close Body (a listing's
// Entries are complete without reading it).
func (c *Client) Fetch(ctx context.Context, u *url.URL, offset int64) (*Response, error) {
	return c.FetchWith(ctx, u, FetchOptions{Offset: offset})
}

// FetchOptions adjust one retrieval made with FetchWith.
type FetchOptions struct {
	// Offset asks for the object from this byte on (resume).
	Offset int64
	// Length > 0 asks for no more than Length bytes from Offset on (a byte
	// range): the body ends there, whatever the server sends, and so
	// does Size. A server that ignores Offset (Response.Offset 0) gets
	// Offset more bytes, which the caller skips.
	Length int64
	// IfModifiedSince makes the retrieval conditional: asked of the server
	// where the protocol allows (HTTP If-Modified-Since, FTP MDTM,
	// Gopher+ Mod-Date), and judged by the response's own modification
	// time (and size, with LocalSize) from a server that ignores it. An
	// object no newer is an error wrapping [ErrNotModified].
	IfModifiedSince time.Time
	// LocalSize is the size of the copy IfModifiedSince describes; see
	// protocols.Request.
	LocalSize int64
	// IfNoneMatch makes an HTTP retrieval conditional on an entity tag
	// an earlier Response.ETag gave (curl --etag-compare): a server whose
	// copy still has it answers with an error wrapping [ErrNotModified].
	// Other schemes ignore it.
	IfNoneMatch string
	// HeadOnly asks for the metadata only (HTTP HEAD; FTP without RETR);
	// see protocols.Request.
	HeadOnly bool
	// SizeHint and ModTimeHint pass on what a listing said of the object;
	// see protocols.Request.
	SizeHint    int64
	ModTimeHint time.Time
	// Progress, when set, is called as this transfer's body bytes arrive,
	// before [Client.Progress]. It may block to slow the transfer down;
	// Client.Progress then reports the bytes at the pace let through.
	Progress func(Progress)
	// Trace, when set, receives this retrieval's protocol conversation
	// (passwords redacted), besides [Client.Trace].
	Trace func(TraceEvent)
	// Redirect, when set, is called with each redirect followed (the URL
	// left and the one it leads to), before the next request.
	Redirect func(from, to *url.URL)
	// ErrorBody makes an HTTP error status (400 or more) give its page
	// as the Response's Body, with Failure the error it would have been
	// (curl's --fail-with-body); see protocols.Request.
	ErrorBody bool
	// Header holds request fields for this retrieval (HTTP), such as a
	// crawl's Referer; a field [Client.Header] names too is left out,
	// the Client's going instead.
	Header [][2]string
	// Anonymous makes the retrieval one anybody could make: it logs in
	// with the URL's own user and password only, never with what the
	// Client holds for its user (User and Password, the netrc file, the
	// Prompt, Header's Authorization and Cookie fields, the Jar, the
	// TLSConfig's client certificates), and asks nobody anything (a
	// Gopher+ form goes unanswered). A gateway's requests are anonymous,
	// whatever Client it is given.
	Anonymous bool
	// Verbatim asks for the object's bytes as the server holds them where
	// the URL does not say otherwise (FTP's TYPE I for a URL without
	// ;type=); see protocols.Request. A Client with a Recorder always
	// asks it: an archive holds the server's bytes, as wget's does.
	Verbatim bool

	segment bool // one segment of a segmented download: no Client.Progress
}

// FetchWith is Fetch with per-retrieval options.
func (c *Client) FetchWith(ctx context.Context, u *url.URL, o FetchOptions) (*Response, error) {
	if c.Retry == nil {
		return c.fetchWith(ctx, u, o)
	}
	var resp *Response
	err := c.Retry.Do(ctx, func() error {
		var err error
		resp, err = c.fetchWith(ctx, u, o)
		return err
	}, nil)
	return resp, err
}

// fetchWith is FetchWith without [Client.Retry].
func (c *Client) fetchWith(ctx context.Context, u *url.URL, o FetchOptions) (*Response, error) {
	resp, err := c.fetchRedirects(ctx, u, o)
	if err != nil {
		var fe *Error
		if errors.As(err, &fe) {
			return nil, err
		}
		return nil, &Error{Op: "get", URL: u.Redacted(), Err: err}
	}
	if resp.Body == nil {
		// Nothing to read (a session, whose Session has its own Close),
		// but a Body all the same, which a caller may close as always.
		resp.Body = emptyBody{}
	}
	return resp, nil
}

// NotAnObject closes a Response of an interactive session (KindSession)
// that was asked for as an object, by a download or a crawl, and returns
// the error that says so (wrapping ErrNotRetrievable).
func NotAnObject(resp *Response, u *url.URL) error {
	if resp.Session != nil {
		resp.Session.Close()
	}
	resp.Body.Close()
	return fmt.Errorf("%w: %s designates an interactive session, not an object", ErrNotRetrievable, u.Redacted())
}

// emptyBody is the Body of a Response with nothing to read.
type emptyBody struct{}

func (emptyBody) Read([]byte) (int, error) { return 0, io.EOF }
func (emptyBody) Close() error             { return nil }

func (c *Client) fetchRedirects(ctx context.Context, u *url.URL, o FetchOptions) (*Response, error) {
	max := c.MaxRedirects
	if max == 0 {
		max = 10
	}
	seen := map[string]bool{u.Normalize().String(): true}
	cur := u
	for hops := 0; ; hops++ {
		resp, err := c.fetchOnce(ctx, cur, o, cur.Scheme == u.Scheme && cur.Site() == u.Site())
		if err != nil {
			if cur != u {
				return nil, &Error{Op: "get", URL: cur.Redacted(), Err: err}
			}
			return nil, err
		}
		if resp.Kind != protocols.KindRedirect {
			return resp, nil
		}
		next := resp.Location
		c.trace(cur, protocols.TraceInfo, "redirect ("+resp.Status+") to "+next.Redacted())
		limit := max
		if s, _ := c.scheme(cur.Scheme); s.MaxRedirects > 0 && (limit < 0 || s.MaxRedirects < limit) {
			limit = s.MaxRedirects
		}
		switch {
		case max < 0 || hops >= limit:
			return nil, fmt.Errorf("%w: more than %d redirects", ErrRedirect, hops)
		case c.local(next.Scheme):
			return nil, fmt.Errorf("%w: a redirect never leads to %s: (%s)", ErrRedirect, next.Scheme, next.Redacted())
		case c.downgrade(cur.Scheme, next.Scheme) && !c.AllowDowngrade:
			return nil, fmt.Errorf("%w: from %s to %s (%s)", ErrRedirect, cur.Scheme, next.Scheme, next.Redacted())
		case !c.redirectScheme(next.Scheme):
			return nil, fmt.Errorf("%w: to scheme %s: (%s)", ErrRedirect, next.Scheme, next.Redacted())
		}
		key := next.Normalize().String()
		if seen[key] {
			return nil, fmt.Errorf("%w: loop at %s", ErrRedirect, next.Redacted())
		}
		if o.Redirect != nil {
			o.Redirect(cur, next)
		}
		seen[key] = true
		if _, err := url.Parse(next.String()); err != nil {
			return nil, fmt.Errorf("%w: to a bad URL: %w", ErrRedirect, err)
		}
		cur = next
	}
}

// allowed refuses u when OnlySchemes leaves its scheme out.
func (c *Client) allowed(u *url.URL) error {
	if c.OnlySchemes != nil && !slices.Contains(c.OnlySchemes, u.Scheme) {
		return fmt.Errorf("%w: %s: not among the schemes allowed (%s)", ErrUnsupportedScheme, u.Scheme, strings.Join(c.OnlySchemes, ", "))
	}
	return nil
}

func (c *Client) redirectScheme(name string) bool {
	if c.RedirectOnly != nil {
		return slices.Contains(c.RedirectOnly, name)
	}
	s, _ := c.scheme(name)
	return s.Redirect || slices.Contains(c.RedirectSchemes, name)
}

// RedirectDefaults lists, sorted, the schemes curl lets a redirect lead
// to unless --proto-redir says otherwise: those the table lets redirects
// lead to (Scheme.Redirect), and the protected counterparts of those
// (ftps of ftp).
func (c *Client) RedirectDefaults() []string {
	var out []string
	for _, name := range c.Schemes() {
		s, _ := c.scheme(name)
		p, _ := c.scheme(s.Plain)
		if s.Redirect || s.Secure && p.Redirect {
			out = append(out, name)
		}
	}
	return out
}

// Follows says whether a crawler may follow a link found in the object
// at from to the URL to: to's scheme is one the Client retrieves objects
// of (not mailto:, not an interactive session such as telnet:, not a
// scheme it does not know), and a scheme naming this machine's files
// (file:) is followed only from an object of that scheme, so that a page
// from elsewhere never has a crawl read local files.
func (c *Client) Follows(from, to *url.URL) bool {
	s, ok := c.scheme(to.Scheme)
	switch {
	case !ok || s.Fetcher == nil || s.Session:
		return false
	case s.Local:
		return from != nil && from.Scheme == to.Scheme
	}
	return true
}

// local says whether the scheme names this machine's files.
func (c *Client) local(name string) bool {
	s, _ := c.scheme(name)
	return s.Local
}

// downgrade says whether a redirect from one scheme to another gives up
// the first one's protection for its plain counterpart (https to http).
func (c *Client) downgrade(from, to string) bool {
	s, _ := c.scheme(from)
	return s.Plain != "" && s.Plain == to
}

// ownFields is the fields of a retrieval's own header whose names the
// Client's header does not hold.
func ownFields(own, client [][2]string) [][2]string {
	return slices.DeleteFunc(slices.Clone(own), func(f [2]string) bool {
		return slices.ContainsFunc(client, func(g [2]string) bool { return strings.EqualFold(f[0], g[0]) })
	})
}

// fetchOnce performs one retrieval without following redirects.
// login says whether Client.User may be sent: the URL is at the site the
// caller asked for.
func (c *Client) fetchOnce(ctx context.Context, u *url.URL, o FetchOptions, login bool) (*Response, error) {
	req := &protocols.Request{URL: u, Jar: c.Jar, HTTPAuth: c.HTTPAuth, Offset: o.Offset, Length: o.Length, IfModifiedSince: o.IfModifiedSince, LocalSize: o.LocalSize, IfNoneMatch: o.IfNoneMatch, HeadOnly: o.HeadOnly, SizeHint: o.SizeHint, ModTimeHint: o.ModTimeHint, Trace: o.Trace,
		Compressed: c.Compressed && o.Offset == 0 && o.Length == 0 && !o.HeadOnly && !o.segment, ErrorBody: o.ErrorBody, Header: ownFields(o.Header, c.Header), Verbatim: o.Verbatim || c.Recorder != nil}
	var conv *conversation
	if c.Recorder != nil {
		conv = &conversation{}
		req.Exchange = &protocols.Exchange{}
		if s, _ := c.scheme(u.Scheme); s.Conversation {
			own := req.Trace
			req.Trace = func(ev TraceEvent) {
				conv.add(ev)
				if own != nil {
					own(ev)
				}
			}
		}
	}
	f, err := c.prepare(req)
	if err != nil {
		return nil, err
	}
	if o.Anonymous {
		req.Anonymous, req.Jar, login = true, nil, false
		if t := req.TLS; t != nil && (len(t.Certificates) > 0 || t.GetClientCertificate != nil) {
			req.TLS = t.Clone()
			req.TLS.Certificates, req.TLS.GetClientCertificate = nil, nil
		}
	}
	if err := c.credentials(req, login); err != nil {
		return nil, err
	}
	if !login {
		req.Header = slices.DeleteFunc(slices.Clone(req.Header), func(h [2]string) bool {
			return strings.EqualFold(h[0], "Authorization") || strings.EqualFold(h[0], "Cookie")
		})
	}
	fctx, cancel, done := c.watched(ctx, req)
	resp, err := f.Fetch(fctx, req)
	if err = done(err); err != nil {
		cancel()
		if conv != nil && !o.HeadOnly {
			c.recordUnpassed(ctx, req, &Response{}, conv)
		}
		return nil, err
	}
	if resp.Failure == nil && notNewer(o, resp) {
		if resp.Body != nil {
			resp.Body.Close()
		}
		cancel()
		return nil, fmt.Errorf("%w since %s (the server's copy is of %s)", ErrNotModified, o.IfModifiedSince.UTC().Format(time.RFC3339), resp.ModTime.UTC().Format(time.RFC3339))
	}
	if resp.Body != nil && !o.HeadOnly && c.MaxBytes > 0 && resp.Size > c.MaxBytes {
		// Refused before its first byte, as curl's --max-filesize does
		// when the size is announced: no part of it is worth keeping.
		resp.Body.Close()
		cancel()
		return nil, fmt.Errorf("%w: %d bytes announced, more than %d", ErrTooLarge, resp.Size, c.MaxBytes)
	}
	limit := int64(-1) // the bytes of a range (Length) to read, past the guard
	if resp.Body != nil && !o.HeadOnly && o.Length > 0 && resp.Kind == KindFile && resp.Failure == nil {
		limit = o.Length + o.Offset - resp.Offset // more when the server sent from an earlier byte
		resp.Size = min(resp.Size, limit)         // -1 stays unknown
	}
	inner := resp.Body // the protocol's own, which may be tapped (protocols.Tapper)
	if resp.Body != nil {
		size := resp.Size
		if o.HeadOnly {
			size = -1 // the size is the object's; the body of a HEAD is empty
		}
		resp.Body = c.guard(ctx, u, resp, size, cancel, o.Progress, o.segment)
	} else {
		cancel()
	}
	if conv != nil && (resp.Offset > 0 || o.Length > 0) && len(req.Exchange.Response) == 0 && req.Exchange.Type == "" {
		conv = nil // a part, which only an exchange of its own (HTTP's) records as one
	}
	if conv != nil && !o.HeadOnly && resp.Body == nil {
		c.recordUnpassed(ctx, req, resp, conv)
	} else if conv != nil && !o.HeadOnly {
		if w := c.Recorder.Record(ctx, c.retrieval(req, resp, conv)); w != nil {
			recorded := &recordedBody{ReadCloser: resp.Body, w: w, size: resp.Size, listing: resp.Kind == KindDirectory || resp.Kind == KindArticleList}
			if t, ok := inner.(protocols.Tapper); ok {
				t.Tap(w) // the bytes the server sent, not the object made of them
				recorded.tapped = true
			}
			if resp.Body == nil {
				recorded.ReadCloser, recorded.size = io.NopCloser(strings.NewReader("")), 0
			}
			resp.Body = recorded
		}
	}
	if limit >= 0 && resp.Body != nil {
		// Above the guard, whose time-outs abort the body below.
		resp.Body = limitedBody{io.LimitReader(resp.Body, limit), resp.Body}
	}
	if resp.Encoding != "" && resp.Body != nil {
		if resp.Encoding != "gzip" {
			resp.Body.Close()
			return nil, fmt.Errorf("%w: %s sent in a coding deref does not read: %q", ErrProtocol, u.Redacted(), resp.Encoding)
		}
		resp.Body, resp.Size, resp.Encoding = &gunzipBody{src: resp.Body, max: c.MaxBytes}, -1, ""
	}
	return resp, nil
}

// gunzipBody is a body sent in the gzip coding (Client.Compressed),
// decoded as it is read, and no more than max bytes of it when max > 0
// (MaxBytes holds for the object, not only for its coded transfer).
type gunzipBody struct {
	src    io.ReadCloser
	zr     *gzip.Reader
	err    error
	max, n int64
}

func (b *gunzipBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.zr == nil {
		if b.zr, b.err = gzip.NewReader(bufio.NewReaderSize(b.src, 64<<10)); b.err != nil {
			b.err = b.coding(b.err)
			return 0, b.err
		}
	}
	n, err := b.zr.Read(p)
	if b.n += int64(n); b.max > 0 && b.n > b.max {
		b.err = fmt.Errorf("%w: more than %d bytes", ErrTooLarge, b.max)
		return n - int(b.n-b.max), b.err
	}
	if err != nil && err != io.EOF {
		b.err = b.coding(err)
		return n, b.err
	}
	return n, err
}

// coding words an error of the decoder: one the transfer had passes as it
// is; a broken coding is the server's fault.
func (b *gunzipBody) coding(err error) error {
	var corrupt flate.CorruptInputError
	if errors.Is(err, gzip.ErrHeader) || errors.Is(err, gzip.ErrChecksum) || errors.As(err, &corrupt) {
		return fmt.Errorf("%w: the gzip coding of the transfer is broken: %w", ErrProtocol, err)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: the gzip coding ended early", ErrShortBody)
	}
	return err
}

func (b *gunzipBody) Close() error { return b.src.Close() }

// notNewer says whether resp is an object no newer than o's condition
// (IfModifiedSince; of LocalSize too, when that is given and resp's
// size is known), which a server that ignores the condition sends.
func notNewer(o FetchOptions, resp *Response) bool {
	if o.IfModifiedSince.IsZero() || resp.Kind != KindFile || resp.ModTime.IsZero() || resp.ModTime.After(o.IfModifiedSince) {
		return false
	}
	size := resp.Size
	if resp.Encoding != "" {
		size = -1 // the coded size says nothing of the object's
	}
	return o.LocalSize <= 0 || size < 0 || size == o.LocalSize
}

// limitedBody is a body read up to a limit: Close closes the whole.
type limitedBody struct {
	io.Reader
	io.Closer
}

// recordUnpassed gives the recorder a response whose body the fetcher
// kept in the exchange instead of passing it on (a redirect's, an HTTP
// error's), when it kept it whole.
func (c *Client) recordUnpassed(ctx context.Context, req *protocols.Request, resp *Response, conv *conversation) {
	ex := req.Exchange
	if len(ex.Response) == 0 || !ex.Whole {
		return
	}
	if w := c.Recorder.Record(ctx, c.retrieval(req, resp, conv)); w != nil {
		if _, err := w.Write(ex.Body); err != nil {
			if a, ok := w.(interface{ Abort() }); ok {
				a.Abort()
				return
			}
		}
		w.Close()
	}
}

// retrieval is what the Recorder is given of a retrieval: how the
// scheme's protocol has it archived, its URI and WARC-Protocol filled in
// from the scheme table where the protocol says nothing.
func (c *Client) retrieval(req *protocols.Request, resp *Response, conv *conversation) Retrieval {
	u := req.URL
	s, _ := c.scheme(u.Scheme)
	var as protocols.Archived
	if a, ok := s.Fetcher.(protocols.Archiver); ok {
		as = a.ArchiveAs(u, resp)
	}
	if as.URI == "" {
		as.URI = u.Redacted()
	}
	if as.Protocol == "" {
		as.Protocol = cmp.Or(s.WARCProtocol, u.Scheme)
	}
	rt := Retrieval{URL: u, Response: resp, Exchange: req.Exchange, As: as}
	if s.Conversation {
		rt.Conversation, rt.ConversationType = conv.events, s.ConversationType
	}
	return rt
}

// prepare checks req.URL's port and completes req for it: TLS settings,
// trace, dial function and proxy; it returns the fetcher to use.
func (c *Client) prepare(req *protocols.Request) (protocols.Fetcher, error) {
	u := req.URL
	if err := c.checkPort(u); err != nil {
		return nil, err
	}
	req.TLS = c.TLSConfig
	req.ConnectTimeout = c.connectTimeout()
	req.MaxLineLength, req.MaxListing = c.MaxLineLength, c.MaxListing
	req.Memory = c.memory()
	if len(c.Header) > 0 {
		req.Header = append(req.Header[:len(req.Header):len(req.Header)], c.Header...)
	}
	switch all, own := c.Trace, req.Trace; {
	case all != nil && own != nil:
		req.Trace = func(ev TraceEvent) { all(u, ev); own(ev) }
	case all != nil:
		req.Trace = func(ev TraceEvent) { all(u, ev) }
	}
	return c.route(req)
}

// watched returns the context for req's exchange with the server, which
// ends when nothing arrives for the idle time (see watchIdle), its
// cancel, and done, which ends the watch and gives the exchange's error
// as the caller sees it: ErrTimeout when the watch ended it, ctx's error
// when ctx did.
func (c *Client) watched(ctx context.Context, req *protocols.Request) (context.Context, context.CancelFunc, func(error) error) {
	fctx, cancel := context.WithCancel(ctx)
	var w *idleWatch
	if d := c.idle(); d > 0 {
		w = watchIdle(req, c.connectTimeout(), d, cancel)
	}
	done := func(err error) error {
		timedOut := w != nil && !w.stop()
		switch {
		case err == nil:
			return nil
		case timedOut && ctx.Err() == nil && errors.Is(err, protocols.ErrLoginWait):
			return fmt.Errorf("%w: no answer to the login for %v: a server that delays refusing a password (pure-ftpd does) answers later than the idle time-out; not tried again, which would send the password again", ErrAuth, c.idle())
		case timedOut && ctx.Err() == nil:
			return fmt.Errorf("%w: nothing from the server for %v", ErrTimeout, c.idle())
		case ctx.Err() != nil:
			return ctx.Err()
		}
		return err
	}
	return fctx, cancel, done
}

// ModTimes asks for the modification times of many files of the folder u
// (a URL ending in "/") in one exchange, where the folder's protocol can
// (FTP pipelines MDTM on one control connection); the result holds the
// names the server gave a time for. A protocol, gateway or proxy that
// cannot gives an error wrapping errors.ErrUnsupported.
func (c *Client) ModTimes(ctx context.Context, u *url.URL, names []string) (map[string]time.Time, error) {
	var out map[string]time.Time
	err := c.askFolder(ctx, "mdtm", u, func(f protocols.Fetcher) bool { _, ok := f.(protocols.ModTimer); return ok },
		func(ctx context.Context, f protocols.Fetcher, req *protocols.Request) (err error) {
			out, err = f.(protocols.ModTimer).ModTimes(ctx, req, names)
			return err
		})
	return out, err
}

// HasModTimes says whether the scheme's protocol can answer ModTimes
// (whether its server then can is another matter).
func (c *Client) HasModTimes(scheme string) bool {
	_, ok := c.fetcher(scheme).(protocols.ModTimer)
	return ok
}

// InlineTimes reports whether retrievals of u's server ask each file's
// time with their own commands, at no round trip of their own (FTP's MDTM
// sent with the transfer's other commands), as far as the Client knows:
// ModTimes beforehand then gains nothing.
func (c *Client) InlineTimes(u *url.URL) bool {
	req := &protocols.Request{URL: u}
	f, err := c.prepare(req)
	if err != nil || req.Proxy != nil {
		return false
	}
	it, ok := f.(protocols.InlineTimer)
	return ok && it.InlineTimes(req)
}

// Checksums asks the server for the digests of many files of the folder
// u (a URL ending in "/") in one exchange, where its protocol can (FTP
// HASH, or XSHA256, XSHA512, XSHA1 or XMD5, pipelined on one control
// connection); the result holds the names the server gave a digest for,
// all of one algorithm. A protocol, server, gateway or proxy that cannot
// gives an error wrapping errors.ErrUnsupported.
func (c *Client) Checksums(ctx context.Context, u *url.URL, names []string) (map[string]Checksum, error) {
	var out map[string]Checksum
	err := c.askFolder(ctx, "hash", u, func(f protocols.Fetcher) bool { _, ok := f.(protocols.Hasher); return ok },
		func(ctx context.Context, f protocols.Fetcher, req *protocols.Request) error {
			alg, sums, err := f.(protocols.Hasher).Digests(ctx, req, names)
			out = make(map[string]Checksum, len(sums))
			for n, s := range sums {
				out[n] = Checksum{Algorithm: alg, Sum: s}
			}
			return err
		})
	return out, err
}

// MailOptions adjust Client.SendMail.
type MailOptions struct {
	Server  string // the SMTP server, host[:port] (port 25 when omitted)
	Subject string
	From    string // the sender; empty means protocols.UserAddress()
}

// SendMail sends body, streamed, as a message to the mailbox of the
// mailto: URL u through the SMTP server o.Server, as lynx does
// (mail.Sender): STARTTLS with the Client's TLSConfig, AUTH PLAIN with the
// server's netrc entry, the Client's connect and idle time-outs. It
// returns the bytes of body sent.
func (c *Client) SendMail(ctx context.Context, u *url.URL, body io.Reader, o MailOptions) (int64, error) {
	if err := c.allowed(u); err != nil {
		return 0, &Error{Op: "send", URL: u.Redacted(), Err: err}
	}
	dial, err := c.dialer() // -4, -6, --resolve and LocalAddr hold for SMTP too
	if err != nil {
		return 0, &Error{Op: "send", URL: u.Redacted(), Err: err}
	}
	s := &mail.Sender{Server: o.Server, From: o.From, TLSConfig: c.TLSConfig, ConnectTimeout: c.connectTimeout(), IdleTimeout: c.IdleTimeout, Dial: dial,
		Login: func(host string) (string, string, bool) {
			entries, err := c.netrcEntries()
			if err != nil {
				return "", "", false
			}
			if e := netrc.Find(entries, host, ""); e != nil && e.Login != "" {
				return e.Login, e.Password, true
			}
			return "", "", false
		}}
	n, _, err := s.Send(ctx, u, o.Subject, body)
	if err != nil {
		return n, &Error{Op: "send", URL: u.Redacted(), Err: err}
	}
	return n, nil
}

// askFolder runs ask, a question about the files of the folder u, with
// the fetcher of u's scheme on a direct connection (not through a proxy
// or gateway) and the credentials of a retrieval. A fetcher that cannot
// answer (can) is told so before any credentials are looked up.
func (c *Client) askFolder(ctx context.Context, op string, u *url.URL, can func(protocols.Fetcher) bool, ask func(context.Context, protocols.Fetcher, *protocols.Request) error) error {
	req := &protocols.Request{URL: u}
	f, err := c.prepare(req)
	if err != nil {
		return err
	}
	if !can(f) || req.Proxy != nil {
		return &Error{Op: op, URL: u.Redacted(), Err: errors.ErrUnsupported}
	}
	if err := c.credentials(req, true); err != nil {
		return err
	}
	fctx, cancel, done := c.watched(ctx, req)
	defer cancel()
	if err = done(ask(fctx, f, req)); err != nil {
		return &Error{Op: op, URL: u.Redacted(), Err: err}
	}
	return nil
}

// route picks the fetcher for req: a gateway, a proxy, or the scheme's own
// fetcher. It sets req.Dial and req.Proxy.
func (c *Client) route(req *protocols.Request) (protocols.Fetcher, error) {
	u := req.URL
	if err := c.allowed(u); err != nil {
		return nil, err
	}
	dial, err := c.dialer()
	if err != nil {
		return nil, err
	}
	req.Dial, req.DataDial = dial, c.dataDialer(dial)
	if g, ok := c.Gateways[u.Scheme]; ok && g != "" {
		return c.viaGateway(req, g)
	}
	s, ok := c.scheme(u.Scheme)
	f := s.Fetcher
	if rw, isRW := f.(protocols.Rewriter); isRW {
		if v := rw.Rewrite(u); v != nil {
			vs, ok := c.scheme(v.Scheme)
			if !ok || vs.Fetcher == nil {
				return nil, fmt.Errorf("%w: %s is reached by %s, and this client has no %s fetcher", ErrNotRetrievable, u.Redacted(), v.Scheme, v.Scheme)
			}
			req.URL = v
			c.trace(v, protocols.TraceInfo, u.Scheme+": URL handed to "+v.Scheme+": fetching "+v.Redacted())
			return c.route(req)
		}
	}
	if s.Local {
		if f == nil {
			return nil, notSupported(u.Scheme, s)
		}
		return f, nil // this machine's files: never through a proxy
	}
	proxy, err := c.proxyFor(u)
	if err != nil {
		return nil, err
	}
	if proxy != nil {
		switch {
		case proxy.Scheme == "socks5" || proxy.Scheme == "socks5h":
			d, err := socksDialer(proxy, dial)
			if err != nil {
				return nil, err
			}
			req.Dial, req.DataDial = d, nil
			c.trace(u, protocols.TraceInfo, "via SOCKS proxy "+proxy.Redacted())
		case c.fetcher(proxy.Scheme) == protocols.Fetcher(c.httpF): // a proxy spoken to in HTTP
			req.Proxy = proxy
			c.trace(u, protocols.TraceInfo, "via HTTP proxy "+proxy.Redacted())
			return c.httpF, nil // every scheme, in an absolute-form request
		default:
			return nil, fmt.Errorf("%w: proxy scheme %q (want http or socks5)", ErrBadURL, proxy.Scheme)
		}
	}
	if !ok || f == nil {
		err := notSupported(u.Scheme, s)
		if near := NearScheme(u.Scheme, c.Schemes()); !ok && near != "" {
			err = fmt.Errorf("%w (did you mean %s:?)", err, near)
		}
		return nil, err
	}
	return f, nil
}

// NearScheme is the one of names that name is most likely a slip of the
// keyboard for (a letter missed, added, changed, or two swapped: gohper
// for gopher), or "" when none is that near.
func NearScheme(name string, names []string) string {
	name = strings.ToLower(name)
	if slices.Contains(names, name) {
		return "" // no slip: the scheme itself
	}
	best, bestD := "", 3
	for _, n := range names {
		if n == name || len(n) < 3 {
			continue
		}
		d := editDistance(name, n)
		if d > max(1, len(n)/3) {
			continue
		}
		// Of two as near, the one that begins as name does (htp: http).
		if d < bestD || d == bestD && n[0] == name[0] && best[0] != name[0] {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance counts the letters added, removed or changed, and the
// neighbours swapped, that make a into b (optimal string alignment).
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// notSupported is the error of a URL whose scheme has no fetcher.
func notSupported(name string, s protocols.Scheme) error {
	switch {
	case s.Reserved:
		return fmt.Errorf("%w: %s: is a reserved scheme with no retrieval protocol defined", ErrUnsupportedScheme, name)
	case s.NotRetrievable != "":
		return fmt.Errorf("%w: %s", ErrNotRetrievable, s.NotRetrievable)
	}
	return fmt.Errorf("%w: %s: no protocol for it is built in; an HTTP gateway can be configured for it (%s_proxy)", ErrUnsupportedScheme, name, strings.ReplaceAll(name, ".", "_"))
}

func (c *Client) viaGateway(req *protocols.Request, g string) (protocols.Fetcher, error) {
	u := req.URL
	if strings.Contains(g, "%s") {
		gu, err := url.Parse(strings.Replace(g, "%s", neturl.QueryEscape(u.String()), 1))
		if err != nil {
			return nil, fmt.Errorf("%w: gateway for %s: %w", ErrBadURL, u.Scheme, err)
		}
		req.URL = gu
	} else {
		gu, err := url.Parse(g)
		if err != nil {
			return nil, fmt.Errorf("%w: gateway for %s: %w", ErrBadURL, u.Scheme, err)
		}
		req.Proxy = gu
	}
	c.trace(u, protocols.TraceInfo, "via gateway "+url.RedactString(g))
	return c.httpF, nil
}

// credentials fills req.Credentials from the URL, Client.User (when login
// allows), the netrc file and the prompt.
func (c *Client) credentials(req *protocols.Request, login bool) error {
	u := req.URL
	cr := &req.Credentials
	switch {
	case u.User != nil:
		cr.User, cr.HasUser = u.User.Username(), true
		cr.Password, cr.HasPassword = u.User.Password()
		if !cr.HasPassword && login && c.HasPassword && c.User == cr.User {
			// The URL names the user Client.User names, without a
			// password (as a listing's URLs do): Client.Password is it.
			cr.Password, cr.HasPassword = c.Password, true
		}
	case login && c.User != "":
		cr.User, cr.HasUser = c.User, true
		cr.Password, cr.HasPassword = c.Password, c.HasPassword
	}
	// A user without a password is asked for one when there is a prompt
	// (the command has one on a terminal), else looked up in the netrc
	// file; a URL without a user takes the netrc file's login for the host.
	prompt := c.Prompt
	if req.Anonymous {
		prompt = nil // nobody is there to ask, and the netrc file is not the visitor's
	}
	askUser := cr.HasUser && !cr.HasPassword && prompt != nil
	if !cr.HasPassword && !askUser && c.NetrcFile != "" && !c.local(u.Scheme) && !req.Anonymous {
		entries, err := c.netrcEntries()
		if err != nil {
			return fmt.Errorf("%w: %w", ErrAuth, err)
		}
		host := u.Hostname()
		if sh, ok := c.fetcher(u.Scheme).(protocols.ServerHoster); ok && host == "" {
			host = sh.ServerHost(u) // news: names no server: the configured one
		}
		if e := netrc.Find(entries, host, cr.User); e != nil && (cr.HasUser || e.Login != "") {
			if !cr.HasUser {
				cr.User, cr.HasUser = e.Login, true
			}
			cr.Password, cr.HasPassword = e.Password, e.Password != "" || e.Login != ""
		}
	}
	if cr.HasUser && !cr.HasPassword && prompt != nil {
		cr.Prompt = func(ctx context.Context, user string) (string, error) { return prompt(ctx, u, user) }
	}
	for _, s := range []string{cr.User, cr.Password} {
		if err := url.CheckArg("credentials", s); err != nil {
			return fmt.Errorf("%w: %w", ErrBadURL, err)
		}
	}
	return nil
}

// netrcStamp tells whether the netrc file changed since it was read.
type netrcStamp struct {
	path string
	mod  time.Time
	size int64
	mode os.FileMode
}

// netrcEntries reads the netrc file once, and again only when it changes
// (a mirror asks for credentials for every file).
func (c *Client) netrcEntries() ([]netrc.Entry, error) {
	st, err := os.Stat(c.NetrcFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	stamp := netrcStamp{c.NetrcFile, st.ModTime(), st.Size(), st.Mode()}
	c.netrcMu.Lock()
	defer c.netrcMu.Unlock()
	if c.netrcSeen == stamp {
		return c.netrcList, nil
	}
	entries, err := netrc.Load(c.NetrcFile)
	if err != nil {
		return nil, err
	}
	c.netrcSeen, c.netrcList = stamp, entries
	return entries, nil
}

// memory returns the Client's budget for what retrievals hold whole.
func (c *Client) memory() *protocols.Budget {
	c.budgetOnce.Do(func() {
		switch {
		case c.MemoryBudget == 0:
			c.budget = protocols.NewBudget(64 << 20)
		case c.MemoryBudget > 0:
			c.budget = protocols.NewBudget(c.MemoryBudget)
		}
	})
	return c.budget
}

func (c *Client) connectTimeout() time.Duration {
	if c.ConnectTimeout > 0 {
		return c.ConnectTimeout
	}
	return 30 * time.Second
}

func (c *Client) idle() time.Duration {
	switch {
	case c.IdleTimeout < 0:
		return 0
	case c.IdleTimeout == 0:
		return 2 * time.Minute
	}
	return c.IdleTimeout
}

func (c *Client) dialer() (protocols.DialFunc, error) {
	dial := c.Dial
	switch {
	case dial != nil && c.LocalAddr != nil:
		return nil, errors.New("fetch: Client.LocalAddr goes with the plain dialer, not with Client.Dial")
	case dial == nil:
		d := &net.Dialer{Timeout: c.connectTimeout(), KeepAlive: -1} // transfers end long before a keep-alive probe would help; four system calls fewer per connection
		if c.LocalAddr != nil {
			d.LocalAddr = &net.TCPAddr{IP: c.LocalAddr}
		}
		dial = d.DialContext
	}
	switch c.Network {
	case "", "tcp", "tcp4", "tcp6":
	default:
		return nil, fmt.Errorf("fetch: Client.Network %q is neither tcp4 nor tcp6", c.Network)
	}
	if c.Network == "" && len(c.Resolve) == 0 {
		return dial, nil
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if network == "tcp" && c.Network != "" {
			network = c.Network
		}
		if to, ok := c.Resolve[strings.ToLower(addr)]; ok {
			addr = to
		}
		return dial(ctx, network, addr)
	}, nil
}

// dataDialer dials data connections (protocols.Request.DataDial) outside
// the net package's dialer where it can: only for the plain dialer, and
// for IP addresses, as FTP's data connections are given; else with dial.
// A bulk connection (protocols.Bulk) is read with blocking system calls,
// any other waits in the runtime's poller (blockconn.DialPolled).
func (c *Client) dataDialer(dial protocols.DialFunc) protocols.DialFunc {
	if c.Dial != nil || c.LocalAddr != nil || c.Network != "" || len(c.Resolve) > 0 || !blockconn.Supported {
		return nil
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		dialf := blockconn.DialPolled
		if protocols.Bulk(ctx) {
			dialf = blockconn.Dial
		}
		conn, err := dialf(ctx, addr, c.connectTimeout())
		if errors.Is(err, blockconn.ErrUnsupported) {
			return dial(ctx, network, addr)
		}
		return conn, err
	}
}

func (c *Client) trace(u *url.URL, dir protocols.TraceDir, text string) {
	if c.Trace != nil {
		c.Trace(u, TraceEvent{Dir: dir, Text: text})
	}
}

func (c *Client) checkPort(u *url.URL) error {
	if u.Port == "" {
		return nil
	}
	p := u.PortNumber()
	proto, ok := wellKnown[p]
	s, _ := c.scheme(u.Scheme)
	if !ok || p == url.DefaultPorts[u.Scheme] || slices.Contains(s.Ports, p) || slices.Contains(c.AllowPorts, p) {
		return nil
	}
	return fmt.Errorf("%w: port %d belongs to %s, and a %s URL sent there could make that service act on it (RFC 1738 §6); to go ahead all the same, allow it: deref --allow-port %d (Client.AllowPorts in Go)",
		ErrUnsafePort, p, proto, u.Scheme, p)
}

// ExitCode maps an error from a Client to the exit status the deref
// command documents.
func ExitCode(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, context.Canceled):
		return 130
	case errors.Is(err, ErrChecksum):
		return 9
	case errors.Is(err, ErrBadURL):
		return 2
	case errors.Is(err, ErrUnsupportedScheme), errors.Is(err, ErrNotRetrievable):
		return 3
	case errors.Is(err, ErrNotFound):
		return 4
	case errors.Is(err, ErrPermission), errors.Is(err, ErrAuth):
		return 5
	case errors.Is(err, ErrNetwork), errors.Is(err, ErrTimeout), errors.Is(err, context.DeadlineExceeded), errors.Is(err, ErrTemporary):
		return 6
	case errors.Is(err, ErrWrite):
		return 8
	case errors.Is(err, ErrProtocol), errors.Is(err, ErrShortBody), errors.Is(err, ErrTooLarge), errors.Is(err, ErrRangeNotSatisfied):
		return 7
	}
	return 1
}
