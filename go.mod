module github.com/urlderef/deref

go 1.26.0

require (
	github.com/fclairamb/ftpserverlib v0.32.0
	github.com/jlaffaye/ftp v0.2.4
	github.com/spf13/afero v1.15.0
	github.com/ziutek/telnet v0.1.0
	golang.org/x/net v0.62.0
	golang.org/x/sys v0.49.0
	golang.org/x/term v0.47.0
)

require golang.org/x/text v0.43.0 // indirect
