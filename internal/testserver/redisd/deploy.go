package redisd

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// CLI runs redis-cli against the store and returns what it printed,
// failing t when it cannot run.
func (s *Server) CLI(args ...string) string {
	s.t.Helper()
	out, err := exec.Command(cliBinary(s.bin), append([]string{"-h", "127.0.0.1", "-p", s.port()}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("redis-cli %v: %v: %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func cliBinary(server string) string {
	return strings.Replace(server, "-server", "-cli", 1)
}

// Kill stops the store at once (SIGKILL), as a crash would.
func (s *Server) Kill() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	s.cmd.Process.Kill()
	s.cmd.Wait()
	s.cmd = nil
}

// Wipe deletes the stopped store's data, so that Restart starts it empty.
func (s *Server) Wipe() {
	s.t.Helper()
	ents, _ := os.ReadDir(s.dir)
	for _, e := range ents {
		if e.Name() != "log" && e.Name() != "sentinel.conf" {
			os.RemoveAll(filepath.Join(s.dir, e.Name()))
		}
	}
}

// Running says whether the store's process runs.
func (s *Server) Running() bool { return s.cmd != nil }

// freePort is a port of 127.0.0.1 free, with port+10000 (a cluster
// node's bus) free too.
func freePort(t testing.TB) int {
	t.Helper()
	for range 200 {
		p := 20000 + rand.IntN(30000)
		a, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		b, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+10000))
		a.Close()
		if err != nil {
			continue
		}
		b.Close()
		return p
	}
	t.Fatal("no free port pair on 127.0.0.1")
	return 0
}

// startNode starts a redis-server on a free port with args.
func startNode(t testing.TB, args ...string) *Server {
	t.Helper()
	bin := Binary()
	if bin == "" {
		t.Skip("no redis-server or valkey-server on this machine (Debian: apt-get install redis-server): the shared frontier's tests need a real store")
	}
	port := strconv.Itoa(freePort(t))
	s := &Server{Addr: "127.0.0.1:" + port, bin: bin, dir: t.TempDir(), t: t}
	s.args = append([]string{"--bind", "127.0.0.1", "--port", port, "--dir", s.dir, "--appendonly", "yes", "--appendfsync", "no",
		"--save", "", "--daemonize", "no", "--protected-mode", "yes", "--logfile", filepath.Join(s.dir, "log"),
		"--repl-diskless-sync-delay", "0"}, args...)
	s.start()
	t.Cleanup(s.Stop)
	t.Cleanup(func() {
		if t.Failed() { // what each node did, to tell why
			log, _ := os.ReadFile(filepath.Join(s.dir, "log"))
			t.Logf("the log of the node on %s:\n%s", s.Addr, log[max(0, len(log)-6000):])
		}
	})
	return s
}

// StartReplica starts a replica of master, and waits until it holds
// master's data.
func StartReplica(t testing.TB, master *Server) *Server {
	t.Helper()
	return StartReplicaOf(t, master.Addr)
}

// StartReplicaOf starts a replica of the master at addr (127.0.0.1:PORT:
// a relay to it, say), and waits until it holds the master's data.
func StartReplicaOf(t testing.TB, addr string) *Server {
	t.Helper()
	_, port, _ := net.SplitHostPort(addr)
	r := startNode(t, "--replicaof", "127.0.0.1", port)
	r.waitLink()
	return r
}

// waitLink waits until the replica's link to its master is up.
func (s *Server) waitLink() {
	s.t.Helper()
	for range 400 {
		if strings.Contains(s.CLI("INFO", "replication"), "master_link_status:up") {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	s.t.Fatalf("the replica on %s never linked to its master: %s", s.Addr, s.CLI("INFO", "replication"))
}

// Sentinels are redis-sentinel processes watching one master, named
// "mymaster", with a quorum of 2.
type Sentinels struct {
	Nodes []*Server
	// Master is the name they know it by.
	Master string
}

// StartSentinels starts n sentinels watching master, which fail it over
// after a second without an answer, and waits until each knows the
// master's replicas (want of them) and the other sentinels.
func StartSentinels(t testing.TB, master *Server, n, replicas int) *Sentinels {
	t.Helper()
	bin := Binary()
	if bin == "" {
		t.Skip("no redis-server on this machine (Debian: apt-get install redis-server redis-sentinel)")
	}
	sbin, err := exec.LookPath("redis-sentinel")
	sentinelFlag := []string{}
	if err != nil {
		sbin, sentinelFlag = bin, []string{"--sentinel"} // the same program
	}
	ss := &Sentinels{Master: "mymaster"}
	for range n {
		port := strconv.Itoa(freePort(t))
		s := &Server{Addr: "127.0.0.1:" + port, bin: bin, dir: t.TempDir(), t: t}
		conf := filepath.Join(s.dir, "sentinel.conf")
		os.WriteFile(conf, []byte(fmt.Sprintf("port %s\nbind 127.0.0.1\ndir %s\nlogfile %s\n"+
			"sentinel monitor mymaster 127.0.0.1 %s 2\nsentinel down-after-milliseconds mymaster 1000\n"+
			"sentinel failover-timeout mymaster 5000\nsentinel parallel-syncs mymaster 1\n",
			port, s.dir, filepath.Join(s.dir, "log"), master.port())), 0o644)
		s.bin = sbin
		s.args = append([]string{conf}, sentinelFlag...)
		s.start()
		t.Cleanup(s.Stop)
		ss.Nodes = append(ss.Nodes, s)
	}
	for _, s := range ss.Nodes {
		ok := false
		for range 400 {
			m := s.cliAs(bin, "SENTINEL", "MASTER", "mymaster")
			if strings.Contains(m, "num-slaves\n"+strconv.Itoa(replicas)) && strings.Contains(m, "num-other-sentinels\n"+strconv.Itoa(n-1)) {
				ok = true
				break
			}
			time.Sleep(25 * time.Millisecond)
		}
		if !ok {
			t.Fatalf("the sentinel on %s did not find the replicas and sentinels: %s", s.Addr, s.cliAs(bin, "SENTINEL", "MASTER", "mymaster"))
		}
	}
	return ss
}

// cliAs runs redis-cli (the one beside bin) against s.
func (s *Server) cliAs(bin string, args ...string) string {
	out, _ := exec.Command(cliBinary(bin), append([]string{"-h", "127.0.0.1", "-p", s.port()}, args...)...).CombinedOutput()
	return strings.TrimSpace(string(out))
}

// URL is the sentinels' redis-sentinel:// URL with a key prefix.
func (ss *Sentinels) URL(prefix string) string {
	var a []string
	for _, s := range ss.Nodes {
		a = append(a, s.Addr)
	}
	return "redis-sentinel://" + strings.Join(a, ",") + "/" + ss.Master + "/0?prefix=" + prefix
}

// MasterAddr is the master's address as the first sentinel that answers
// names it.
func (ss *Sentinels) MasterAddr() string {
	for _, s := range ss.Nodes {
		if s.Running() {
			f := strings.Fields(s.cliAs(Binary(), "SENTINEL", "GET-MASTER-ADDR-BY-NAME", ss.Master))
			if len(f) == 2 {
				return f[0] + ":" + f[1]
			}
		}
	}
	return ""
}

// Cluster is a Redis Cluster of masters with a replica each.
type Cluster struct {
	Nodes []*Server
	t     testing.TB
}

// StartCluster starts 2*masters nodes and makes them a cluster with
// redis-cli --cluster create, one replica a master, failing a master
// over after 1.5 s without an answer; it waits until every node says the
// cluster is ok and every master streams its writes to its replicas.
func StartCluster(t testing.TB, masters int) *Cluster {
	t.Helper()
	return StartClusterOf(t, masters, 1)
}

// StartClusterOf is StartCluster with replicas a master (0: none).
func StartClusterOf(t testing.TB, masters, replicas int) *Cluster {
	t.Helper()
	c := &Cluster{t: t}
	var addrs []string
	for range masters * (1 + replicas) {
		s := startNode(t, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "1500")
		c.Nodes = append(c.Nodes, s)
		addrs = append(addrs, s.Addr)
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	out, err := exec.Command(cliBinary(c.Nodes[0].bin), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("redis-cli --cluster create: %v: %s", err, out)
	}
	for _, s := range c.Nodes {
		ok := false
		for range 400 {
			info := s.CLI("CLUSTER", "INFO")
			repl := s.CLI("INFO", "replication")
			// A master is ready once it streams its writes to each of its
			// replicas (state=online), not when they have its first copy
			// only: a master killed before would lose them all.
			master := strings.Contains(repl, "role:master") && strings.Count(repl, "state=online") == replicas
			if strings.HasPrefix(info, "cluster_state:ok") && (master || strings.Contains(repl, "master_link_status:up")) {
				ok = true
				break
			}
			time.Sleep(25 * time.Millisecond)
		}
		if !ok {
			t.Fatalf("the cluster node on %s is not ready: %s", s.Addr, s.CLI("CLUSTER", "INFO"))
		}
	}
	return c
}

// URL is the cluster's redis-cluster:// URL with a key prefix.
func (c *Cluster) URL(prefix string) string {
	var a []string
	for _, s := range c.Nodes {
		a = append(a, s.Addr)
	}
	return "redis-cluster://" + strings.Join(a, ",") + "/?prefix=" + prefix
}

// Masters are the nodes that are masters now.
func (c *Cluster) Masters() []*Server {
	var out []*Server
	for _, s := range c.Nodes {
		if s.Running() && strings.Contains(s.CLI("INFO", "replication"), "role:master") {
			out = append(out, s)
		}
	}
	return out
}
