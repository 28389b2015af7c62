package redistest

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/redis/go-redis/v9"
)

// SlotOwner returns the address of the master that serves slot, as the
// first running node of the cluster sees it.
func (c *Cluster) SlotOwner(ctx context.Context, slot int) (string, error) {
	for _, s := range c.Nodes {
		if s.running() {
			return c.ownerSeenBy(ctx, s, slot)
		}
	}
	return "", fmt.Errorf("redistest: no node of the cluster runs")
}

func (c *Cluster) ownerSeenBy(ctx context.Context, s *Server, slot int) (string, error) {
	rdb := redis.NewClient(s.Options())
	defer rdb.Close()
	ranges, err := rdb.ClusterSlots(ctx).Result()
	if err != nil {
		return "", fmt.Errorf("redistest: CLUSTER SLOTS on %s: %w", s.Addr, err)
	}
	for _, r := range ranges {
		if int(r.Start) <= slot && slot <= int(r.End) && len(r.Nodes) > 0 {
			return r.Nodes[0].Addr, nil
		}
	}
	return "", fmt.Errorf("redistest: %s serves slot %d from no master", s.Addr, slot)
}

// MoveSlot moves slot, with its keys, to the master at addr to, as a
// resharding does: the target imports it, the source migrates it, its keys
// are MIGRATEd, and every master is told the new owner (CLUSTER SETSLOT
// ... NODE), the target first. It returns once every master sees the target
// as the owner. The source drops the slot's shard channels on the way, as
// a real resharding makes it do.
func (c *Cluster) MoveSlot(ctx context.Context, slot int, to string) error {
	from, err := c.SlotOwner(ctx, slot)
	if err != nil {
		return err
	}
	if from == to {
		return nil
	}
	src, dst := c.node(from), c.node(to)
	if src == nil || dst == nil {
		return fmt.Errorf("redistest: move slot %d from %s to %s: not a node of this cluster", slot, from, to)
	}
	srcC, dstC := redis.NewClient(src.Options()), redis.NewClient(dst.Options())
	defer srcC.Close()
	defer dstC.Close()
	srcID, err := srcC.Do(ctx, "CLUSTER", "MYID").Text()
	if err != nil {
		return fmt.Errorf("redistest: CLUSTER MYID on %s: %w", from, err)
	}
	dstID, err := dstC.Do(ctx, "CLUSTER", "MYID").Text()
	if err != nil {
		return fmt.Errorf("redistest: CLUSTER MYID on %s: %w", to, err)
	}
	if err := dstC.Do(ctx, "CLUSTER", "SETSLOT", slot, "IMPORTING", srcID).Err(); err != nil {
		return fmt.Errorf("redistest: SETSLOT %d IMPORTING on %s: %w", slot, to, err)
	}
	if err := srcC.Do(ctx, "CLUSTER", "SETSLOT", slot, "MIGRATING", dstID).Err(); err != nil {
		return fmt.Errorf("redistest: SETSLOT %d MIGRATING on %s: %w", slot, from, err)
	}
	if err := migrateKeys(ctx, srcC, dst, slot); err != nil {
		return err
	}
	// The target first, so that a client redirected by the source finds
	// the slot served there.
	order := []*Server{dst, src}
	for _, s := range c.Nodes {
		if s != dst && s != src {
			order = append(order, s)
		}
	}
	for _, s := range order {
		rdb := redis.NewClient(s.Options())
		err := rdb.Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", dstID).Err()
		rdb.Close()
		if err != nil {
			return fmt.Errorf("redistest: SETSLOT %d NODE on %s: %w", slot, s.Addr, err)
		}
	}
	return c.waitOwner(ctx, slot, to)
}

func (c *Cluster) node(addr string) *Server {
	for _, s := range c.Nodes {
		if s.Addr == addr {
			return s
		}
	}
	return nil
}

// migrateKeys moves every key of slot from src to dst, a batch at a time.
func migrateKeys(ctx context.Context, src *redis.Client, dst *Server, slot int) error {
	host, port, _ := net.SplitHostPort(dst.Addr)
	for {
		keys, err := src.ClusterGetKeysInSlot(ctx, slot, 100).Result()
		if err != nil {
			return fmt.Errorf("redistest: CLUSTER GETKEYSINSLOT %d: %w", slot, err)
		}
		if len(keys) == 0 {
			return nil
		}
		args := []any{"MIGRATE", host, port, "", 0, 5000, "KEYS"}
		for _, k := range keys {
			args = append(args, k)
		}
		if err := src.Do(ctx, args...).Err(); err != nil {
			return fmt.Errorf("redistest: MIGRATE slot %d to %s: %w", slot, dst.Addr, err)
		}
	}
}

// waitOwner waits until every node sees to as the owner of slot.
func (c *Cluster) waitOwner(ctx context.Context, slot int, to string) error {
	for {
		agreed := true
		for _, s := range c.Nodes {
			owner, err := c.ownerSeenBy(ctx, s, slot)
			if err != nil || owner != to {
				agreed = false
				break
			}
		}
		if agreed {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redistest: slot %d not served by %s on every node: %w", slot, to, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
