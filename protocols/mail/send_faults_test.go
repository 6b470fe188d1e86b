package mail_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch"
	"github.com/urlderef/deref/internal/testserver/faults"
	"github.com/urlderef/deref/protocols/mail"
	"github.com/urlderef/deref/url"
)

// TestSMTPFaults sends a mailto: message through each SMTP server of the
// fault catalogue: each ends in an error of its class, within the connect
// and idle time-outs, with the heap bounded; a never-greeting server is
// given the connect time-out only.
func TestSMTPFaults(t *testing.T) {
	ends := map[string][]int{
		faults.NeverGreet:       {6},
		faults.GreetForever:     {7},
		faults.EndlessLine:      {7},
		faults.EndlessReply:     {7},
		faults.StallBeforeFinal: {6, 7},
		faults.DropBeforeFinal:  {6, 7},
		faults.Reset:            {6, 7},
	}
	for name, want := range ends {
		t.Run(name, func(t *testing.T) {
			s, err := faults.SMTP.Start(name)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			sender := &mail.Sender{Server: strings.TrimPrefix(s.URL, "smtp://"), ConnectTimeout: 300 * time.Millisecond, IdleTimeout: 700 * time.Millisecond}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			runtime.GC()
			done := make(chan struct{})
			peaks := faults.PeakHeap(done)
			start := time.Now()
			_, _, err = sender.Send(ctx, url.MustParse("mailto:joe@harness.test"), "", strings.NewReader("hello\n"))
			elapsed := time.Since(start)
			close(done)
			peak := <-peaks
			code := fetch.ExitCode(err)
			ok := false
			for _, w := range want {
				ok = ok || code == w
			}
			if err == nil || !ok {
				t.Errorf("ended with %v (exit %d), want %v", err, code, want)
			}
			if elapsed > time.Second+500*time.Millisecond {
				t.Errorf("took %v", elapsed)
			}
			if name == faults.NeverGreet && (elapsed > 800*time.Millisecond || !errors.Is(err, fetch.ErrTimeout)) {
				t.Errorf("a silent server: %v after %v, want a time-out at the connect time-out", err, elapsed)
			}
			if peak > 64<<20 {
				t.Errorf("peak heap %d MiB", peak>>20)
			}
			t.Logf("%v after %v, peak heap %.1f MiB", err, elapsed.Round(time.Millisecond), float64(peak)/(1<<20))
		})
	}
}
