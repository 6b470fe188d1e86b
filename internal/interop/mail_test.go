//go:build interop

package interop

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestMailto sends a message with deref mailto: --smtp through exim, which
// appends it to an mbox; the message arrives intact, and deref finds it
// again there by its Message-ID (mid:).
func TestMailto(t *testing.T) {
	smtp, inbox := env(t, "DEREF_INTEROP_SMTP"), env(t, "DEREF_INTEROP_MAILBOX")
	bin := filepath.Join(t.TempDir(), "deref")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/deref").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	mark := "interop-" + time.Now().UTC().Format("150405.000000000")
	text := "Hello Alice,\n.a line with a leading dot\nGrüße ☃\n" + mark + "\n"
	cmd := exec.Command(bin, "--smtp", smtp, "--subject", "Grüße "+mark, "mailto:alice%40harness.test")
	cmd.Stdin = strings.NewReader(text)
	cmd.Env = append(os.Environ(), "EMAIL=tester@harness.test")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("deref mailto: %v\n%s", err, out)
	}
	var box []byte
	for deadline := time.Now().Add(10 * time.Second); ; {
		box, _ = os.ReadFile(inbox)
		if bytes.Contains(box, []byte("\n"+mark+"\n")) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the message did not arrive; the mailbox holds:\n%s", box)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The last message of the mbox is ours.
	msg := box[bytes.LastIndex(box, []byte("\nFrom tester@harness.test "))+1:]
	if !bytes.Contains(msg, []byte("\n\n"+text)) {
		t.Errorf("body changed in transit:\n%s", msg)
	}
	id := regexp.MustCompile(`(?m)^Message-ID: <([^>]+)>`).FindSubmatch(msg)
	if id == nil {
		t.Fatalf("no Message-ID in\n%s", msg)
	}
	c := client()
	c.Mail.Dir = inbox
	resp, err := c.Get(context.Background(), "mid:"+string(id[1]))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.HasSuffix(got, []byte("\n\n"+text)) && !bytes.HasSuffix(got, []byte("\n\n"+text+"\n")) {
		t.Errorf("mid: lookup gave\n%s", got)
	}
}
