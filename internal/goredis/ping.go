package goredis

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/lockgen/lockgen/internal/callerr"
	"github.com/redis/go-redis/v9"
)

// ping is the backend's Caps.Ping: PING on the command connection (to
// every master on a Cluster) and on every Pub/Sub connection.
func (b *goRedisBackend) ping(ctx context.Context) error {
	var err error
	if b.cluster != nil {
		err = b.cluster.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
			if err := c.Ping(ctx).Err(); err != nil {
				return fmt.Errorf("%s: %w", c.Options().Addr, err)
			}
			return nil
		})
	} else {
		err = b.rdb.Ping(ctx).Err()
	}
	if err != nil {
		return fmt.Errorf("lockgen: ping: %w", err)
	}
	subs, err := b.subscribers(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for addr, ns := range subs {
		if err := ns.ping(ctx); err != nil {
			errs = append(errs, fmt.Errorf("lockgen: ping the Pub/Sub connection %s: %w", addr, err))
		}
	}
	return errors.Join(errs...)
}

// subscribers returns the node subscribers in use; off Cluster, the one of
// the server, which it opens if no waiter has.
func (b *goRedisBackend) subscribers(ctx context.Context) (map[string]*nodeSubscriber, error) {
	var node *redis.Client
	if b.cluster == nil {
		var err error
		if node, _, err = b.nodeFor(ctx, ""); err != nil {
			return nil, err
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, callerr.ErrClosed
	}
	if node != nil && b.nodes[""] == nil {
		b.nodes[""] = newNodeSubscriber(node, false, b.slotMoved, func() { b.watchTopology("") })
	}
	out := make(map[string]*nodeSubscriber, len(b.nodes))
	for addr, ns := range b.nodes {
		if addr == "" {
			addr = "to the server"
		}
		out[addr] = ns
	}
	return out, nil
}

var pingSeq atomic.Uint64

// ping sends PING with a payload of its own on the Pub/Sub connection and
// waits until the receive loop reads the PONG that carries it back.
func (ns *nodeSubscriber) ping(ctx context.Context) error {
	token := "lockgen-ping-" + strconv.FormatUint(pingSeq.Add(1), 10)
	pong := make(chan struct{})
	ns.mu.Lock()
	ns.pings[token] = pong
	ns.mu.Unlock()
	defer func() {
		ns.mu.Lock()
		delete(ns.pings, token)
		ns.mu.Unlock()
	}()
	if err := ns.ps.Ping(ctx, token); err != nil {
		return err
	}
	select {
	case <-pong:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("no PONG: %w", ctx.Err())
	}
}

// ponged is called by the receive loop for every PONG.
func (ns *nodeSubscriber) ponged(payload string) {
	ns.mu.Lock()
	pong := ns.pings[payload]
	delete(ns.pings, payload)
	ns.mu.Unlock()
	if pong != nil {
		close(pong)
	}
}
