// Package gemini dereferences gemini: URLs over the Gemini protocol
// (specification v0.24): TLS 1.2 or later with SNI, one request per
// connection (the absolute URL and CRLF), a "STATUS META" header line,
// then the body, streamed.
//
// Certificates are trusted on first use, as Gemini clients trust them:
// one no CA vouches for is pinned in a known-hosts file on first
// contact (KnownHosts), and a different key later is refused until the
// pinned one expires. A CA-verified certificate is accepted as for
// https. Sessions are resumed (TLS tickets), so that the many pages of
// one capsule do not each pay a full handshake.
//
// A gemtext page (text/gemini) is a listing: its link lines are entries,
// and ParseGemtext reads every line type for pages that show it.
package gemini
