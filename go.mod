module github.com/urlderef/deref

go 1.26.0

require (
	github.com/chromedp/cdproto v0.159.0
	github.com/chromedp/chromedp v0.23.0
	github.com/fclairamb/ftpserverlib v0.32.0
	github.com/jlaffaye/ftp v0.2.4
	github.com/klauspost/compress v1.20.4
	github.com/nlnwa/gowarc v1.6.0
	github.com/redis/go-redis/v9 v9.23.0
	github.com/spf13/afero v1.15.0
	github.com/vbauerster/mpb/v8 v8.9.3
	github.com/ziutek/telnet v0.1.0
	golang.org/x/net v0.62.0
	golang.org/x/sys v0.49.0
	golang.org/x/term v0.47.0
	golang.org/x/time v0.15.0
)

require (
	github.com/VividCortex/ewma v1.2.0 // indirect
	github.com/acarl005/stripansi v0.0.0-20180116102854-5a71ef0e047d // indirect
	github.com/bits-and-blooms/bitset v1.5.0 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/google/uuid v1.3.0 // indirect
	github.com/mattn/go-runewidth v0.0.16 // indirect
	github.com/nlnwa/whatwg-url v0.4.0 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/prometheus/prometheus v0.40.3 // indirect
	github.com/rivo/uniseg v0.4.7 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/text v0.43.0 // indirect
)
