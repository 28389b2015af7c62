package redistest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// EnableDebugCommand is the argument pair that lets DEBUG SLEEP run on
// Redis 7, which refuses DEBUG from clients unless told otherwise:
// Start(t, redistest.EnableDebugCommand...).
var EnableDebugCommand = []string{"--enable-debug-command", "yes"}

// asleepProbe is how long a PING may take before DebugSleep takes the
// server for asleep. A server that is merely slow answers within it on
// any machine the tests run on; one that runs DEBUG SLEEP never does.
const asleepProbe = 150 * time.Millisecond

// DebugSleep sends DEBUG SLEEP d, which freezes the whole server (every
// client, Pub/Sub included) for d, as a stalled host or a long fork would.
// It returns once the server is seen asleep (a PING sent after the DEBUG
// SLEEP goes unanswered), so that what the caller does next happens during
// the sleep. The channel receives the outcome when the sleep is over. The
// server must run with EnableDebugCommand.
func (s *Server) DebugSleep(d time.Duration) (<-chan error, error) {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, ReadTimeout: d + 10*time.Second, MaxRetries: -1})
	// The client must have a connection before the sleep starts: dialling
	// one (HELLO) would wait behind the sleep itself.
	if err := c.Ping(context.Background()).Err(); err != nil {
		c.Close()
		return nil, fmt.Errorf("redistest: DEBUG SLEEP: %w", err)
	}
	done := make(chan error, 1)
	go func() {
		defer c.Close()
		secs := strconv.FormatFloat(d.Seconds(), 'f', 3, 64)
		done <- c.Do(context.Background(), "DEBUG", "SLEEP", secs).Err()
	}()
	for attempt := 0; attempt < 100; attempt++ {
		answered, err := s.pingWithin(asleepProbe)
		if err != nil {
			return nil, err
		}
		if !answered {
			return done, nil
		}
		select {
		case err := <-done:
			return nil, fmt.Errorf("redistest: DEBUG SLEEP %v ended before the server was seen asleep (%v); is it run with EnableDebugCommand?", d, err)
		default:
		}
	}
	return nil, fmt.Errorf("redistest: the server kept answering PING after DEBUG SLEEP %v", d)
}

// pingWithin reports whether the server answers a PING on a fresh
// connection within d.
func (s *Server) pingWithin(d time.Duration) (bool, error) {
	conn, err := net.DialTimeout("tcp", s.Addr, time.Second)
	if err != nil {
		return false, fmt.Errorf("redistest: probe %s: %w", s.Addr, err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(d))
	if _, err := fmt.Fprint(conn, "PING\r\n"); err != nil {
		return false, fmt.Errorf("redistest: probe %s: %w", s.Addr, err)
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	var ne net.Error
	switch {
	case err == nil && strings.HasPrefix(line, "+PONG"):
		return true, nil
	case errors.As(err, &ne) && ne.Timeout():
		return false, nil
	case err == nil:
		return false, fmt.Errorf("redistest: probe %s: PING answered %q", s.Addr, line)
	}
	return false, fmt.Errorf("redistest: probe %s: %w", s.Addr, err)
}

// PauseWrites sends CLIENT PAUSE d WRITE: for d, the server holds every
// command that may write (scripts and PUBLISH included) and serves the
// others, as it does during a failover. It returns at once.
func (s *Server) PauseWrites(ctx context.Context, d time.Duration) error {
	c := redis.NewClient(s.Options())
	defer c.Close()
	return c.Do(ctx, "CLIENT", "PAUSE", max(d.Milliseconds(), 1), "WRITE").Err()
}

// WaitWritable returns once the server serves a write command again (the
// end of a CLIENT PAUSE), or when ctx is done. It publishes on a channel
// nobody listens to, which writes no key.
func (s *Server) WaitWritable(ctx context.Context) error {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, ReadTimeout: -1, MaxRetries: -1, ContextTimeoutEnabled: true})
	defer c.Close()
	return c.Publish(ctx, "redistest:writable", "").Err()
}
