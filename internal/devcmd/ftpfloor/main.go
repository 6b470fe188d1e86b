// Command ftpfloor is the least work a Go program does to copy the files of
// one FTP folder: a bound for deref's CPU time on many small files, not a
// client anyone should use.
//
//	ftpfloor [-parallel N] ftp://host:port/dir/ DEST
//
// It logs in as anonymous, lists the folder with NLST, and has N control
// connections (4 by default, as lftp's mirror -P 4) each take files in
// turn: MDTM, EPSV and RETR written at once, the data connection read
// into NAME.part, the file given its time and renamed, the 226 read. It
// runs on one processor (GOMAXPROCS 1), as deref's mirror and -i do, and
// uses the standard library's net, bufio and os only: no contexts, time-outs,
// traces, retries, pools or checks of what the server says beyond the
// reply codes. Whatever deref spends above it on the same folder is the
// cost of its layers, not of the system calls both make.
// sidebyside -mirror runs it as "floor" beside deref, lftp and wget.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	neturl "net/url"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	parallel := flag.Int("parallel", 4, "control connections")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: ftpfloor [-parallel N] ftp://host:port/dir/ DEST")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 2 || *parallel < 1 {
		flag.Usage()
		os.Exit(2)
	}
	runtime.GOMAXPROCS(1)
	if err := run(flag.Arg(0), flag.Arg(1), *parallel); err != nil {
		fmt.Fprintln(os.Stderr, "ftpfloor:", err)
		os.Exit(1)
	}
}

func run(dirURL, dest string, parallel int) error {
	u, err := neturl.Parse(dirURL)
	if err != nil || u.Scheme != "ftp" || u.Host == "" {
		return fmt.Errorf("%q is not an ftp://host/dir/ URL", dirURL)
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "21")
	}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return err
	}
	first, err := login(host, u.Path)
	if err != nil {
		return err
	}
	names, err := first.nlst()
	if err != nil {
		return err
	}
	jobs := make(chan string)
	errs := make(chan error, parallel)
	var wg sync.WaitGroup
	for i := range parallel {
		c := first
		if i > 0 {
			if c, err = login(host, u.Path); err != nil {
				close(jobs) // the connections made already end
				wg.Wait()
				return err
			}
		}
		wg.Go(func() {
			defer c.conn.Close()
			for name := range jobs {
				if err := c.get(name, dest); err != nil {
					errs <- fmt.Errorf("%s: %w", name, err)
					for range jobs {
					}
					return
				}
			}
		})
	}
	for _, name := range names {
		jobs <- name
	}
	close(jobs)
	wg.Wait()
	close(errs)
	return <-errs
}

type ctl struct {
	conn net.Conn
	r    *bufio.Reader
	host string // the server's address, without the port
	buf  []byte
}

func login(addr, dir string) (*ctl, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	h, _, _ := net.SplitHostPort(addr)
	c := &ctl{conn: conn, r: bufio.NewReader(conn), host: h, buf: make([]byte, 32<<10)}
	if _, err := c.reply('2'); err != nil {
		conn.Close()
		return nil, err
	}
	for _, cmd := range []string{"USER anonymous", "PASS ftpfloor@", "TYPE I", "CWD " + path.Clean("/"+dir)} {
		if err := c.send(cmd); err != nil {
			conn.Close()
			return nil, err
		}
		want := byte('2')
		if cmd[0] == 'U' {
			want = '3'
		}
		if _, err := c.reply(want); err != nil {
			conn.Close()
			return nil, fmt.Errorf("%s: %w", cmd, err)
		}
	}
	return c, nil
}

func (c *ctl) send(cmd string) error {
	if strings.ContainsAny(cmd, "\r\n") {
		return errors.New("a line break in a command")
	}
	_, err := io.WriteString(c.conn, cmd+"\r\n")
	return err
}

// reply reads one reply, multi-line or not, and wants its first digit.
func (c *ctl) reply(want byte) (string, error) {
	var code string
	for {
		line, err := c.r.ReadString('\n')
		if err != nil {
			return "", err
		}
		if len(line) < 4 {
			continue
		}
		if code == "" {
			code = line[:3]
			if line[3] == '-' {
				continue
			}
		}
		if line[:3] == code && line[3] == ' ' {
			if line[0] != want {
				return "", fmt.Errorf("the server said %q", strings.TrimSpace(line))
			}
			return strings.TrimSpace(line), nil
		}
	}
}

// data reads an EPSV reply and connects to the port it names.
func (c *ctl) data() (net.Conn, error) {
	line, err := c.reply('2')
	if err != nil {
		return nil, err
	}
	_, rest, ok := strings.Cut(line, "(|||")
	port, _, ok2 := strings.Cut(rest, "|)")
	if n, err := strconv.Atoi(port); !ok || !ok2 || err != nil || n <= 0 || n > 65535 {
		return nil, fmt.Errorf("no port in %q", line)
	}
	return net.Dial("tcp", net.JoinHostPort(c.host, port))
}

func (c *ctl) nlst() ([]string, error) {
	if err := c.send("EPSV"); err != nil {
		return nil, err
	}
	d, err := c.data()
	if err != nil {
		return nil, err
	}
	defer d.Close()
	if err := c.send("NLST"); err != nil {
		return nil, err
	}
	if _, err := c.reply('1'); err != nil {
		return nil, err
	}
	var names []string
	s := bufio.NewScanner(d)
	for s.Scan() {
		if name := path.Base(strings.TrimRight(s.Text(), "\r")); name != "." && name != ".." && name != "/" {
			names = append(names, name)
		}
	}
	if _, err := c.reply('2'); err != nil {
		return nil, err
	}
	return names, s.Err()
}

func (c *ctl) get(name, dest string) error {
	if _, err := io.WriteString(c.conn, "MDTM "+name+"\r\nEPSV\r\nRETR "+name+"\r\n"); err != nil {
		return err
	}
	var mtime time.Time
	if line, err := c.reply('2'); err == nil && len(line) >= 18 {
		mtime, _ = time.Parse("20060102150405", line[4:18])
	} else if err != nil {
		return err
	}
	d, err := c.data()
	if err != nil {
		return err
	}
	defer d.Close()
	if _, err := c.reply('1'); err != nil {
		return err
	}
	final := filepath.Join(dest, filepath.Base(name))
	part := final + ".part"
	f, err := os.OpenFile(part, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	err = c.copy(f, d)
	d.Close()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if _, rerr := c.reply('2'); err == nil {
		err = rerr
	}
	if err == nil && !mtime.IsZero() {
		err = os.Chtimes(part, time.Time{}, mtime)
	}
	if err != nil {
		os.Remove(part)
		return err
	}
	return os.Rename(part, final)
}

// copy reads d to its end into f through one buffer, as a C client does.
func (c *ctl) copy(f *os.File, d net.Conn) error {
	for {
		n, err := d.Read(c.buf)
		if n > 0 {
			if _, werr := f.Write(c.buf[:n]); werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
