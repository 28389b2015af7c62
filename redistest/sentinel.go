package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// SentinelMasterName is the name the sentinels monitor the master under,
// for redis.FailoverOptions.MasterName.
const SentinelMasterName = "redistest"

// Timings of a Sentinel deployment: short, so that a test's failover takes
// a few seconds, not the minutes of Redis's defaults. The failover timeout
// (how long a promotion or a reconfiguration may take before the sentinels
// give up on it) leaves room for a busy machine; the sentinels start no
// failover within twice that time of the previous one.
const (
	sentinelDownAfter       = time.Second
	sentinelFailoverTimeout = 5 * time.Second
	sentinelReadyTimeout    = 30 * time.Second
)

// Sentinel is a Sentinel deployment: one master, two replicas of it and
// three sentinels (quorum 2) that fail over to a replica when the master is
// down for a second. Data holds the three data servers; which one is the
// master changes with each failover (Master asks the sentinels).
type Sentinel struct {
	Data      []*Server
	Sentinels []*Server
	Addrs     []string // the sentinels' addresses, for FailoverOptions
}

// StartSentinel starts a Sentinel deployment and stops it when the test
// ends. dataArgs are passed to the three data servers (e.g.
// "--min-replicas-to-write", "1").
func StartSentinel(tb testing.TB, dataArgs ...string) *Sentinel {
	tb.Helper()
	d, err := LaunchSentinel(dataArgs...)
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	tb.Cleanup(d.Close)
	return d
}

// LaunchSentinel starts the master, its replicas and the sentinels, and
// waits until every sentinel knows both replicas and the other sentinels,
// so that a failover can start at once. The caller must Close it.
func LaunchSentinel(dataArgs ...string) (*Sentinel, error) {
	d := &Sentinel{}
	// A replica's first sync would wait 5 s (Redis's default) for others
	// to share the same RDB transfer.
	dataArgs = append([]string{"--repl-diskless-sync-delay", "0"}, dataArgs...)
	master, err := Launch(dataArgs...)
	if err != nil {
		return nil, err
	}
	d.Data = append(d.Data, master)
	for i := 0; i < 2; i++ {
		args := append([]string{"--replicaof", "127.0.0.1", strconv.Itoa(master.Port)}, dataArgs...)
		r, err := Launch(args...)
		if err != nil {
			d.Close()
			return nil, err
		}
		d.Data = append(d.Data, r)
	}
	for i := 0; i < 3; i++ {
		s, err := launchSentinel(master.Port)
		if err != nil {
			d.Close()
			return nil, err
		}
		d.Sentinels = append(d.Sentinels, s)
		d.Addrs = append(d.Addrs, s.Addr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), sentinelReadyTimeout)
	defer cancel()
	if err := d.waitReady(ctx); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// launchSentinel starts one sentinel monitoring the master on masterPort.
// A sentinel rewrites its configuration file, so it gets one of its own.
func launchSentinel(masterPort int) (*Server, error) {
	bin, err := LookServer()
	if err != nil {
		return nil, err
	}
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		ports, err := freePort(false)
		if err != nil {
			return nil, err
		}
		s, err := startSentinelAt(bin, ports, masterPort)
		if err == nil {
			return s, nil
		}
		ports.release()
		lastErr = err
	}
	return nil, lastErr
}

func startSentinelAt(bin string, ports *portReservation, masterPort int) (*Server, error) {
	port := ports.port
	dir, err := os.MkdirTemp("", "redistest-sentinel-")
	if err != nil {
		return nil, err
	}
	ms := func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
	conf := strings.Join([]string{
		"port " + strconv.Itoa(port),
		"bind 127.0.0.1",
		"daemonize no",
		"dir " + dir,
		"logfile " + filepath.Join(dir, "redis.log"),
		"sentinel resolve-hostnames no",
		fmt.Sprintf("sentinel monitor %s 127.0.0.1 %d 2", SentinelMasterName, masterPort),
		fmt.Sprintf("sentinel down-after-milliseconds %s %s", SentinelMasterName, ms(sentinelDownAfter)),
		fmt.Sprintf("sentinel failover-timeout %s %s", SentinelMasterName, ms(sentinelFailoverTimeout)),
		fmt.Sprintf("sentinel parallel-syncs %s 2", SentinelMasterName),
	}, "\n") + "\n"
	path := filepath.Join(dir, "sentinel.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Port: port, Dir: dir, bin: bin, args: []string{path, "--sentinel"}, ports: ports}
	p, err := s.run()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s.proc = p
	if err := s.waitReady(p); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// waitReady waits until every sentinel sees two replicas and two other
// sentinels, and the replicas' links to the master are up.
func (d *Sentinel) waitReady(ctx context.Context) error {
	for {
		err := d.ready(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redistest: sentinel deployment not ready within %v: %v", sentinelReadyTimeout, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (d *Sentinel) ready(ctx context.Context) error {
	for _, s := range d.Sentinels {
		c := redis.NewSentinelClient(&redis.Options{Addr: s.Addr})
		m, err := c.Master(ctx, SentinelMasterName).Result()
		c.Close()
		if err != nil {
			return err
		}
		if m["num-slaves"] != "2" || m["num-other-sentinels"] != "2" {
			return fmt.Errorf("sentinel %s sees %s replicas and %s other sentinels", s.Addr, m["num-slaves"], m["num-other-sentinels"])
		}
	}
	for _, s := range d.Data[1:] {
		if err := replicaLinkUp(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// replicaLinkUp reports an error unless s is a replica whose link to its
// master is up.
func replicaLinkUp(ctx context.Context, s *Server) error {
	c := redis.NewClient(s.Options())
	defer c.Close()
	info, err := c.Info(ctx, "replication").Result()
	if err != nil {
		return err
	}
	if !strings.Contains(info, "role:slave") || !strings.Contains(info, "master_link_status:up") {
		return fmt.Errorf("replica %s: link to its master not up", s.Addr)
	}
	return nil
}

// FailoverOptions returns go-redis options for a client of the deployment's
// master, found through the sentinels.
func (d *Sentinel) FailoverOptions() *redis.FailoverOptions {
	return &redis.FailoverOptions{MasterName: SentinelMasterName, SentinelAddrs: append([]string(nil), d.Addrs...)}
}

// FailoverClient returns redis.NewFailoverClient(d.FailoverOptions()),
// closed when the test ends.
func (d *Sentinel) FailoverClient(tb testing.TB) *redis.Client {
	tb.Helper()
	c := redis.NewFailoverClient(d.FailoverOptions())
	tb.Cleanup(func() { c.Close() })
	return c
}

// Close stops the sentinels and the data servers.
func (d *Sentinel) Close() {
	for _, s := range d.Sentinels {
		s.Close()
	}
	for _, s := range d.Data {
		s.Close()
	}
}
