package ftp

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/urlderef/deref/protocols"
)

// hashNames are the algorithms deref takes, in the order it prefers them:
// the name HASH uses (draft-bryan-ftpext-hash-02) and the older command
// that answers with the digest alone.
var hashNames = []struct{ alg, hash, x string }{
	{"sha256", "SHA-256", "XSHA256"},
	{"sha512", "SHA-512", "XSHA512"},
	{"sha1", "SHA-1", "XSHA1"},
	{"md5", "MD5", "XMD5"},
}

// Digests asks the server for the digests of names in the folder
// req.URL names: with HASH when FEAT offers it an algorithm deref takes
// (selected with OPTS HASH when it is not the current one), else with
// XSHA256, XSHA512, XSHA1 or XMD5, whichever FEAT lists first in that
// order; the commands are pipelined on one control connection. Names the
// server gives no digest for (a folder, a name it cannot parse) are left
// out. A server that offers none gives errors.ErrUnsupported.
func (f *Fetcher) Digests(ctx context.Context, req *protocols.Request, names []string) (string, map[string][]byte, error) {
	out := map[string][]byte{}
	var alg string
	err := f.inFolder(ctx, req, names, func(s *session, ask []string) (bool, error) {
		feats, err := s.features()
		if err != nil {
			return true, err
		}
		a, cmd, err := s.chooseHash(feats)
		if err != nil {
			return false, err
		}
		alg = a
		cmds := make([]string, len(ask))
		for i, n := range ask {
			cmds[i] = cmd + " " + n
		}
		return s.pipeline(cmds, func(i, code int, msg string) error {
			if code/100 != 2 {
				return nil
			}
			if sum, ok := parseDigest(msg, cmd == "HASH", a); ok {
				out[ask[i]] = sum
			}
			return nil
		})
	})
	if err != nil {
		return "", nil, err
	}
	return alg, out, nil
}

// features asks FEAT and returns its feature lines, upper-cased verbs
// with their parameters as sent.
func (s *session) features() ([]string, error) {
	var lines []string
	_, err := s.pipeline([]string{"FEAT"}, func(_, code int, msg string) error {
		if code != 211 {
			return nil // no FEAT: no features
		}
		for _, l := range strings.Split(msg, "\n") {
			if strings.HasPrefix(l, " ") {
				lines = append(lines, strings.TrimSpace(l))
			}
		}
		return nil
	})
	return lines, err
}

// chooseHash picks the algorithm and command from the FEAT lines, and
// selects the algorithm for HASH when the server's current one differs.
func (s *session) chooseHash(feats []string) (alg, cmd string, err error) {
	offered := map[string]bool{}
	var hashAlgs []string
	for _, l := range feats {
		v, params, _ := strings.Cut(l, " ")
		v = strings.ToUpper(v)
		offered[v] = true
		if v == "HASH" {
			hashAlgs = strings.Split(params, ";")
		}
	}
	for _, h := range hashNames {
		for _, a := range hashAlgs {
			current := strings.HasSuffix(a, "*")
			if !strings.EqualFold(strings.TrimSuffix(a, "*"), h.hash) {
				continue
			}
			if !current {
				code := 0
				if _, err := s.pipeline([]string{"OPTS HASH " + h.hash}, func(_, c int, _ string) error { code = c; return nil }); err != nil {
					return "", "", err
				}
				if code != 200 {
					break // not selected: the X commands, or the next
				}
			}
			return h.alg, "HASH", nil
		}
	}
	for _, h := range hashNames {
		if offered[h.x] {
			return h.alg, h.x, nil
		}
	}
	return "", "", fmt.Errorf("%w: the server offers no HASH, XSHA256, XSHA512, XSHA1 or XMD5", errors.ErrUnsupported)
}

// parseDigest reads a digest from a reply: HASH's last line is
// "SHA-256 0-369 HEX name", an X command's is the digest first.
func parseDigest(msg string, isHash bool, alg string) ([]byte, bool) {
	lines := strings.Split(strings.TrimSpace(msg), "\n")
	f := strings.Fields(lines[len(lines)-1])
	hx := ""
	switch {
	case isHash && len(f) >= 3:
		if !strings.EqualFold(strings.ReplaceAll(f[0], "-", ""), strings.ReplaceAll(alg, "-", "")) {
			return nil, false
		}
		hx = f[2]
	case !isHash && len(f) >= 1:
		hx = f[0]
	}
	sum, err := hex.DecodeString(hx)
	want := map[string]int{"sha256": 32, "sha512": 64, "sha1": 20, "md5": 16}[alg]
	if err != nil || len(sum) != want {
		return nil, false
	}
	return sum, true
}

// The contracts it claims, checked when it compiles.
var (
	_ protocols.Fetcher  = (*Fetcher)(nil)
	_ protocols.ModTimer = (*Fetcher)(nil)
	_ protocols.Hasher   = (*Fetcher)(nil)
)
