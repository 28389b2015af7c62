package redistest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// MasterAddr returns the master's address as every sentinel reports it, or
// an error if they do not agree (yet).
func (d *Sentinel) MasterAddr(ctx context.Context) (string, error) {
	var agreed string
	for _, s := range d.Sentinels {
		c := redis.NewSentinelClient(&redis.Options{Addr: s.Addr})
		hp, err := c.GetMasterAddrByName(ctx, SentinelMasterName).Result()
		c.Close()
		if err != nil {
			return "", fmt.Errorf("sentinel %s: %w", s.Addr, err)
		}
		if len(hp) != 2 {
			return "", fmt.Errorf("sentinel %s: master address %q", s.Addr, hp)
		}
		addr := hp[0] + ":" + hp[1]
		if agreed != "" && addr != agreed {
			return "", fmt.Errorf("sentinels disagree: %s and %s", agreed, addr)
		}
		agreed = addr
	}
	return agreed, nil
}

// Master returns the data server the sentinels agree is the master.
func (d *Sentinel) Master(ctx context.Context) (*Server, error) {
	addr, err := d.MasterAddr(ctx)
	if err != nil {
		return nil, err
	}
	return d.server(addr)
}

func (d *Sentinel) server(addr string) (*Server, error) {
	for _, s := range d.Data {
		if s.Addr == addr {
			return s, nil
		}
	}
	return nil, fmt.Errorf("redistest: the sentinels name %s, which is none of the deployment's servers", addr)
}

// FailoverGraceful asks a sentinel to fail over (SENTINEL FAILOVER), as an
// operator does for maintenance: the master is still up and keeps serving
// until the sentinels reconfigure it as a replica. It returns the master
// it replaces; WaitNewMaster tells when the switch is done.
func (d *Sentinel) FailoverGraceful(ctx context.Context) (*Server, error) {
	old, err := d.Master(ctx)
	if err != nil {
		return nil, err
	}
	c := redis.NewSentinelClient(&redis.Options{Addr: d.Sentinels[0].Addr})
	defer c.Close()
	if err := c.Failover(ctx, SentinelMasterName).Err(); err != nil {
		return nil, fmt.Errorf("redistest: SENTINEL FAILOVER: %w", err)
	}
	return old, nil
}

// KillMaster stops the master abruptly (SIGKILL), as a crash would. The
// sentinels fail over once it has been down for a second. It returns the
// killed server (Restart brings it back, empty).
func (d *Sentinel) KillMaster(ctx context.Context) (*Server, error) {
	old, err := d.Master(ctx)
	if err != nil {
		return nil, err
	}
	old.Kill()
	return old, nil
}

// Names the replicas authenticate with while replication is cut: the
// master has no such user, so every resynchronisation fails.
const (
	cutUser     = "redistest-cut"
	cutPassword = "redistest-cut"
)

// CutReplication stops the replicas from receiving the master's writes,
// while the master, the replicas and the sentinels all stay up and the
// sentinels see nothing wrong: each replica is told to authenticate with a
// user the master does not have, and the master drops its replica links.
// What the master writes from then on reaches no replica, the case of a
// replication lag at the moment of a crash. The returned function restores
// the replicas' settings (call it before a failover needs them: a replica
// being reconfigured must be able to sync again).
func (d *Sentinel) CutReplication(ctx context.Context) (restore func(context.Context) error, err error) {
	master, err := d.Master(ctx)
	if err != nil {
		return nil, err
	}
	var replicas []*Server
	for _, s := range d.Data {
		if s != master {
			replicas = append(replicas, s)
		}
	}
	if err := setMasterAuth(ctx, replicas, cutUser, cutPassword); err != nil {
		return nil, err
	}
	c := redis.NewClient(master.Options())
	defer c.Close()
	if err := c.Do(ctx, "CLIENT", "KILL", "TYPE", "replica").Err(); err != nil {
		return nil, fmt.Errorf("redistest: CLIENT KILL TYPE replica: %w", err)
	}
	if err := waitNoReplicas(ctx, c); err != nil {
		return nil, err
	}
	return func(ctx context.Context) error { return setMasterAuth(ctx, replicas, "", "") }, nil
}

func setMasterAuth(ctx context.Context, servers []*Server, user, password string) error {
	for _, s := range servers {
		c := redis.NewClient(s.Options())
		err := c.ConfigSet(ctx, "masteruser", user).Err()
		if err == nil {
			err = c.ConfigSet(ctx, "masterauth", password).Err()
		}
		c.Close()
		if err != nil {
			return fmt.Errorf("redistest: set masterauth on %s: %w", s.Addr, err)
		}
	}
	return nil
}

// waitNoReplicas waits until the master reports no connected replica.
func waitNoReplicas(ctx context.Context, master *redis.Client) error {
	for {
		info, err := master.Info(ctx, "replication").Result()
		if err == nil && strings.Contains(info, "connected_slaves:0") {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redistest: replicas still connected after CLIENT KILL: %w", errors.Join(err, ctx.Err()))
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// WaitNewMaster waits until every sentinel names the same master, other
// than old, and that server reports itself a master. It returns it.
func (d *Sentinel) WaitNewMaster(ctx context.Context, old *Server) (*Server, error) {
	var last error
	for {
		s, err := d.Master(ctx)
		if err == nil && s == old {
			err = fmt.Errorf("the sentinels still name %s", old.Addr)
		}
		if err == nil {
			err = isMaster(ctx, s)
		}
		if err == nil {
			return s, nil
		}
		last = err
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("redistest: no new master: %v (%w); the replicas as a sentinel sees them: %s; its log:\n%s", last, ctx.Err(), d.replicasSeen(), d.Sentinels[0].logTail())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func isMaster(ctx context.Context, s *Server) error {
	c := redis.NewClient(s.Options())
	defer c.Close()
	info, err := c.Info(ctx, "replication").Result()
	if err != nil {
		return err
	}
	if !strings.Contains(info, "role:master") {
		return fmt.Errorf("%s does not report role:master yet", s.Addr)
	}
	return nil
}

// WaitReplicaOf waits until s is a replica of master with its link up
// (after a graceful failover: the old master has been demoted and synced).
func (d *Sentinel) WaitReplicaOf(ctx context.Context, s, master *Server) error {
	want := fmt.Sprintf("master_port:%d", master.Port)
	for {
		c := redis.NewClient(s.Options())
		info, err := c.Info(ctx, "replication").Result()
		c.Close()
		if err == nil && strings.Contains(info, want) && strings.Contains(info, "master_link_status:up") {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redistest: %s not a synced replica of %s: %w", s.Addr, master.Addr, errors.Join(err, ctx.Err()))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// replicasSeen describes the replicas as the first sentinel sees them, for
// an error message.
func (d *Sentinel) replicasSeen() string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	c := redis.NewSentinelClient(&redis.Options{Addr: d.Sentinels[0].Addr})
	defer c.Close()
	replicas, err := c.Replicas(ctx, SentinelMasterName).Result()
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, r := range replicas {
		fmt.Fprintf(&b, "[%s flags=%s link-down-ms=%s info-refresh=%s last-ok-ping-reply=%s priority=%s] ", r["name"], r["flags"], r["master-link-down-time"], r["info-refresh"], r["last-ok-ping-reply"], r["slave-priority"])
	}
	return b.String()
}

// SentinelLog returns the end of the i-th sentinel's log, for a failure
// message.
func (d *Sentinel) SentinelLog(i int) string { return d.Sentinels[i].logTail() }
