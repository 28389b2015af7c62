package goredis

import (
	"context"
	"net"

	"github.com/redis/go-redis/v9"
)

// A call the runtime gave up on (its wait ended without a reply) goes on
// until go-redis's own timeout, and go-redis then closes its connection.
// With an ordinary close, the kernel keeps what the connection sent and the
// server never acknowledged (a partition: the bytes sit in the TCP
// retransmission queue) and goes on retransmitting it after the close;
// when the partition heals, the abandoned acquire runs, possibly after the
// clean-up (internal/cleanup) has already given the holder id's lock back, and
// the lock then stays with a holder id that nobody renews or releases for
// a whole lease.
//
// So every connection the backend's client dials closes with a reset
// (SO_LINGER 0): the kernel discards whatever of it is still unsent or
// unacknowledged and sends RST. When go-redis returns the error of such a
// call, its connection is closed already (go-redis removes a connection
// that failed before it returns), so nothing of the call can reach Redis
// after the clean-up's first release is sent, except bytes the server's
// kernel had acknowledged: those wait in Redis's input buffer, and Redis
// reads them at its next pass, which the clean-up's second release
// (confirm) covers. A reset is lost in a partition, but so is everything
// else: the server then never hears of the connection again, or its RST
// answers the server's next segment.
//
// An idle connection that go-redis closes (idle timeout, Close) has nothing
// unsent; its reset only makes the server see "reset" rather than "closed".
// A TCP proxy between the client and Redis that acknowledges bytes and
// forwards them later is beyond this: what it holds can still run late
// (docs/reliability.md).

// resetOnClose is a go-redis hook that makes the connections the client
// dials close with a reset.
type resetOnClose struct{}

func (resetOnClose) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := next(ctx, network, addr)
		if err == nil {
			setResetOnClose(conn)
		}
		return conn, err
	}
}

func (resetOnClose) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (resetOnClose) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// setResetOnClose sets SO_LINGER 0 on conn's TCP connection, found under
// the wrappers that say what they wrap (a *tls.Conn's NetConn). A Unix
// socket has no retransmission queue: what was written is in the server's
// socket buffer already.
func setResetOnClose(conn net.Conn) {
	for range 4 { // a few layers of wrapping at most
		switch c := conn.(type) {
		case interface{ SetLinger(sec int) error }:
			_ = c.SetLinger(0)
			return
		case interface{ NetConn() net.Conn }:
			conn = c.NetConn()
		default:
			return
		}
	}
}

// addResetOnClose adds the hook to rdb, or to every node client a Cluster
// client makes from now on.
func addResetOnClose(rdb redis.UniversalClient) {
	switch c := rdb.(type) {
	case *redis.Client:
		c.AddHook(resetOnClose{})
	case *redis.ClusterClient:
		c.OnNewNode(func(node *redis.Client) { node.AddHook(resetOnClose{}) })
	}
}
