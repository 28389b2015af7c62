package redistest

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// AddUser creates the ACL user name (or resets it: rules replace whatever
// it had) with password and rules in ACL SETUSER syntax ("~lockgen:*",
// "&lockgen:*", "-@all", "+evalsha", ...), and returns options for a
// client that logs in as it. A rule the server does not know is an error.
func (s *Server) AddUser(ctx context.Context, name, password string, rules ...string) (*redis.Options, error) {
	if err := s.setUser(ctx, name, password, rules); err != nil {
		return nil, err
	}
	o := s.Options()
	o.Username, o.Password = name, password
	return o, nil
}

// AddUser does the same on every node of the cluster.
func (c *Cluster) AddUser(ctx context.Context, name, password string, rules ...string) (*redis.ClusterOptions, error) {
	for _, n := range c.Nodes {
		if err := n.setUser(ctx, name, password, rules); err != nil {
			return nil, err
		}
	}
	o := c.Options()
	o.Username, o.Password = name, password
	return o, nil
}

func (s *Server) setUser(ctx context.Context, name, password string, rules []string) error {
	c := redis.NewClient(s.Options())
	defer c.Close()
	args := []any{"ACL", "SETUSER", name, "reset", "on", ">" + password}
	for _, r := range rules {
		args = append(args, r)
	}
	if err := c.Do(ctx, args...).Err(); err != nil {
		return fmt.Errorf("redistest: ACL SETUSER %s on %s: %w", name, s.Addr, err)
	}
	return nil
}
