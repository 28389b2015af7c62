package redistest_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockgen/lockgen/redistest"
	"github.com/redis/go-redis/v9"
)

// rawConn is a RESP connection without a client library, so that a test
// sees exactly what the proxy does to the bytes.
type rawConn struct {
	net.Conn
	r *bufio.Reader
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{Conn: c, r: bufio.NewReader(c)}
}

func (c *rawConn) send(t *testing.T, args ...string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		b.WriteString("$" + strconv.Itoa(len(a)) + "\r\n" + a + "\r\n")
	}
	if _, err := io.WriteString(c, b.String()); err != nil {
		t.Fatal(err)
	}
}

// line reads one reply line within d.
func (c *rawConn) line(d time.Duration) (string, error) {
	c.SetReadDeadline(time.Now().Add(d))
	s, err := c.r.ReadString('\n')
	return strings.TrimRight(s, "\r\n"), err
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func TestProxyForwards(t *testing.T) {
	srv := redistest.Start(t)
	p := redistest.StartProxy(t, srv.Addr)
	rdb := redis.NewClient(&redis.Options{Addr: p.Addr})
	defer rdb.Close()
	ctx := context.Background()
	if err := rdb.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if got, err := srv.Client(t).Get(ctx, "k").Result(); err != nil || got != "v" {
		t.Fatalf("GET k on the server = %q, %v; want the value set through the proxy", got, err)
	}
}

// A proxy whose server cannot be reached closes each client connection on
// arrival, and says so.
func TestProxyRefusedSaysWhy(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // a free port nobody listens on: every dial is refused
	p := redistest.StartProxy(t, addr)
	if n, last := p.Refused(); n != 0 || last != nil {
		t.Fatalf("Refused() = %d, %v before any connection; want 0, nil", n, last)
	}
	for i := 1; i <= 2; i++ {
		c := dialRaw(t, p.Addr)
		if _, err := c.line(5 * time.Second); err == nil || isTimeout(err) {
			t.Fatalf("connection %d: read = %v; want the connection closed", i, err)
		}
		n, last := p.Refused()
		if n != i || last == nil || !strings.Contains(last.Error(), "dial the server") {
			t.Fatalf("Refused() = %d, %v after %d connections; want %d and the dial's error", n, last, i, i)
		}
	}
}

// A blackhole neither answers nor closes; the bytes it held arrive once the
// proxy forwards again.
func TestProxyBlackholeHoldsBytesAndNeverCloses(t *testing.T) {
	srv := redistest.Start(t)
	p := redistest.StartProxy(t, srv.Addr)
	c := dialRaw(t, p.Addr)
	c.send(t, "PING")
	if l, err := c.line(5 * time.Second); err != nil || l != "+PONG" {
		t.Fatalf("PING through the forwarding proxy: %q, %v", l, err)
	}

	gone := dialRaw(t, p.Addr)
	waitConns(t, p, 2)
	direct := srv.Client(t)
	before := serverClients(t, direct)

	p.SetMode(redistest.Blackhole())
	c.send(t, "SET", "held", "1")
	// A client that gives up and closes is not seen by the server either.
	gone.Close()
	if l, err := c.line(300 * time.Millisecond); !isTimeout(err) {
		t.Fatalf("blackholed SET: got %q, %v; want no reply and no close (a read timeout)", l, err)
	}
	// The request is held, not delivered: the server has no key yet.
	if n, err := direct.Exists(context.Background(), "held").Result(); err != nil || n != 0 {
		t.Fatalf("EXISTS held = %d, %v during the blackhole; want 0", n, err)
	}
	if after := serverClients(t, direct); after != before {
		t.Fatalf("server clients %d -> %d after a client closed behind the blackhole; want the close held", before, after)
	}

	p.SetMode(redistest.Forward())
	if l, err := c.line(5 * time.Second); err != nil || l != "+OK" {
		t.Fatalf("held SET after the blackhole ended: %q, %v; want +OK", l, err)
	}
}

// waitConns waits until the proxy has connected n clients to the server.
func waitConns(t *testing.T, p *redistest.Proxy, n int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); p.Conns() != n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("proxy carries %d connections after 5s; want %d", p.Conns(), n)
		}
	}
}

// serverClients counts the server's client connections (CLIENT LIST).
func serverClients(t *testing.T, rdb *redis.Client) int {
	t.Helper()
	list, err := rdb.ClientList(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(list, "\n")
}

func TestProxyDelaysBothWays(t *testing.T) {
	const d = 150 * time.Millisecond
	srv := redistest.Start(t)
	p := redistest.StartProxy(t, srv.Addr)
	c := dialRaw(t, p.Addr)
	p.SetMode(redistest.Delay(d))
	start := time.Now()
	c.send(t, "PING")
	l, err := c.line(10 * time.Second)
	took := time.Since(start)
	if err != nil || l != "+PONG" {
		t.Fatalf("delayed PING: %q, %v", l, err)
	}
	t.Logf("PING round trip with a %v delay each way: %v", d, took)
	if took < 2*d {
		t.Fatalf("PING answered after %v; want at least %v (the delay both ways)", took, 2*d)
	}
	p.SetMode(redistest.Forward())
	start = time.Now()
	c.send(t, "PING")
	if _, err := c.line(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took >= d {
		t.Fatalf("PING after switching back to forward took %v; want no delay", took)
	}
}

// CloseAfterNext lets the request run on the server and closes the client
// side before any reply, once; then it forwards again.
func TestProxyCloseAfterNextRunsTheRequestAndDropsTheReply(t *testing.T) {
	srv := redistest.Start(t)
	p := redistest.StartProxy(t, srv.Addr)
	c := dialRaw(t, p.Addr)
	c.send(t, "PING") // not the command it waits for
	if l, err := c.line(5 * time.Second); err != nil || l != "+PONG" {
		t.Fatalf("PING: %q, %v", l, err)
	}
	fired := p.CloseAfterNext("INCR")
	c.send(t, "INCR", "n")
	if l, err := c.line(5 * time.Second); err != io.EOF {
		t.Fatalf("INCR through CloseAfterNext: got %q, %v; want the connection closed (EOF) and no reply", l, err)
	}
	select {
	case <-fired:
	case <-time.After(5 * time.Second):
		t.Fatal("CloseAfterNext did not report the server's answer within 5s")
	}
	ctx := context.Background()
	if n, err := srv.Client(t).Get(ctx, "n").Int(); err != nil || n != 1 {
		t.Fatalf("n = %d, %v on the server; want 1: the cut request ran", n, err)
	}

	// go-redis retries a command whose connection dropped: it runs twice.
	fired = p.CloseAfterNext("incr")
	rdb := redis.NewClient(&redis.Options{Addr: p.Addr})
	defer rdb.Close()
	n, err := rdb.Incr(ctx, "n").Result()
	if err != nil {
		t.Fatalf("INCR with retries through CloseAfterNext: %v", err)
	}
	<-fired
	if n != 3 {
		t.Fatalf("INCR returned %d; want 3 (the cut attempt and go-redis's retry both ran)", n)
	}
	if got := p.Mode().String(); got != "forward" {
		t.Fatalf("mode after firing = %s; want forward", got)
	}
}

// Close ends every goroutine of the proxy, even with bytes held in a
// blackhole and connections still open on both sides.
func TestProxyCloseEndsEveryGoroutine(t *testing.T) {
	srv := redistest.Start(t)
	base := goruntime.NumGoroutine()
	p, err := redistest.NewProxy(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	var conns []*rawConn
	for range 5 {
		c := dialRaw(t, p.Addr)
		c.send(t, "PING")
		if _, err := c.line(5 * time.Second); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	p.SetMode(redistest.Blackhole())
	for _, c := range conns {
		c.send(t, "SET", "k", strings.Repeat("x", 100<<10)) // more than a chunk
	}
	waitConns(t, p, 5)
	start := time.Now()
	p.Close()
	t.Logf("Close with 5 blackholed connections took %v", time.Since(start))
	for _, c := range conns {
		if _, err := c.line(5 * time.Second); err == nil || isTimeout(err) {
			t.Fatalf("client read after proxy Close: %v; want the connection closed", err)
		}
	}
	// Close waited for every goroutine to finish; give them the moment
	// they need to exit after that.
	n := goruntime.NumGoroutine()
	for deadline := time.Now().Add(time.Second); n > base && time.Now().Before(deadline); n = goruntime.NumGoroutine() {
		time.Sleep(time.Millisecond)
	}
	if n > base {
		t.Fatalf("%d goroutines after Close, %d before the proxy started", n, base)
	}
}

// DelayEach delays each chunk by what its function drew for it, requests
// and replies apart, and a chunk drawn a short delay waits for the one
// before it on its connection rather than overtaking it.
func TestProxyDelayEachDrawsPerChunkAndKeepsOrder(t *testing.T) {
	const d = 200 * time.Millisecond
	srv := redistest.Start(t)
	p := redistest.StartProxy(t, srv.Addr)
	c := dialRaw(t, p.Addr)
	var mu sync.Mutex
	requests := []time.Duration{d, 0} // drawn in turn, then 0
	p.SetMode(redistest.DelayEach(func(toServer bool) time.Duration {
		mu.Lock()
		defer mu.Unlock()
		if !toServer || len(requests) == 0 {
			return 0
		}
		next := requests[0]
		requests = requests[1:]
		return next
	}))
	start := time.Now()
	c.send(t, "SET", "k", "first")
	time.Sleep(20 * time.Millisecond) // a chunk of its own
	c.send(t, "SET", "k", "second")
	for range 2 {
		if l, err := c.line(10 * time.Second); err != nil || l != "+OK" {
			t.Fatalf("delayed SET: %q, %v", l, err)
		}
	}
	if took := time.Since(start); took < d {
		t.Fatalf("replies after %v; want at least the first request's %v", took, d)
	}
	if v, err := srv.Client(t).Get(context.Background(), "k").Result(); err != nil || v != "second" {
		t.Fatalf("k = %q, %v; want second (the undelayed request overtook the delayed one)", v, err)
	}
	start = time.Now()
	c.send(t, "PING")
	if l, err := c.line(10 * time.Second); err != nil || l != "+PONG" {
		t.Fatalf("PING: %q, %v", l, err)
	}
	if took := time.Since(start); took >= d {
		t.Fatalf("PING drawn no delay took %v", took)
	}
}
