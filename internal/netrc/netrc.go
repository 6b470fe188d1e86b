// Package netrc reads ~/.netrc files: "machine", "default", "login",
// "password" and "account" tokens, with "macdef" bodies skipped.
package netrc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Entry is the login for one machine, or for every machine when Default.
type Entry struct {
	Machine  string
	Default  bool
	Login    string
	Password string
	Account  string
}

// ErrInsecure is returned by Load for a file holding a password that users
// other than its owner can read.
var ErrInsecure = errors.New("netrc: file holds a password but others can read it (chmod 600)")

// Parse reads netrc entries from r. A malformed file is an error naming the
// line.
func Parse(r io.Reader) ([]Entry, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 1<<20)
	var entries []Entry
	var cur *Entry
	inMacro := false
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if inMacro {
			if strings.TrimSpace(text) == "" {
				inMacro = false
			}
			continue
		}
		fields := strings.Fields(text)
		for i := 0; i < len(fields); i++ {
			tok := fields[i]
			if strings.HasPrefix(tok, "#") {
				break
			}
			arg := func() (string, error) {
				if i+1 >= len(fields) {
					return "", fmt.Errorf("netrc: line %d: %q needs a value", line, tok)
				}
				i++
				v := fields[i]
				if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
					v = v[1 : len(v)-1] // a quoted value, as curl writes it
				}
				return v, nil
			}
			var err error
			switch tok {
			case "machine":
				entries = append(entries, Entry{})
				cur = &entries[len(entries)-1]
				cur.Machine, err = arg()
			case "default":
				entries = append(entries, Entry{Default: true})
				cur = &entries[len(entries)-1]
			case "login", "password", "account":
				if cur == nil {
					return nil, fmt.Errorf("netrc: line %d: %q before any machine", line, tok)
				}
				var v string
				v, err = arg()
				switch tok {
				case "login":
					cur.Login = v
				case "password":
					cur.Password = v
				default:
					cur.Account = v
				}
			case "macdef":
				inMacro = true
				i = len(fields)
			default:
				return nil, fmt.Errorf("netrc: line %d: unknown token %q", line, tok)
			}
			if err != nil {
				return nil, err
			}
		}
	}
	return entries, sc.Err()
}

// Load reads the netrc file at path. A missing file gives no entries and
// no error. A file that holds a password and is readable by group or
// others gives ErrInsecure, as ftp(1) refuses it.
func Load(path string) ([]Entry, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	entries, err := Parse(f)
	if err != nil {
		return nil, err
	}
	if st.Mode().Perm()&0o077 != 0 {
		for _, e := range entries {
			if e.Password != "" {
				return nil, fmt.Errorf("%w: %s", ErrInsecure, path)
			}
		}
	}
	return entries, nil
}

// DefaultPath returns $NETRC, else ~/.netrc.
func DefaultPath() string {
	if p := os.Getenv("NETRC"); p != "" {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".netrc")
}

// Find returns the entry for host (case-insensitive) and, when login is
// not empty, that login; else the default entry; else nil.
func Find(entries []Entry, host, login string) *Entry {
	var def *Entry
	for i := range entries {
		e := &entries[i]
		if login != "" && e.Login != login {
			continue
		}
		if e.Default {
			if def == nil {
				def = e
			}
			continue
		}
		if strings.EqualFold(e.Machine, host) {
			return e
		}
	}
	return def
}
