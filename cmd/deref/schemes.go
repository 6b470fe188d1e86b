package main

import (
	"strconv"

	"github.com/urlderef/deref/url"
)

// commandScheme is what the command does itself with the URLs of a
// scheme, beyond the library's retrieval.
type commandScheme struct {
	// programs are the external programs the URL is handed to (RFC
	// 1630), in order of preference, when the flag names none; args
	// makes their arguments.
	programs []string
	program  func(o *options) string
	args     func(u *url.URL) []string
	// mail: standard input is sent to the URL's mailbox (--smtp).
	mail bool
	// plusMeta: -I asks a Gopher+ server for the item's size and
	// attributes.
	plusMeta bool
	// timeFirst: -I prints Last-Modified before Content-Length, in the
	// order curl -I prints FTP's lines (MDTM's answer comes first).
	timeFirst bool
}

// commandSchemes is the one place the command names schemes.
var commandSchemes = map[string]commandScheme{
	"tn3270": {programs: []string{"c3270", "x3270", "tn3270"}, program: func(o *options) string { return o.tn3270 },
		args: func(u *url.URL) []string { return []string{u.Site()} }},
	"rlogin": {programs: []string{"rlogin", "slogin"}, program: func(o *options) string { return o.rlogin },
		args: rloginArgs},
	"mailto":  {mail: true},
	"gopher":  {plusMeta: true},
	"gophers": {plusMeta: true},
	"ftp":     {timeFirst: true},
	"ftps":    {timeFirst: true},
}

// rloginArgs are rlogin's arguments for u: -l USER, -p PORT, the host.
func rloginArgs(u *url.URL) []string {
	var args []string
	if u.User != nil {
		args = append(args, "-l", u.User.Username())
	}
	if u.Port != "" {
		if _, err := strconv.Atoi(u.Port); err == nil {
			args = append(args, "-p", u.Port)
		}
	}
	return append(args, u.Hostname())
}
