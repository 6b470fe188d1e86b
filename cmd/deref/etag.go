package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/urlderef/deref/fetch"
)

// readETag reads the entity tag --etag-compare names: the first line of
// the file, as --etag-save writes it. A file not there yet, or empty,
// holds none, and the retrieval is then unconditional: a script's first
// run (--etag-compare F --etag-save F) fetches the object.
func readETag(name string) (string, error) {
	f, err := os.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	line, err := bufio.NewReader(io.LimitReader(f, maxETag+2)).ReadString('\n')
	if err != nil && err != io.EOF {
		return "", err
	}
	tag := strings.TrimSpace(line)
	switch {
	case len(tag) > maxETag:
		return "", fmt.Errorf("%s: the entity tag is longer than %d bytes", name, maxETag)
	case strings.ContainsFunc(tag, func(r rune) bool { return r < ' ' || r == 0x7f }):
		return "", fmt.Errorf("%s: the entity tag holds a control character", name)
	}
	return tag, nil
}

// maxETag bounds the entity tag read: a header field, not a file.
const maxETag = 4096

// saveETag writes --etag-save's file: the entity tag and a newline, or
// nothing when the server gave none (as curl writes it).
func saveETag(name, tag string) error {
	if tag != "" {
		tag += "\n"
	}
	if err := os.WriteFile(name, []byte(tag), 0o644); err != nil {
		return fetch.WriteError(fmt.Errorf("--etag-save: %w", err))
	}
	return nil
}
