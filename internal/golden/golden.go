// Package golden compares what a test made with a golden file, or
// rewrites the file when the test runs with -update.
package golden

import (
	"flag"
	"os"
	"testing"
)

// Update is the -update flag of every test binary that imports this
// package: Check then rewrites the golden files instead of comparing.
var Update = flag.Bool("update", false, "rewrite the golden files")

// Check compares got with the file at path, or writes it there under
// -update.
func Check(t testing.TB, path, got string) {
	t.Helper()
	if *Update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s: got\n%s\nwant\n%s", path, got, want)
	}
}
