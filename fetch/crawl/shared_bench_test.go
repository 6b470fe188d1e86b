package crawl_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/urlderef/deref/fetch/crawl"
	"github.com/urlderef/deref/fetch/crawl/shared"
	"github.com/urlderef/deref/internal/testserver"
	"github.com/urlderef/deref/internal/testserver/redisd"
)

// site60 is a site of 60 Gopher servers, each behind a relay adding a
// 20 ms round trip: the first server's root menu lists every server's
// root, and each root lists 5 text items of its server.
func site60(b *testing.B) string {
	relays := make([]string, 60)
	for i := range relays {
		ln, err := testserver.Listen(func(c net.Conn) {
			defer c.Close()
			line, err := bufio.NewReader(c).ReadString('\n')
			if err != nil {
				return
			}
			sel := strings.TrimRight(line, "\r\n")
			self, port, _ := net.SplitHostPort(relays[i])
			var w strings.Builder
			switch sel {
			case "":
				for k := range 5 {
					fmt.Fprintf(&w, "0Item %d\t/t/%d\t%s\t%s\r\n", k, k, self, port)
				}
			case "/all":
				for _, r := range relays {
					h, p, _ := net.SplitHostPort(r)
					fmt.Fprintf(&w, "1Root\t\t%s\t%s\r\n", h, p)
				}
			default:
				w.WriteString("text of " + sel + "\r\n")
			}
			w.WriteString(".\r\n")
			c.Write([]byte(w.String()))
		})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { ln.Close() })
		r, err := testserver.Relay(ln.Addr().String(), 20*time.Millisecond)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { r.Close() })
		relays[i] = r.Addr().String()
	}
	return "gopher://" + relays[0] + "/1/all"
}

// BenchmarkSharedWorkers crawls the 60-server site (361 URLs, each a
// 20 ms round trip away) with one worker and with three, sharing a
// frontier in redis-server, each worker at --parallel 4 and the crawl at
// one connection a host: URLs/s is the crawl's throughput, which three
// workers should make about three times one's.
func BenchmarkSharedWorkers(b *testing.B) {
	s := redisd.Start(b)
	start := site60(b)
	for _, workers := range []int{1, 3} {
		b.Run(fmt.Sprint(workers, "workers"), func(b *testing.B) {
			urls := 0
			begin := time.Now()
			for i := range b.N {
				store := s.URL(fmt.Sprintf("w%d-%d-%d", workers, i, time.Now().UnixNano()))
				var wg sync.WaitGroup
				var mu sync.Mutex
				for w := range workers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						f, err := shared.Open(context.Background(), store, shared.Options{Worker: fmt.Sprint(w)})
						if err != nil {
							b.Error(err)
							return
						}
						defer f.Close()
						rep, err := crawl.Run(context.Background(), client(), []string{start}, crawl.Options{Frontier: f, Parallel: 4, IgnoreRobots: true, SpanHosts: true})
						if err != nil {
							b.Error(err)
							return
						}
						mu.Lock()
						urls += rep.Fetched
						mu.Unlock()
					}()
				}
				wg.Wait()
			}
			if urls != 361*b.N {
				b.Errorf("%d URLs fetched in %d crawls, want 361 each", urls, b.N)
			}
			b.ReportMetric(float64(urls)/time.Since(begin).Seconds(), "URLs/s")
		})
	}
}
