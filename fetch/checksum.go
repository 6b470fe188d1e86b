package fetch

import (
	"bufio"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"
)

// ErrChecksum is the error of an object whose digest is not the one
// expected ([DownloadOptions.Checksum]): nothing is left under its name.
var ErrChecksum = errors.New("checksum mismatch")

// Checksum is an expected digest: an algorithm and its value.
type Checksum struct {
	Algorithm string // "sha256", "sha512", "sha1" or "md5"
	Sum       []byte
}

// ParseChecksum reads "ALGORITHM:HEX", as go-getter's ?checksum= writes
// it: sha256, sha512, sha1 or md5 (the last two for old archives).
func ParseChecksum(s string) (Checksum, error) {
	alg, hx, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok {
		return Checksum{}, fmt.Errorf("checksum %q is not ALGORITHM:HEX (sha256:..., sha512:..., sha1:..., md5:...)", s)
	}
	alg = strings.ToLower(alg)
	h := newHash(alg)
	if h == nil {
		return Checksum{}, fmt.Errorf("checksum algorithm %q is not sha256, sha512, sha1 or md5", alg)
	}
	sum, err := hex.DecodeString(hx)
	if err != nil || len(sum) != h.Size() {
		return Checksum{}, fmt.Errorf("checksum %q is not %d hex bytes of %s", hx, h.Size(), alg)
	}
	return Checksum{Algorithm: alg, Sum: sum}, nil
}

// String writes the checksum as [ParseChecksum] reads it.
func (c Checksum) String() string { return c.Algorithm + ":" + hex.EncodeToString(c.Sum) }

func newHash(alg string) hash.Hash {
	switch alg {
	case "sha256":
		return sha256.New()
	case "sha512":
		return sha512.New()
	case "sha1":
		return sha1.New()
	case "md5":
		return md5.New()
	}
	return nil
}

// FindChecksum looks name up in a sums file: GNU lines ("HEX  name",
// "HEX *name", as sha256sum writes them; the algorithm then follows from
// the digest's length) and BSD lines ("SHA256 (name) = HEX"). It reports
// false when the file names no digest for name.
func FindChecksum(r io.Reader, name string) (Checksum, bool, error) {
	var found Checksum
	ok := false
	err := scanSums(r, func(n string, c Checksum, err error) (bool, error) {
		if n != name {
			return false, nil
		}
		found, ok = c, err == nil
		return true, err
	})
	return found, ok, err
}

// ReadChecksums reads every line of a sums file (the forms [FindChecksum]
// reads) into a map from name (without a leading "./") to digest; the
// first line for a name counts. A malformed digest is an error; at most
// 4 MiB of lines are read.
func ReadChecksums(r io.Reader) (map[string]Checksum, error) {
	out := map[string]Checksum{}
	err := scanSums(io.LimitReader(r, 4<<20), func(n string, c Checksum, err error) (bool, error) {
		if err != nil {
			return true, err
		}
		if _, dup := out[n]; !dup {
			out[n] = c
		}
		return false, nil
	})
	return out, err
}

// Hash returns a new hash of the checksum's algorithm.
func (c Checksum) Hash() hash.Hash { return newHash(c.Algorithm) }

// scanSums calls each for every line of a sums file that names a file,
// with the line's digest or the error reading it, until each says stop
// or returns an error.
func scanSums(r io.Reader, each func(name string, c Checksum, err error) (stop bool, _ error)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var name string
		var c Checksum
		var err error
		if alg, rest, ok := strings.Cut(line, " ("); ok {
			// BSD: ALG (name) = hex
			n, hx, ok := strings.Cut(rest, ") = ")
			if !ok {
				continue
			}
			name = n
			c, err = ParseChecksum(strings.ToLower(alg) + ":" + hx)
		} else {
			// GNU: hex, two spaces (or a space and *), name
			hx, n, ok := strings.Cut(line, " ")
			if !ok || hx == "" || strings.Trim(hx, "0123456789abcdefABCDEF") != "" {
				continue // not a sums line (sha256sum -c warns and goes on)
			}
			name = strings.TrimPrefix(strings.TrimPrefix(strings.TrimPrefix(n, " "), "*"), "./")
			if alg := map[int]string{64: "sha256", 128: "sha512", 40: "sha1", 32: "md5"}[len(hx)]; alg != "" {
				c, err = ParseChecksum(alg + ":" + hx)
			} else {
				err = fmt.Errorf("the digest of %s is %d hex digits, no algorithm's length", name, len(hx))
			}
		}
		stop, err := each(name, c, err)
		if err != nil || stop {
			return err
		}
	}
	return sc.Err()
}
