package warc

import (
	"regexp"
	"testing"
)

// Record IDs are random (version 4, RFC 9562 variant) UUID URNs, each
// different.
func TestNewRecordID(t *testing.T) {
	form := regexp.MustCompile(`^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 1000 {
		id, err := newRecordID()
		if err != nil {
			t.Fatal(err)
		}
		if !form.MatchString(id) {
			t.Fatalf("%q is not a version 4 UUID URN", id)
		}
		if seen[id] {
			t.Fatalf("%q twice", id)
		}
		seen[id] = true
	}
}
