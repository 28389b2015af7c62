package redistest

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// clusterReadyTimeout bounds how long the nodes may take to agree that all
// slots are served.
const clusterReadyTimeout = 30 * time.Second

// Cluster is a Redis Cluster of masters only, every slot assigned.
type Cluster struct {
	Addrs []string
	Nodes []*Server
}

// StartCluster starts a cluster of n masters (n >= 3, as redis-cli
// requires) and stops it when the test ends.
func StartCluster(tb testing.TB, masters int) *Cluster {
	tb.Helper()
	c, err := LaunchCluster(masters)
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	tb.Cleanup(c.Close)
	return c
}

// LaunchCluster starts n cluster-enabled servers, joins them with
// `redis-cli --cluster create`, and waits until every node reports
// cluster_state:ok. The caller must Close it.
func LaunchCluster(masters int) (*Cluster, error) {
	if masters < 3 {
		return nil, fmt.Errorf("redistest: a cluster needs at least 3 masters, got %d", masters)
	}
	bins, err := LookBinaries()
	if err != nil {
		return nil, err
	}
	c := &Cluster{}
	for i := 0; i < masters; i++ {
		s, err := launch(true, nil)
		if err != nil {
			c.Close()
			return nil, err
		}
		c.Nodes = append(c.Nodes, s)
		c.Addrs = append(c.Addrs, s.Addr)
	}
	args := append([]string{"--cluster", "create"}, c.Addrs...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	ctx, cancel := context.WithTimeout(context.Background(), clusterReadyTimeout)
	defer cancel()
	if out, err := exec.CommandContext(ctx, bins.CLI, args...).CombinedOutput(); err != nil {
		c.Close()
		return nil, fmt.Errorf("%s --cluster create: %v\n%s", bins.CLI, err, out)
	}
	if err := c.waitReady(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) waitReady(ctx context.Context) error {
	for {
		ready := true
		for _, s := range c.Nodes {
			rdb := redis.NewClient(s.Options())
			info, err := rdb.ClusterInfo(ctx).Result()
			rdb.Close()
			if err != nil || !strings.Contains(info, "cluster_state:ok") {
				ready = false
				break
			}
		}
		if ready {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redistest: cluster not ready within %v", clusterReadyTimeout)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Client returns a cluster client, closed when the test ends.
func (c *Cluster) Client(tb testing.TB) *redis.ClusterClient {
	tb.Helper()
	rdb := redis.NewClusterClient(c.Options())
	tb.Cleanup(func() { rdb.Close() })
	return rdb
}

// Options returns go-redis cluster options for the cluster.
func (c *Cluster) Options() *redis.ClusterOptions {
	return &redis.ClusterOptions{Addrs: append([]string(nil), c.Addrs...)}
}

// Close stops every node.
func (c *Cluster) Close() {
	for _, s := range c.Nodes {
		s.Close()
	}
}
