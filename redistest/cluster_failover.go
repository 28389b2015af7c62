package redistest

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// FailoverNodeTimeout is the cluster-node-timeout of a cluster started by
// StartFailoverCluster: a master that does not answer for this long is
// taken for failed, and its replica is promoted a second or two later.
const FailoverNodeTimeout = time.Second

// failoverTimeout bounds how long a failover may take to be seen by every
// live node, on a busy machine.
const failoverTimeout = 30 * time.Second

// StartFailoverCluster starts a cluster of masters (n >= 3), each with one
// replica, whose node timeout is FailoverNodeTimeout, and stops it when
// the test ends. Nodes holds the masters first, then the replicas.
func StartFailoverCluster(tb testing.TB, masters int) *Cluster {
	tb.Helper()
	c, err := LaunchFailoverCluster(masters)
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	tb.Cleanup(c.Close)
	return c
}

// LaunchFailoverCluster is StartFailoverCluster for callers without a
// testing.TB. The caller must Close the cluster.
func LaunchFailoverCluster(masters int) (*Cluster, error) {
	if masters < 3 {
		return nil, fmt.Errorf("redistest: a cluster needs at least 3 masters, got %d", masters)
	}
	bins, err := LookBinaries()
	if err != nil {
		return nil, err
	}
	timeout := []string{"--cluster-node-timeout", fmt.Sprint(FailoverNodeTimeout.Milliseconds())}
	c := &Cluster{}
	for i := 0; i < 2*masters; i++ {
		s, err := launch(true, timeout)
		if err != nil {
			c.Close()
			return nil, err
		}
		c.Nodes = append(c.Nodes, s)
		c.Addrs = append(c.Addrs, s.Addr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), clusterReadyTimeout)
	defer cancel()
	// The first n addresses become the masters, as redis-cli assigns them.
	args := append([]string{"--cluster", "create"}, c.Addrs...)
	args = append(args, "--cluster-replicas", "1", "--cluster-yes")
	if out, err := exec.CommandContext(ctx, bins.CLI, args...).CombinedOutput(); err != nil {
		c.Close()
		return nil, fmt.Errorf("%s --cluster create: %v\n%s", bins.CLI, err, out)
	}
	if err := c.waitReady(ctx); err != nil {
		c.Close()
		return nil, err
	}
	if err := c.waitReplicasLinked(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// waitReplicasLinked waits until every replica has finished its first sync
// with its master, so that a failover can promote it.
func (c *Cluster) waitReplicasLinked(ctx context.Context) error {
	for {
		linked := true
		for _, s := range c.Nodes {
			info, err := s.info(ctx, "replication")
			if err != nil || strings.Contains(info, "role:slave") && !strings.Contains(info, "master_link_status:up") {
				linked = false
				break
			}
		}
		if linked {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redistest: replicas not linked to their masters: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (s *Server) info(ctx context.Context, section string) (string, error) {
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DialTimeout: time.Second})
	defer rdb.Close()
	return rdb.Info(ctx, section).Result()
}

// running reports whether the server's process is alive (not Killed).
func (s *Server) running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.proc.done:
		return false
	default:
		return !s.closed
	}
}

// ReplicaOf returns the replica of the master at addr.
func (c *Cluster) ReplicaOf(ctx context.Context, addr string) (*Server, error) {
	m := c.node(addr)
	if m == nil {
		return nil, fmt.Errorf("redistest: %s is not a node of this cluster", addr)
	}
	rdb := redis.NewClient(m.Options())
	defer rdb.Close()
	id, err := rdb.Do(ctx, "CLUSTER", "MYID").Text()
	if err != nil {
		return nil, fmt.Errorf("redistest: CLUSTER MYID on %s: %w", addr, err)
	}
	lines, err := rdb.Do(ctx, "CLUSTER", "REPLICAS", id).StringSlice()
	if err != nil {
		return nil, fmt.Errorf("redistest: CLUSTER REPLICAS on %s: %w", addr, err)
	}
	for _, line := range lines {
		f := strings.Fields(line)
		if len(f) < 3 || strings.Contains(f[2], "fail") {
			continue
		}
		host, _, _ := strings.Cut(f[1], "@")
		if r := c.node(host); r != nil && r.running() {
			return r, nil
		}
	}
	return nil, fmt.Errorf("redistest: master %s has no live replica", addr)
}

// syncedReplicaOf waits until the master at addr has a live replica that
// has synced with it (a master just promoted has none until its old
// master has turned into its replica), and returns it.
func (c *Cluster) syncedReplicaOf(ctx context.Context, addr string) (*Server, error) {
	_, port, _ := net.SplitHostPort(addr)
	for {
		r, err := c.ReplicaOf(ctx, addr)
		if err == nil {
			info, ierr := r.info(ctx, "replication")
			if ierr == nil && strings.Contains(info, "master_link_status:up") && strings.Contains(info, "master_port:"+port+"\r") {
				return r, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("redistest: no synced replica of %s (%v): %w", addr, err, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Failover fails the master of slot over to its replica gracefully, as
// an operator does: CLUSTER FAILOVER on the replica, which waits until it
// has every write of its master before it takes over. It returns the new
// master's address once every live node sees it as the slot's owner.
func (c *Cluster) Failover(ctx context.Context, slot int) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, failoverTimeout)
	defer cancel()
	owner, err := c.SlotOwner(ctx, slot)
	if err != nil {
		return "", err
	}
	r, err := c.syncedReplicaOf(ctx, owner)
	if err != nil {
		return "", err
	}
	rdb := redis.NewClient(r.Options())
	err = rdb.Do(ctx, "CLUSTER", "FAILOVER").Err()
	rdb.Close()
	if err != nil {
		return "", fmt.Errorf("redistest: CLUSTER FAILOVER on %s: %w", r.Addr, err)
	}
	return r.Addr, c.waitLiveOwner(ctx, slot, r.Addr)
}

// KillMaster kills the master of slot (SIGKILL, as a crash) and waits
// until its replica has been promoted and every live node sees it as the
// slot's owner. It returns the killed server (Restart brings it back, as a
// replica of the new master) and the new master's address.
func (c *Cluster) KillMaster(ctx context.Context, slot int) (*Server, string, error) {
	ctx, cancel := context.WithTimeout(ctx, failoverTimeout)
	defer cancel()
	owner, err := c.SlotOwner(ctx, slot)
	if err != nil {
		return nil, "", err
	}
	r, err := c.ReplicaOf(ctx, owner)
	if err != nil {
		return nil, "", err
	}
	m := c.node(owner)
	m.Kill()
	return m, r.Addr, c.waitLiveOwner(ctx, slot, r.Addr)
}

// waitLiveOwner waits until every running node sees to as the owner of
// slot and to itself says it is a master.
func (c *Cluster) waitLiveOwner(ctx context.Context, slot int, to string) error {
	for {
		agreed := true
		for _, s := range c.Nodes {
			if !s.running() {
				continue
			}
			owner, err := c.ownerSeenBy(ctx, s, slot)
			if err != nil || owner != to {
				agreed = false
				break
			}
		}
		if agreed {
			if info, err := c.node(to).info(ctx, "replication"); err == nil && strings.Contains(info, "role:master") {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redistest: slot %d not served by %s on every live node: %w", slot, to, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// LoseWrites makes the master of slot lose what write writes to it, as an
// asynchronous replication does when a master dies: it freezes the
// master's replica (SIGSTOP) and cuts its replication link, runs write,
// kills the master (SIGKILL) and resumes the replica, which is then
// promoted without those writes. It returns the killed server and the new
// master's address once every live node sees it as the slot's owner.
func (c *Cluster) LoseWrites(ctx context.Context, slot int, write func() error) (*Server, string, error) {
	ctx, cancel := context.WithTimeout(ctx, failoverTimeout)
	defer cancel()
	owner, err := c.SlotOwner(ctx, slot)
	if err != nil {
		return nil, "", err
	}
	r, err := c.ReplicaOf(ctx, owner)
	if err != nil {
		return nil, "", err
	}
	m := c.node(owner)
	if err := syscall.Kill(r.Pid(), syscall.SIGSTOP); err != nil {
		return nil, "", fmt.Errorf("redistest: SIGSTOP %s: %w", r.Addr, err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			syscall.Kill(r.Pid(), syscall.SIGCONT)
		}
	}
	defer resume()
	// What the replica has read before the cut stays in its socket buffer;
	// nothing written after the cut reaches it.
	mc := redis.NewClient(m.Options())
	err = mc.Do(ctx, "CLIENT", "KILL", "TYPE", "replica").Err()
	mc.Close()
	if err != nil {
		return nil, "", fmt.Errorf("redistest: CLIENT KILL TYPE replica on %s: %w", owner, err)
	}
	if err := write(); err != nil {
		return nil, "", err
	}
	m.Kill()
	resume()
	return m, r.Addr, c.waitLiveOwner(ctx, slot, r.Addr)
}
