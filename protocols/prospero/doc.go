// Package prospero dereferences prospero: URLs (RFC 1738 §3.11, RFC
// 4157) over the Prospero Directory Service's protocol, version 5,
// carried by ARDP over UDP: the protocol the archie servers answered.
//
// A URL names one object of one server by its hsoname, an opaque name
// the client never takes apart. One exchange (GET-OBJECT-INFO #ALL with
// DIRECTORY and LIST ATTRIBUTES in the same request) tells a file from a
// folder and lists a folder; a file's bytes come with a second one,
// in-band (GET-OBJECT-INFO CONTENTS, the server's PROSPERO-CONTENTS
// access method), or through the engine's fetcher for another access
// method the object offers (AFTP and FTP as ftp:// URLs, GOPHER, WAIS),
// handed on as a redirect so that proxies, limits, resume and the trace
// apply to it as to any URL.
//
// ARDP is implemented whole on the client side: connection ids, packet
// numbers, replies of many packets reassembled in order and streamed as
// they become contiguous, the acknowledgement a server asks for at the
// end of each window, retransmission with back-off and the server's wait
// hint, duplicates, reordering and the byte-swapped connection ids of
// little-endian builds of the reference server tolerated. Every bound
// (time-out, retries, bytes) is the Fetcher's or the Request's.
//
// The wire forms follow the notes on the protocol that come with the
// project's specifications, and are tested against datagrams captured
// from the Prospero 5.3 server (dirsrv, "PreAlpha.5.3 17 May 94").
package prospero
