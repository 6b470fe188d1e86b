// Package file dereferences file: URLs (RFC 1738 §3.10) on this machine:
// a regular file is streamed with its size, modification time and media
// type; a directory yields a listing.
//
// A file: URL naming another host is not this machine's file; the engine
// routes it to FTP, and this package refuses it.
package file

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/urlderef/deref/protocols"
	"github.com/urlderef/deref/url"
)

// Fetcher reads local files. The zero value is ready to use.
type Fetcher struct{}

// Fetch opens the file or directory the URL names.
func (Fetcher) Fetch(ctx context.Context, req *protocols.Request) (*protocols.Response, error) {
	fp, err := req.URL.File()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", protocols.ErrBadURL, err)
	}
	if !fp.Local {
		return nil, fmt.Errorf("%w: host %q is not this machine; a remote file: URL is fetched by FTP", protocols.ErrNotRetrievable, fp.Host)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	name := filepath.FromSlash(fp.Path)
	f, err := open(name)
	if err != nil {
		return nil, mapErr(err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, mapErr(err)
	}
	req.Tracef(protocols.TraceInfo, "open "+name)
	if st.IsDir() {
		defer f.Close()
		return listDir(ctx, req, f, st)
	}
	resp := &protocols.Response{
		Kind:    protocols.KindFile,
		Size:    -1,
		ModTime: st.ModTime(),
		Name:    protocols.NameFromURL(req.URL, "index"),
	}
	if st.Mode().IsRegular() {
		size := st.Size()
		if req.Offset > size {
			f.Close()
			return nil, fmt.Errorf("%w: offset %d, size %d", protocols.ErrRangeNotSatisfied, req.Offset, size)
		}
		if req.Offset > 0 {
			if _, err := f.Seek(req.Offset, io.SeekStart); err != nil {
				f.Close()
				return nil, mapErr(err)
			}
			resp.Offset = req.Offset
		}
		resp.Size = size - req.Offset
		resp.MediaType = mediaType(f, name)
	}
	resp.Body = f // an *os.File, so copying it into a file can use copy_file_range
	return resp, nil
}

// mediaType guesses from the name's suffix, else from the first bytes,
// read with ReadAt so the file offset stays where it is. A name without a
// suffix is not looked up: the first lookup reads the system's table of
// types (about a millisecond).
func mediaType(f *os.File, name string) string {
	if ext := filepath.Ext(name); ext != "" {
		if t := mime.TypeByExtension(ext); t != "" {
			if mt, _, err := mime.ParseMediaType(t); err == nil {
				return mt
			}
		}
	}
	buf := make([]byte, 512)
	n, _ := f.ReadAt(buf, 0)
	if n == 0 {
		return ""
	}
	mt, _, _ := mime.ParseMediaType(http.DetectContentType(buf[:n]))
	return mt
}

func listDir(ctx context.Context, req *protocols.Request, f *os.File, st fs.FileInfo) (*protocols.Response, error) {
	des, err := f.ReadDir(-1)
	if err != nil {
		return nil, mapErr(err)
	}
	sort.Slice(des, func(i, j int) bool { return des[i].Name() < des[j].Name() })
	base := *req.URL
	base.HasQuery, base.Query, base.HasFragment, base.Fragment = false, "", false, ""
	if !strings.HasSuffix(base.Path, "/") {
		base.Path += "/"
	}
	entries := make([]protocols.Entry, 0, len(des))
	for _, de := range des {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		e := protocols.Entry{Kind: protocols.KindFile, Name: de.Name(), Size: -1}
		if info, err := de.Info(); err == nil {
			e.ModTime = info.ModTime()
			if info.Mode().IsRegular() {
				e.Size = info.Size()
			}
			if info.Mode()&fs.ModeSymlink != 0 {
				e.Kind = protocols.KindLink
				e.Target, _ = os.Readlink(filepath.Join(f.Name(), de.Name()))
			}
		}
		seg := url.EscapeSegment(de.Name())
		if de.IsDir() {
			e.Kind = protocols.KindDirectory
			seg += "/"
		}
		e.URL = base.String() + seg
		entries = append(entries, e)
	}
	var buf bytes.Buffer
	if err := protocols.WriteListing(&buf, entries); err != nil {
		return nil, err
	}
	return &protocols.Response{
		Body:      io.NopCloser(&buf),
		Kind:      protocols.KindDirectory,
		Size:      int64(buf.Len()),
		ModTime:   st.ModTime(),
		MediaType: "text/plain",
		Name:      protocols.NameFromURL(req.URL, "index"),
		Entries:   entries,
	}, nil
}

func mapErr(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %w", protocols.ErrNotFound, err)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%w: %w", protocols.ErrPermission, err)
	}
	return err
}

// The contracts it claims, checked when it compiles.
var _ protocols.Fetcher = Fetcher{}
