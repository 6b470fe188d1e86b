package netrc

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sample = `# comment
machine ftp.example.com login joe password s3cret
machine other.example
	login ann
	password "pw"
macdef init
cd /pub
bin

default login anonymous password me@example.com
`

func TestParseFind(t *testing.T) {
	es, err := Parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 3 {
		t.Fatalf("%d entries: %+v", len(es), es)
	}
	if e := Find(es, "FTP.example.com", ""); e == nil || e.Login != "joe" || e.Password != "s3cret" {
		t.Errorf("machine match: %+v", e)
	}
	if e := Find(es, "ftp.example.com", "ann"); e != nil {
		t.Errorf("login mismatch found %+v", e)
	}
	if e := Find(es, "other.example", ""); e == nil || e.Login != "ann" || e.Password != "pw" {
		t.Errorf("quoted password: %+v", e)
	}
	if e := Find(es, "nowhere", ""); e == nil || !e.Default || e.Login != "anonymous" {
		t.Errorf("default: %+v", e)
	}
	if _, err := Parse(strings.NewReader("login joe")); err == nil {
		t.Error("login before machine accepted")
	}
	if _, err := Parse(strings.NewReader("machine")); err == nil {
		t.Error("machine without a name accepted")
	}
	if _, err := Parse(strings.NewReader("macdef x\nfoo\n")); err != nil {
		t.Errorf("macdef alone: %v", err)
	}
}

func TestLoadPermissions(t *testing.T) {
	p := filepath.Join(t.TempDir(), "netrc")
	os.WriteFile(p, []byte(sample), 0o644)
	if _, err := Load(p); !errors.Is(err, ErrInsecure) {
		t.Errorf("world-readable netrc with passwords: %v", err)
	}
	os.Chmod(p, 0o600)
	if es, err := Load(p); err != nil || len(es) != 3 {
		t.Errorf("private netrc: %v", err)
	}
	if es, err := Load(p + ".missing"); err != nil || es != nil {
		t.Errorf("missing file: %v %v", es, err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add(sample)
	f.Fuzz(func(t *testing.T, s string) { Parse(strings.NewReader(s)) })
}
