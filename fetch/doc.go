// Package fetch is the engine that dereferences URLs: give it a locator
// and it speaks the right protocol and streams the object back.
//
//	resp, err := fetch.Get(ctx, "ftp://ftp.example.org/pub/README")
//	if err != nil { ... }
//	defer resp.Body.Close()
//	io.Copy(os.Stdout, resp.Body)
//
// A Client holds the registry of protocols (every built-in one wired in
// NewClient, no init side effects), credentials (URL, netrc, prompt),
// proxies and per-scheme gateways, redirect policy, limits and the trace
// and progress hooks. Protocols do one retrieval each; the Client decides
// everything around it.
//
// Errors are *Error values naming the operation and the URL (password
// redacted) and unwrapping to a sentinel ([ErrNotFound], ErrAuth, ...) and to
// the protocol's own error.
//
// # The library in ten lines
//
//	resp, err := fetch.Get(ctx, "http://example.org/data.csv")
//	if err != nil {
//		log.Fatal(err) // a *fetch.Error; errors.Is(err, fetch.ErrNotFound) and friends
//	}
//	defer resp.Body.Close()
//	fmt.Println(resp.Size, resp.MediaType, resp.ModTime, resp.Name)
//	if _, err := io.Copy(os.Stdout, resp.Body); err != nil {
//		log.Fatal(err)
//	}
//	err = resp.Body.Close() // reports an error the server sends after the data
//
// Each built-in protocol is configured through its fetcher, a field of the
// Client, before the first retrieval: `c.NNTP.Server = "news.example.org"`
// names the server of `news:` URLs (else `$NNTPSERVER`, else `news`),
// `c.FTP.ExplicitTLS`, `c.Gopher.Ask` (Gopher+ forms), `c.Mail.Dir` (where
// `mid:` looks); registering such a scheme again panics, naming the field.
//
// `fetch.NewClient()` gives a Client to configure: timeouts, byte limit,
// redirect policy, proxies and gateways, netrc file, password prompt, trace
// and progress hooks, TLS settings, and `Register` for a protocol of your
// own: a `protocols.Scheme` names its Fetcher, ports, whether redirects may
// lead to it, how its folders list, and the engine asks that, and the
// optional interfaces the Fetcher implements (`ModTimer`, `Hasher`,
// `Rewriter`, `Namer`, `Verbatimer`, `ServerHoster`), never the scheme's
// name: the built-in protocols are wired in one table
// (`fetch/schemes.go`), and a protocol registered from outside lists,
// resumes, mirrors and serves as a file system with no other change
// (`TestRegisteredScheme`). `Client.Download(ctx, url, dir)` writes by a single name relative
// to `dir`, never following a symbolic link at it, to a temporary name
// renamed on success; `DownloadOptions.Checksum` checks its digest first.
// `Client.Retry` (a `fetch.Retry`, the mirror's policy) tries a retrieval
// again after a temporary failure, a download continuing its part;
// `FetchOptions` carry per-call `Progress` and `Trace` hooks besides the
// Client's. `Client.ModTimes(ctx, folder, names)`
// asks for many files' times in one exchange where the protocol can (FTP:
// MDTM pipelined on one connection). Package `url` parses, compares,
// resolves and extracts locators without any I/O. `examples/get` is the
// smallest program that embeds deref.
//
// Code written for Go's own interfaces takes deref as it is:
//
//	// net/http: an unchanged http.Client fetches ftp:, gopher:, news:, ...
//	t := &http.Transport{}
//	rt := fetch.NewTransport(fetch.NewClient())
//	for _, s := range []string{"ftp", "gopher", "news", "nntp", "wais", "file"} {
//		t.RegisterProtocol(s, rt)
//	}
//	resp, err := (&http.Client{Transport: t}).Get("ftp://ftp.example.org/pub/README")
//
//	// io/fs: a tree of listings is a file system
//	fsys, err := fetch.NewFS(ctx, fetch.NewClient(), "gopher://gopher.example.org/1/")
//	err = os.CopyFS("copy", fsys) // or fs.WalkDir, fs.Glob, http.FileServerFS(fsys)
//
// The transport answers GET and HEAD; `Range: bytes=N-` resumes (206 with
// `Content-Range`, or 200 with the whole object where the protocol cannot),
// a server's refusal is a status (404, 403, 401, 416, 503, 502) with the
// error as its body, and when no server answered (refused, timed out, a bad
// URL) the `*fetch.Error` itself comes back through http.Client's
// `*url.Error`. A listing comes as the command's TAB-separated lines
// (`text/tab-separated-values`). `NewFS` views file: and FTP folders, HTTP
// index pages, Gopher menus, newsgroups (articles named by number) and WAIS
// searches (hits named by their docids' file names) as
// `fetch.Tree` lists them, the mirror's view; it implements `fs.ReadDirFS`,
// `fs.StatFS`, `fs.ReadFileFS` and `fs.SubFS`, streams files on `Read`, and
// leaves out names that are not path elements rather than change them.
// Both pass net/http's client and `testing/fstest.TestFS` against every
// in-process server, and `TestFS` in the interop suite against vsftpd,
// proftpd, pygopherd, nginx and INN.
//
// # Hostile servers
//
// deref talks to servers nobody here controls, so every read of structure
// has a bound that is an error when passed, never more memory:
//
//	| what | bound | set with |
//	|---|---|---|
//	| a line (FTP reply, NNTP, Gopher menu, HTTP header line) | 64 KiB | `Client.MaxLineLength` |
//	| a listing, menu, overview or group list held whole to be parsed (FTP LIST/MLSD, Gopher menus and attributes, NNTP OVER and LIST) | 16 MiB | `Client.MaxListing` |
//	| an FTP reply (all the lines of a multi-line one) | 256 KiB | `Client.MaxListing`, when smaller |
//	| an HTTP response head | 1 MiB | `Client.MaxListing`, when smaller |
//	| a WAIS message (its length field is checked before anything is read) | 1 MiB, the size deref announces | |
//	| all of an SMTP server's replies (`mailto:`) | 1 MiB | |
//	| an object (refused before its body when its size is announced larger, as curl refuses it) | none | `Client.MaxBytes`, `--max-filesize` |
//	| all that the retrievals of one Client hold whole at once | 64 MiB (past it: a temporary error, which retries try again) | `Client.MemoryBudget` |
//
// The command also sets the Go runtime's soft memory limit to 96 MiB (unless
// `GOMEMLIMIT` is set), so the collector gives that memory back before the
// process grows: `--parallel 64` against 64 servers that each send a
// listing, menu, overview or response head without end peaks at 101-108 MiB
// of resident memory (`TestParallelHostileServers`), and one run against
// one such server at 10-43 MiB (`TestOneHostileServerRSS`; both read the
// process's own VmHWM). Listings are
// gathered in pieces, so one without end costs its bound and no copy.
//
// A server that accepts the connection and never greets (FTP, NNTP, SMTP) fails at
// the connect time-out (the greeting is part of connecting); a server that
// goes silent at any later point fails at the idle time-out (120 s,
// `--idle-timeout`); `--max-time` bounds a server that trickles. Closing a
// body early closes its connection rather than reading what is left. A
// `file:` named pipe is opened without blocking: one without a writer reads
// as empty, one whose writer stalls ends at the idle time-out. A telnet
// session is interactive, so only its connecting is timed; its option
// negotiation keeps a subnegotiation to 4 KiB.
//
// `internal/testserver/faults` is a catalogue of hostile servers, one table
// per protocol (HTTP, FTP, Gopher, NNTP, WAIS, SMTP) with the same fault
// names: never greet, greet forever, an endless line, reply, listing or
// body, a trickle, a size that lies, a stall or a drop mid-body or before
// the final reply, a reset. `TestFaultCatalogue` (in `fetch`) downloads
// through each and checks the exit class, the time bound, a peak heap under
// 64 MiB and that nothing is left under the final name; `TestSMTPFaults`
// (in `cmd/deref`) sends a `mailto:` message through each SMTP row.
// `TestNoLeaks` makes 10,000 failing retrievals and finds the goroutines
// and open descriptors where they were; `TestKilledAtRandom` (interop)
// kills `deref mirror` and `deref -i -O` at 20 random points. Every parser of server replies has a fuzz
// target; `.ci/run` runs each of them (the list is in it) for 3 seconds
// (`DEREF_FUZZTIME=10m` makes that ten minutes each), and one runs longer
// on its own with
//
//	go test -run '^$' -fuzz '^FuzzReplyBound$' -fuzztime 10m ./protocols/ftp
package fetch
