package gemini

import (
	"bufio"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/urlderef/deref/protocols"
)

// DefaultKnownHosts is the known-hosts file of the user running the
// program: gemini/known_hosts in deref's folder of the user's data
// ($XDG_DATA_HOME, else ~/.local/share; ~/Library/Application Support on
// macOS; %LocalAppData% on Windows). "" when there is no home.
func DefaultKnownHosts() string {
	var base string
	switch runtime.GOOS {
	case "windows":
		base = os.Getenv("LocalAppData")
	case "darwin":
		if h, err := os.UserHomeDir(); err == nil {
			base = filepath.Join(h, "Library", "Application Support")
		}
	default:
		base = os.Getenv("XDG_DATA_HOME")
		if base == "" {
			if h, err := os.UserHomeDir(); err == nil {
				base = filepath.Join(h, ".local", "share")
			}
		}
	}
	if base == "" {
		return ""
	}
	return filepath.Join(base, "deref", "gemini", "known_hosts")
}

// Pin is a known host's line: the SHA-256 of its certificate's public
// key (its SubjectPublicKeyInfo) and the certificate's expiry.
type Pin struct {
	Host    string // HOST:PORT
	Key     string // "sha256/" and 64 hex digits
	Expires time.Time
}

func (p Pin) line() string {
	return p.Host + " " + p.Key + " " + p.Expires.UTC().Format(time.RFC3339)
}

// KeyOf is the pin form of a certificate's public key.
func KeyOf(c *x509.Certificate) string {
	sum := sha256.Sum256(c.RawSubjectPublicKeyInfo)
	return "sha256/" + hex.EncodeToString(sum[:])
}

// KeyChangedError is a server whose key is not the one pinned for it,
// before that pin expired: the connection is refused. It wraps
// protocols.ErrPermission.
type KeyChangedError struct {
	File string
	Line int // of File, 1 the first
	Pin  Pin
	Got  string
}

// Error says what changed and how to accept the new key.
func (e *KeyChangedError) Error() string {
	return fmt.Sprintf("%v: %s presents a key (%s) other than the one trusted on first use (%s, until %s); if the change is expected, remove line %d of %s",
		protocols.ErrPermission, e.Pin.Host, e.Got, e.Pin.Key, e.Pin.Expires.UTC().Format("2006-01-02"), e.Line, e.File)
}

// Unwrap returns protocols.ErrPermission.
func (e *KeyChangedError) Unwrap() error { return protocols.ErrPermission }

// knownHosts guards the files of pins.
var knownHosts sync.Mutex

// trust checks a certificate no CA vouches for against the pins of file
// (trust on first use): a host seen for the first time is pinned, the
// same key passes, a different one is refused unless its pin has expired
// (it is then replaced).
func trust(file, host string, cert *x509.Certificate, now time.Time) (pinned bool, err error) {
	if file == "" {
		return false, fmt.Errorf("%w: %s's certificate is not signed by a known authority, and there is no known-hosts file to trust it on first use", protocols.ErrPermission, host)
	}
	knownHosts.Lock()
	defer knownHosts.Unlock()
	key := KeyOf(cert)
	var lines []string
	if b, err := os.ReadFile(file); err == nil {
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	pin := Pin{Host: host, Key: key, Expires: cert.NotAfter}
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) < 3 || f[0] != host {
			continue
		}
		if f[1] == key {
			return false, nil
		}
		exp, _ := time.Parse(time.RFC3339, f[2])
		if now.Before(exp) {
			return false, &KeyChangedError{File: file, Line: i + 1, Pin: Pin{Host: host, Key: f[1], Expires: exp}, Got: key}
		}
		lines[i] = pin.line() // the old pin expired: the new key is trusted
		return true, write(file, lines)
	}
	return true, write(file, append(lines, pin.line()))
}

// write replaces file with lines, whole or not at all.
func write(file string, lines []string) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".known_hosts-*")
	if err != nil {
		return err
	}
	_, err = tmp.WriteString(strings.Join(lines, "\n") + "\n")
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), file)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
