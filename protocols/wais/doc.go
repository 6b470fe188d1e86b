// Package wais dereferences wais: URLs (RFC 1738 §3.9) over the WAIS
// protocol: Z39.50-1988 APDUs with the WAIS extensions, in the encoding of
// the Thinking Machines lineage (compressed-integer tags and lengths, a
// 25-byte ASCII header per message).
//
// A database URL designates a search index and sends nothing. A search
// URL sends one keyword search (query type "3") and returns the hits as
// listing entries whose URLs fetch them. A document URL, in the RFC's
// three-segment form or the four-segment form with the length that the
// libwww clients wrote, is retrieved by type-1 queries naming the docid,
// its type and a byte range, one 10000-byte slice at a time, each passed
// on before the next is asked for. The wpath is the docid in libwww's
// "tag=value;" encoding, decoded exactly once.
//
// The codec follows the notes on the wire protocol that come with the
// project's specifications, and is tested against exchanges captured from
// freeWAIS-sf 2.2.8.
package wais
