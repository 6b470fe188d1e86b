// Package url parses, formats, compares and resolves Uniform Resource
// Locators as RFC 1738 and RFC 1630 define them.
//
// Unlike net/url, it never decodes a whole path: a URL keeps its components
// in their encoded form, and each per-scheme view (FTP, Gopher, news, NNTP,
// WAIS, file, telnet, mailto, prospero) decodes exactly the parts its scheme
// defines, one segment at a time. So "%2F" inside an FTP segment stays inside
// that segment and "%3B" is never taken for the ";type=" separator.
//
// Every decoded value that a view hands out for a protocol command line has
// been checked for CR, LF and NUL; a URL that would smuggle one is an error.
//
// The package does no I/O.
package url
