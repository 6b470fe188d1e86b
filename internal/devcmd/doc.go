// Package devcmd is the home of the project's development commands: the
// programs developers and the interoperability suite run, never part of
// deref itself. They sit above everything (sidebyside times the engine
// and the gateway against curl, wget and lftp; ftpfloor is the least a Go
// program does to copy an FTP folder, the bound sidebyside sets beside
// them; mktree makes the interop suite's file tree; postnews posts its
// articles; prosperod serves a Prospero tree, for which no installable
// server exists), and nothing imports them. Every other package under internal is a helper below the engine
// and never imports fetch or cmd (fetch's TestLayers holds that).
//
//	go run ./internal/devcmd/sidebyside -h
//	go run ./internal/devcmd/ftpfloor ftp://HOST:PORT/DIR/ DEST
//	go run ./internal/devcmd/mktree DIR
//	go run ./internal/devcmd/postnews ADDR GROUP DIR
//	go run ./internal/devcmd/prosperod [-port N] [-dir DIR]
package devcmd
