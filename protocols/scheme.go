package protocols

import (
	"io"
	"time"

	"github.com/urlderef/deref/url"
)

// Scheme is what the engine knows of one URL scheme: the Fetcher that
// dereferences its URLs and how it treats them. Each protocol package
// describes its own schemes (ftp.Schemes, gopher.Schemes, ...); the
// engine branches on these fields and on the optional interfaces a
// Fetcher implements (ModTimer, Hasher, Rewriter, Namer, ServerHoster),
// never on a scheme's name.
type Scheme struct {
	Name string
	// Fetcher dereferences the scheme's URLs; nil when they designate no
	// object, and NotRetrievable then says why.
	Fetcher        Fetcher
	NotRetrievable string
	// Reserved marks a scheme the specs reserve with no retrieval
	// protocol defined: its URLs are of an unsupported scheme.
	Reserved bool

	// Ports are the well-known ports of the scheme's protocol, which a URL
	// of another scheme may not use (RFC 1738 §6); a URL of this scheme
	// may use any of them.
	Ports []int

	// Redirect says a redirect may lead to the scheme's URLs; Secure that
	// they are protected (TLS). Local marks a scheme that names this
	// machine's files: never the target of a redirect, never proxied, no
	// credentials looked up.
	Redirect, Secure, Local bool
	// Ranges says the protocol can send an object from a byte on (HTTP's
	// Range, FTP's REST, a file: seek): a transfer can resume there, and
	// deref -I says "Accept-ranges: bytes" as curl does.
	Ranges bool
	// Robots is where a server of the scheme keeps its robots.txt rules,
	// after the server in a URL ("/robots.txt" for HTTP, "/0robots.txt"
	// for Gopher, as gophernicus serves it); "" where it keeps none.
	Robots string
	// RobotsAgents are the virtual user agents the scheme's robots.txt
	// names crawlers by, in the order a crawl takes them after its own
	// name and before "*" (Gemini's archiver, indexer, researcher); a
	// crawl that writes no archive is no archiver.
	RobotsAgents []string
	// WARCProtocol is what an archive's records of the scheme's
	// retrievals name in WARC-Protocol; "" means the scheme's name
	// ("nntp" for news:, "ftp" for ftps:).
	WARCProtocol string
	// Conversation says an archive keeps each retrieval's protocol
	// conversation beside its object (FTP's control connection, as
	// Heritrix and wpull archive it).
	Conversation bool
	// ConversationType is the media type of the record an archive keeps
	// the conversation in ("text/x-ftp-control-conversation", Heritrix's
	// name for FTP's); "" means FTP's.
	ConversationType string
	// Opaque says the path of the scheme's URLs is one name that the
	// client never takes apart (Prospero's hsoname): a folder's URL is
	// listed as given, never with a "/" added, and no URL is made by
	// joining a name to a folder's; its listing's entries name their own.
	Opaque bool
	// Session marks a scheme whose URLs designate interactive sessions
	// (telnet:): fetched when asked for, never followed as a link.
	Session bool
	// Linked says a page (the gateway's) links the scheme's URLs as they
	// are, for the browser to open or to hand to a program (the web,
	// mailto:, telnet: sessions), rather than through a page of its own.
	Linked bool
	// MaxRedirects, when more than 0, is the most redirects in a row a
	// retrieval of the scheme follows where that is fewer than the
	// Client's (Gemini's specification allows 5).
	MaxRedirects int
	// Paged says the gateway shows the scheme's URLs through pages of its
	// own although they form no tree (finger's answers), as it shows
	// every scheme with a tree that it does not link as it is.
	Paged bool
	// Plain is a secure scheme's unprotected counterpart ("http" for
	// https): a redirect to it is a downgrade.
	Plain string

	// ProxyVars are further environment variables naming a proxy for the
	// scheme, after "<scheme>_proxy" (news: URLs take nntp_proxy).
	ProxyVars []string

	// Fallback is the local file name of a URL whose path gives none;
	// empty means "index".
	Fallback string

	// Tree says how a folder of the scheme is listed, for a mirror or a
	// file system: TreeListing (the server's listing: FTP, file:),
	// TreeIndexPage (links of an HTML page), TreeMenu (a Gopher menu),
	// TreeGroup (a newsgroup's articles), TreeSearch (a WAIS search's
	// hits); TreeNone when it has no folders.
	Tree TreeKind
}

// TreeKind says how a scheme's folders are listed; see Scheme.Tree.
type TreeKind int

// Tree kinds.
const (
	TreeNone TreeKind = iota
	TreeListing
	TreeIndexPage
	TreeMenu
	TreeGroup
	TreeSearch
)

// Rewriter is implemented by a Fetcher that hands some of its URLs to
// another scheme's: Rewrite returns the URL to fetch instead, or nil (a
// file: URL naming another host is FTP's).
type Rewriter interface {
	Rewrite(u *url.URL) *url.URL
}

// Namer is implemented by a Fetcher whose URLs suggest a local file name
// other than their last path segment (a WAIS document's name is in its
// docid).
type Namer interface {
	SuggestedName(u *url.URL) string
}

// Folderer is implemented by a Fetcher whose URLs say in their own way
// whether they end in a folder rather than a name (FTP's empty name and
// ;type=d, a Gopher selector ending in "/"): such a URL names no file to
// save its object as.
type Folderer interface {
	EndsInFolder(u *url.URL) bool
}

// Archived says how a retrieval is archived, where its Fetcher has a say
// (Archiver); the engine fills in URI and Protocol where it leaves them
// empty.
type Archived struct {
	// Skip makes no record of the retrieval's object: HTTP's records are
	// made from its heads as they went over the wire, or not at all.
	Skip bool
	// URI is the URL the object is known by (an FTP file's without
	// ";type=i", a Gopher+ item's without its "+"); "" for the URL
	// fetched.
	URI string
	// Protocol is the WARC-Protocol ("gopher+" where Gopher+ was spoken);
	// "" for the scheme's (Scheme.WARCProtocol).
	Protocol string
	// MediaType is the record's, where not the response's
	// ("application/gopher-menu").
	MediaType string
	// Metadata makes the record a metadata record: of the item Of names
	// (a Gopher+ attribute block), or a capture all the same (a WAIS
	// search's result list, of media type ResultListType).
	Metadata bool
	// Item is the key the record is known by to the metadata records of
	// the same item written later in the run (Of).
	Item, Of string
}

// Archiver is implemented by a Fetcher whose retrievals are archived
// otherwise than as a resource record of the URL fetched.
type Archiver interface {
	ArchiveAs(u *url.URL, resp *Response) Archived
}

// Replayer is implemented by a Fetcher whose archived retrievals read
// back otherwise than as their payload's bytes: the inverse of Archiver,
// for replay.
type Replayer interface {
	// Replay is the Response the live retrieval of u gave, made of the
	// payload recorded for it at time at (of media type mediaType): a
	// listing parsed, a text decoded as the protocol decodes it. max
	// bounds what is read whole.
	Replay(u *url.URL, mediaType string, at time.Time, payload io.ReadCloser, max int64) (*Response, error)
	// ReplayFrom says where else u's answer is archived.
	ReplayFrom(u *url.URL) ReplaySource
}

// ReplaySource says where a URL's answer is archived when not as its own
// capture (Replayer).
type ReplaySource struct {
	// Alternatives are URLs whose captures answer for it: a Gopher menu
	// read as text (type 0) is archived by its own type.
	Alternatives []*url.URL
	// MetadataOf and MetadataType name the metadata record that is its
	// payload: the record of that media type that goes with the capture
	// of MetadataOf (a Gopher+ item's attribute block).
	MetadataOf   *url.URL
	MetadataType string
	// Wordless says the URL asks a search for its words, which no
	// archive holds: its page is the search's form.
	Wordless bool
}

// ResultListType is the media type of a metadata record that is its
// URL's capture all the same: a WAIS search's result list, as deref
// --raw prints it (the search's reply is Z39.50's binary, no payload of
// its own).
const ResultListType = "text/x-search-results"

// ServerAddresser is implemented by a Fetcher whose URLs may name no
// server (news: URLs go to a configured one): ServerAddr is the address
// dialled for u, the host name TLS is verified against, and whether TLS
// starts at once. A gateway dials the server so configured as it is: the
// operator named it.
type ServerAddresser interface {
	ServerAddr(u *url.URL) (addr, host string, implicitTLS bool)
}

// Referrer is implemented by a Fetcher whose objects name others by an
// identifier of their own (a news article's References and Message-ID
// fields name articles by message-id): Refer is the URL that retrieves
// the object id names, for a page of u to link; ok is false for an id
// that is not one.
type Referrer interface {
	Refer(u *url.URL, id string) (ref *url.URL, ok bool)
}

// ServerHoster is implemented by a Fetcher whose URLs may name no server
// (news: URLs go to a configured one): ServerHost is the host that
// credentials for u are looked up for.
type ServerHoster interface {
	ServerHost(u *url.URL) string
}

// Verbatimer is implemented by a Fetcher whose URLs may ask for an
// object converted on the way (FTP's ASCII type): Verbatim returns the
// URL that fetches its bytes as they are, for copies that must be exact.
type Verbatimer interface {
	Verbatim(u *url.URL) *url.URL
}
