// Command sidebyside times deref against curl, wget and lftp (those that
// are installed) on the same URLs over loopback, to /dev/null and to a
// file, and prints the ratios of wall time, CPU time and peak memory.
//
//	go run ./internal/devcmd/sidebyside                          # serves a generated 1 GiB file over HTTP itself
//	go run ./internal/devcmd/sidebyside -url ftp://127.0.0.1:2121/big.bin
//	go run ./internal/devcmd/sidebyside -mirror ftp://127.0.0.1:2121/many/
//
// With -serve, the runner first writes what it fetches into the folder a
// local server serves the URL from, and removes it at the end: for -url a
// file of -size random bytes under the URL's name, for -mirror -files
// small files (about 280 bytes each) in a new folder. With the interop
// daemons (.ci/interop/start STATE), for instance:
//
//	go run ./internal/devcmd/sidebyside -url ftp://127.0.0.1:2121/big.bin -serve STATE/tree/big.bin
//	go run ./internal/devcmd/sidebyside -mirror ftp://127.0.0.1:2121/many/ -serve STATE/tree/many -parallel 8
//	go run ./internal/devcmd/sidebyside -crawl http://127.0.0.1:18080/site/ -serve STATE/tree/site
//	go run ./internal/devcmd/sidebyside -gateway -url ftp://127.0.0.1:2121/big.bin -serve STATE/tree/big.bin
//
// -gateway times the -url object fetched through deref serve (the raw
// object of its page, by curl and by deref) against deref fetching it
// directly.
//
// -crawl archives an HTML site with deref crawl --warc-file (deref), with
// deref crawl --warc-file --output-dir (deref-tree: a copy of the site
// too, as wget writes one) and with wget --mirror --warc-file, and counts
// the response and revisit records of each WARC file; with -serve it
// first writes a site of -pages pages (an index and pages that link each
// other) where the server serves it.
//
// -archive-cost, with -url or -crawl, times deref alone without and with
// --warc-file, in turns round by round, and prints the median of the
// rounds' ratios of wall time with a 95% interval: what writing the
// archive adds to the run.
//
//	go run ./internal/devcmd/sidebyside -archive-cost -crawl http://127.0.0.1:18080/site/ -serve STATE/tree/site -runs 61
//	go run ./internal/devcmd/sidebyside -archive-cost -url http://127.0.0.1:18080/big.bin -serve STATE/tree/big.bin -size 100000000 -runs 15
//
// -mirror fetches every file of a directory with deref mirror (and with
// deref -i -O --parallel), lftp "mirror -P 4" and wget -m, then runs each
// mirror again where nothing changed (--only-newer). For ftp: it also runs
// ftpfloor ("floor"), the least a Go program does for the same copy, whose
// CPU time bounds what deref's layers could still give up. The tools take turns
// round by round; -dest chooses the file system written to. Besides each
// tool's own CPU time it prints the CPU time the whole machine spent
// during the run ("machine": the server's work and the kernel's included),
// from /proc/stat.
//
// Dirty pages of one run slow the next one's writes, so the runner calls
// sync(2) before every timed run.
//
// # Performance: what was measured
//
// `go test -bench Stream ./fetch` streams 1 MiB, 64 MiB and 1 GiB objects over
// loopback HTTP and from files, to nowhere and into a file; allocations and
// bytes per operation stay the same at every size. Plain-http bodies are
// spliced from the socket into the file, one `splice(2)` at a time. Large
// bodies (4 MiB or more, plain HTTP or binary FTP) read any other way raise
// the socket's receive low-water mark (`SO_RCVLOWAT`) so that the kernel
// wakes the reader once per chunk of up to 256 KiB rather than once per
// segment; a chunk that does not come within 50 ms puts the mark back, so a
// slow server is still read as its bytes arrive. FTP data connections of
// such files are read with blocking system calls outside the runtime's
// network poller (`internal/blockconn`), as C clients read them; those of
// small files and listings wait in the poller, which holds no thread while
// the server is slow (with one processor, a blocking read stops every other
// transfer until the runtime notices).
//
// `deref` with more than one URL and `deref mirror` run on one processor
// (GOMAXPROCS 1, as curl, wget and lftp run on one thread), unless
// GOMAXPROCS is set or `--segments` reads several streams at once: with a processor more than
// the work needs, the Go scheduler wakes an idle thread to look for work
// at every event. For 2,000 small files over FTP that was a quarter of the
// client's CPU time (`-mirror` with GOMAXPROCS unset and set to 1, in
// turns: 330 and 263 ms; context switches 12,000 and 6,000).
//
// INN's `nnrpd` writes a reply's status line and its text (an article, an
// overview, a group list) apart, with Nagle's algorithm on, and the text
// waits until the status line is acknowledged; a client with nothing to
// send delays that acknowledgement by about 40 ms. On Linux deref asks
// for an acknowledgement at once (`TCP_QUICKACK`) before each reply it
// waits for: an article from INN over loopback now takes 0.03 s from start
// to exit (0.12 s before), a crawl of 40 articles of a group 0.10 s (1.45
// s).
//
// `go test -bench Segments ./fetch` downloads 16, 64 and 256 MiB in four
// segments: about 2.4 MB and 930 allocations per download at every size
// (one 512 KiB buffer per segment, never the object).
//
// `go test -bench . ./protocols/nntp` reads the 1,000 articles of a group
// pipelined over one connection, one at a time over one connection, and with
// a connection per article; and single articles of 64 KiB to 64 MiB, with
// bytes and allocations per operation the same at every size.
//
// `go test -bench Retrieve ./protocols/wais` retrieves WAIS documents of 1,
// 10 and 100 MiB in slices from a server in another process; the heap in use
// stays at about 3.5 MiB at every size.
//
// `go test -bench Mirror ./fetch/mirror` mirrors 200 small files from the
// in-process FTP server, and single files of 1, 16 and 128 MiB (bytes and
// allocations per run the same at every size).
//
// `go run ./internal/devcmd/sidebyside [-url URL]` times deref against curl, wget
// and lftp on the same URL, to /dev/null and to a file, and prints the ratios
// of wall time, CPU time and peak memory; `-mirror ftp://host/dir/` fetches
// every file of a folder with `deref mirror`, with `-i -O --parallel` on a
// list of its URLs made beforehand (`deref-i`; `deref-ls-i` times the
// listing and `-i` together) against `lftp -c 'mirror -P 4'`, `wget -m` and,
// for ftp:, `internal/devcmd/ftpfloor` ("floor"), then runs each mirror again where nothing changed. The tools take turns round by
// round; besides the run of median wall time, each tool's mean CPU time
// over the rounds is printed with its standard error and its ratio to
// lftp's, the figure to compare CPU by (one run's CPU varies by 5% and
// more). `-dest DIR` picks the file system written to, a "machine" column
// gives the CPU time the whole machine spent (server and kernel included),
// and `-rtt 10ms` relays the FTP control connection with that round-trip
// time, as over a wide-area link (data connections go straight to the
// server); with `-crawl`, every HTTP connection. `-serve PATH` writes what is fetched where a local server serves
// it (a 1 GiB file, or 2,000 small files) and removes it afterwards; with
// the interop daemons running (`.ci/interop/start STATE`):
// `go run ./internal/devcmd/sidebyside -url ftp://127.0.0.1:2121/big.bin -serve STATE/tree/big.bin`
// and `go run ./internal/devcmd/sidebyside -mirror ftp://127.0.0.1:2121/many/ -serve STATE/tree/many -parallel 8`.
// With `-mirror`, `-against BIN` times another deref build's mirror and
// `-i` (base, base-i) in the same rounds, and the median of each round's
// own ratio (CPU, wall) is printed for deref/lftp, deref-i/lftp,
// floor/lftp, deref/base and deref-i/base-i: a disk's pace drifts from
// round to round far more than the tools differ, and a ratio within a
// round does not carry the drift.
//
// What the disk costs. On this machine's ext4 (no journal, mounted with
// discard, kernel 6.18), creating a file costs 30 to 55 µs of CPU when
// nothing was deleted lately, and 0.5 to 1 ms a file for tens of seconds
// after thousands of files were deleted (an `rm -rf` of an earlier copy,
// or the runner's own clean-up of an earlier run): under `perf record`,
// three quarters of a mirror's CPU time, deref's and lftp's alike, is
// then the inode allocator passing over inodes freed moments ago
// (`find_inode_bit`, `recently_deleted`, `find_get_block_common`), and
// for four writers into one folder their spinning on the folder's lock.
// The same 2,000 files took deref 440 ms of CPU and lftp 650 ms on a
// quiet disk, and 1.3 s against 1.56 s just after such a delete: the
// tools' ratio moves toward 1 as the file system's share grows, and a
// run compares tools only on a disk left alone before it (the runner
// removes its copies at its end). Into tmpfs no such cost arises. A
// build that wrote each new file unnamed (`O_TMPFILE`) and linked it
// under its name when whole, one directory operation a file instead of
// NAME.part's create and rename, was slower than the NAME.part build in
// the same rounds on the disk (median of each round's ratio: 1.10 of its
// CPU for `deref mirror`, 1.20 for `deref -i`, 9 rounds), though a
// program doing nothing but create files gave it 0.6 of the CPU per file
// of create-and-rename: what decides deref's cost per small file is not
// the number of directory operations.
//
// `-segments N` times `deref --segments N` against `aria2c -x N -s N` and
// curl on one file, to a file. The interop nginx caps each connection at
// 16 MiB/s under `/capped/`, as servers that limit each connection do; a
// 512 MiB file there
// (`go run ./internal/devcmd/sidebyside -url http://127.0.0.1:18080/capped/big.bin -serve STATE/tree/big.bin -size 536870912 -segments 8 -runs 3`)
// took 4.10 s with deref, 4.29 s with aria2 and 32.5 s with curl
// (deref/aria2 0.96, deref/curl 0.13), deref's peak memory 15 MiB against
// aria2's 26 MiB. Each range is written in whole 512 KiB buffers: eight
// writers contending for one file with every small read cost five times the
// CPU.
//
// `-crawl URL` archives an HTML site with `deref crawl --warc-file` (and
// with `--output-dir` too, as `deref-tree`) against `wget --mirror
// --warc-file`, counting each WARC file's response and revisit records;
// with `-serve PATH` it first writes a site of `-pages N` (2,000) pages that
// link each other. On nginx
// (`go run ./internal/devcmd/sidebyside -crawl http://127.0.0.1:18080/site/ -serve STATE/tree/site -runs 5`),
// deref took 0.36 s and wget 2.93 s for the same 2,003 records (0.12 of
// wget's time; 0.24 while writing the tree as well, as wget does).
//
// What the archive adds is CPU: building, digesting and compressing the
// records, 60 to 85 µs of CPU per page of a crawl (its request and
// response records) on a two-core virtual machine that runs the servers
// too. One goroutine builds, compresses and writes the records, woken once
// for a batch of bodies (16 of them, or 256 KiB, or 20 ms after the first),
// not for each: waking a sleeping goroutine costs a thread switch, which on
// that machine costs more than a small page's records. Handing each body
// over as it came, as deref did at first, the 2,000-page crawl below took
// 1.14 to 1.18 times as long with the archive, in the same batches of runs
// in which the batched hand-over took 1.04 to 1.10; two goroutines, one
// building and one compressing, could take both cores at once while the
// crawl's next response waited. With one processor (`GOMAXPROCS` 1, deref
// held to one core) each body is handed over as it comes: waking the
// goroutine then costs no switch, and a batch's building would hold the one
// processor while the next page's response waited.
//
// A block of 64 KiB or more, or of unknown size, is compressed in pieces
// of 256 KiB, each on a goroutine of its own (at most `GOMAXPROCS` at once
// over all blocks), beside its digests and the next records' building, and
// spooled compressed. A body past 256 KiB streams into its record as it is
// read: an FTP, Gopher, news, WAIS or file: body always, an HTTP body when
// its length is known (a chunked one is spooled first: its head, which
// comes first in the record, gives its length only at its end). The
// record's head, which holds the block's length and digests, is known only
// then: its gzip member is joined from deflate pieces, as pigz joins what
// it compresses apart (the head in a stored block, the block's pieces each
// ended on a byte, the closing CRLF CRLF in a final stored block, the
// CRC-32s combined), one member to any reader. A large transfer no longer
// waits for its archive once it has ended: before, the archive read the
// whole block again from a spool and compressed it after the last byte
// came. The body reaches its record's goroutine in chunks of 256 KiB, up
// to four of them on their way, so that the transfer reads on while the
// record digests what came before. Through an `io.Pipe`, whose every write
// waits until it is read, it went over 32 KiB at a time, each write
// waking the other goroutine: on random bytes, which gzip stores about as
// fast as it reads them, the wake-ups cost more than the digests, and the
// 100 MB file of random bytes took 0.41 s with the archive against 0.28 s
// now (5.0 and 3.6 times the run without it, medians of 15 rounds); on
// text, where gzip sets the pace, 0.35 s against 0.33 s.
//
// Where the machine has the CPU to spare, the run takes little longer;
// where the run already keeps every core busy, it shows. Measured there
// with runs with and without `--warc-file` taking turns, the ratio the
// median of the rounds' ratios (81 rounds for the 2,000-page crawl, 21 for
// the mirror and the large pages, 7 for the documentation, 5 for the 100
// MB file; the rows marked * are of the build before the one-goroutine
// writer and the packed blocks, 31 rounds; 15 for 8,000 pages).
// `go run ./internal/devcmd/sidebyside -archive-cost -crawl URL -serve PATH -runs
// N` measures a crawl that way, and `-archive-cost -url URL` a single
// object written to a file, with the median's 95% interval; on the
// 2,000-page site it printed 1.092 (1.003 to 1.143) in 41 rounds. The
// runs measured:
//
//	| run | without | with | ratio |
//	|---|---|---|---|
//	| `deref mirror` of 2,000 files of 700 bytes from vsftpd (`--parallel 4`) | 1.24 s | 1.27 s | 1.06 |
//	| * the same with `--parallel 8` (both cores busy, most of it vsftpd and the kernel) | 1.37 s | 1.48 s | 1.09 |
//	| * the same, vsftpd on one core and deref on the other (as with a server elsewhere) | 1.13 s | 1.16 s | 1.03 |
//	| `deref crawl --scope prefix` of the 2,000 pages from nginx | 0.32 s | 0.35 s | 1.09 |
//	| * the same, nginx on one core and deref on the other | 0.57 s | 0.51 s | 0.99 |
//	| * a crawl of 8,000 such pages | 1.55 s | 1.63 s | 1.05 |
//	| a crawl of 300 pages of 100 KB of text (31 MB) | 0.23 s | 0.37 s | 1.62 |
//	| * the same, nginx on one core and deref on the other | 0.24 s | 0.49 s | 2.02 |
//	| the 2,000 pages through a relay adding 1 ms of round trip (`-rtt 1ms`, 11 rounds) | 5.80 s | 5.82 s | 1.01 |
//	| the 300 pages of 100 KB through that relay (11 rounds; the relay's own CPU shares the two cores) | 1.19 s | 1.31 s | 1.11 |
//	| a crawl of the Rust standard library's HTML documentation (2,350 pages, scripts and style sheets, 115 MiB, as rustup installs it) | 2.78 s | 2.79 s | 1.01 |
//	| one 100 MB text file from nginx (`-o`), over loopback (11 rounds) | 0.035 s | 0.32 s | 9.3 |
//	| one 100 MB file of random bytes from nginx, over loopback (15 rounds) | 0.08 s | 0.28 s | 3.6 |
//	| the same from vsftpd | 0.08 s | 0.31 s | 3.8 |
//	| the same read from a `file:` URL | 0.08 s | 0.25 s | 3.0 |
//	| the same at `--limit-rate 125M` (about 1 Gbit/s) | 0.80 s | 0.81 s | 1.02 |
//	| the same from vsftpd at `--limit-rate 125M` | 0.81 s | 0.83 s | 1.02 |
//
// The 100 MB file is where streaming the blocks shows: before, the archive
// took it to 8.5 times over loopback and to 1.65 times at 125 MiB/s (1.14
// at 25 MiB/s, where it is now 1.00), its work begun only once the
// transfer had ended. Over loopback the file comes faster than gzip (about
// 190 MB/s here on text) and SHA-1 take it; `wget --warc-file` took that
// file from 0.33 s to 19.8 s (59 times). The 300 pages of 100 KB are
// below the size that streams; compressing them beside the next records'
// building brought them back to where two goroutines had them (the build
// before took 1.61 in a batch where this one took 1.58; that row's earlier
// 1.38 was another day's batch).
//
// The 2,000-page crawl's ratio moves with the machine's load: 1.03 to 1.15
// in batches of 21 to 41 rounds minutes apart (the crawl without the
// archive taking 0.31 to 0.46 s); with the one-goroutine writer, 1.07 and
// 1.09 in two batches of 81 rounds (95% intervals of the median 1.04 to
// 1.09 and 1.07 to 1.14), and 1.09 (1.06 to 1.13) in 61 rounds with the
// hand-off in chunks. An archive runs with the collector set to
// `GOGC=200`, fewer collections of the records' garbage against more new
// memory to fault in (a fresh page costs 12 to 13 µs here): with Go's
// default (`GOGC=100`) the crawl took 1.17 times as long, at 150 1.12, in a
// batch where 200 took 1.11. On the small pages that is nearly all the
// archive costs here: in one batch of 41 rounds, `GOGC=200` alone, without
// the archive, took the crawl to 1.08 of its time, the archive (at 200)
// to 1.06, and the archive at 100 to 1.11; the records' own work, on the
// other core, hardly shows against a run at the same setting. A build
// that wrote small records without gowarc's builder, by hand, spent 27 ms
// less CPU on the crawl and took as long. On the real documentation the setting pays
// for itself: that crawl is long and makes much garbage of its own (512
// links a page, 192 of them different, each resolved), and `GOGC=200`
// alone, without the archive, took it to 0.84 to 0.86 of its time.
// Against that run the archive added 16 to 20%; against the run as a user
// starts it, 1.00 to 1.02 (three batches). Gophernicus, run from socat as
// from inetd, is a new process per request and sets a slower pace (an item every 9 ms
// here): a crawl of 1,500 items of the interop suite's generated hole
// (`--per-host 4`) took 13.4 s without the archive and 14.4 s with it
// (1.08; 3 rounds), its processes and deref's records sharing the two
// cores. The large pages are gzip's: one member per record, at about 190
// MB/s here with a core to itself, slower than nginx serves the pages over
// loopback. From a
// server across a network, whose bytes come slower than deref compresses
// them, the archive is written while the next page is on its way: with the
// loopback held to 400 Mbit/s (`tc qdisc add dev lo root tbf rate 400mbit
// burst 256kb latency 50ms`), the large pages took 0.67 s without the
// archive and 0.70 s with it (1.04; 11 rounds). For
// comparison, `wget --mirror` took 0.88 s without `--warc-file` and 2.80 s
// with it on the 2,000 pages (3.2 times), 0.26 s and 1.53 s on the large
// ones (5.9 times; medians of 5).
//
// `go test -bench SmallRecords ./fetch/warc` writes the two records of a
// small FTP file (a 700-byte resource and its control conversation): about
// 25 µs, 8.5 KB and 184 allocations per file here, a third of it gzip.
//
// `go test -bench RecordWork ./fetch/warc` measures what no way of
// writing an archive can leave out, per byte of a block: the two SHA-1
// digests of an HTTP response's record (its block's and its payload's)
// took 105 ms per 100 MB here (950 MB/s for both), and the block's
// compression at gzip's fastest level 500 ms (199 MB/s, to 37% of its
// size), each on one core. That sets the floor for one large object read
// at memory speed: a 100 MB text file from nginx over loopback came in 35
// ms without an archive, and with one that work alone, spread over both
// cores, takes at least 300 ms; the run took 320 ms (9.3 times, the median
// of 11 rounds in turns). An archive of such a run cannot cost 10% of it
// on this machine, nor on any whose loopback outruns SHA-1: 10% would be
// 3.5 ms. For the same file, curl took 0.19 s and wget 0.26 s without an
// archive, and wget 8.7 s with one. With `--no-warc-compression` deref
// took 0.22 s, and with `--no-warc-digests` too 0.16 s: the body is then
// only copied, but three times more (into the record's hand-off, its
// spool, and from there into the archive, the last by the kernel). Held to
// network rates with `--limit-rate`, the same text file took 1.02 times as
// long with the archive at 125 MB/s (1 Gbit/s), 1.04 at 250 MB/s, and 1.33
// at 400 MB/s, past what gzip's fastest level compresses on two cores
// (medians of 7, 5 and 5 rounds).
//
// `-gateway -url URL` times the object fetched through `deref serve` (its
// raw object, by curl and by deref) against deref fetching it directly. A
// 1 GiB binary from pygopherd came through the gateway at 0.96-0.98 of
// deref's direct speed (curl and deref as the gateway's client), from
// gophernicus at 1.10-1.17; from vsftpd, which sends at 3-5 GB/s over
// loopback with sendfile, at 0.30-0.34: the gateway splices it, but the
// second loopback hop costs about as much as the first, and on a two-core
// virtual machine each hop's interrupts are dear.
//
// # Small files, one processor
//
// `deref` with more than one URL (`-i` lists among them) and `deref
// mirror` run on one processor, as curl, wget and lftp run on one thread,
// unless `GOMAXPROCS` is set or `--segments` reads several streams at
// once: for small files the Go scheduler's idle threads, woken to look for
// work at every event, cost more CPU than the work (a quarter of it for
// 2,000 files). One URL keeps every processor: 1 GiB over FTP into a file
// takes 0.48 s so, 0.56 s on one. A file over FTP on a kept connection
// costs one round trip: its MDTM, SIZE, EPSV and RETR go in one write, its
// data is read as soon as the data connection is made, and its 226 is read
// with the next file's replies (so no folder's times are asked beforehand,
// but for files already here, whose times decide whether they are
// fetched). A text file (TYPE A: a `.txt` name without `;type=`) has its
// MDTM sent with its EPSV and RETR too, and its 226 waited for, since its
// size on the wire is not known: `deref -i` of 2,000 `.txt` URLs took 0.73
// of lftp's CPU with each MDTM on its own, and 0.67 so. A server that
// refuses a RETR sent so (503 or 425), or whose greeting names one that
// loses commands sent ahead, is sent one command at a time from then on. A
// file read before its 150 has the control connection watched for a
// refusal in its place only once its data has not come within 20 ms: a
// goroutine and a read a file less for the half of small files whose data
// is not there at the first read. A small file's data connection (and a
// listing's) is dialled outside the net package's dialer
// (`blockconn.DialPolled`): a socket, a connect, and the runtime's poller,
// without the resolver, a deadline context and timer, getsockname,
// getpeername and TCP_NODELAY, which were a sixth of deref's own CPU time
// for 2,000 small files; the connection then yields once, as the net
// package's wait for the connect did, so that its first read finds the
// server's data more often. It is read with non-blocking calls of its own
// and enters the runtime's poller only when a read finds nothing: a file
// whose bytes have come by then costs no fcntl, no epoll_ctl to add or
// remove it, and no poll to decide on the watch above. The CPU per small
// file is now below the 0.6 of lftp's the project aims at, and close to
// what any Go program can do: `ftpfloor` (`internal/devcmd/ftpfloor`),
// which does nothing but log in, list, and for each file write MDTM, EPSV
// and RETR at once, read the data into NAME.part and rename it, takes 0.56
// to 0.58 of lftp's CPU. The side-by-side's mean CPU, five runs of 21 to
// 41 rounds (standard errors about 1%, but a run differs from the next by
// up to 5%, lftp's too): lftp 374 to 398 ms; `deref -i` 215 to 237 ms,
// 0.58 in three runs, 0.60 and 0.61 in two, 0.586 over the 165 rounds;
// `deref mirror` 0.56 to 0.60, 0.585 over all; the listing and `-i`
// together 0.61 to 0.66; `ftpfloor` 0.56 to 0.58. `deref -i` of the same
// files as `.txt` URLs (TYPE A) costs about 4% more than with `;type=i`.
// In 12 alternating rounds deref's system time is below the floor's now
// (174 ms against 192: the kernel's work for each file's data connection
// and file), and the difference is user time, 56 ms against 30. Under
// `perf`, deref's user time is spread over the layers (retries, idle
// watch, trace, pool, pipelining, the download's or the mirror's
// bookkeeping), no function over 4%; allocation and the garbage collector
// are about a fifth of it, but `GOGC=400` or `off` does not move the CPU.
package main
