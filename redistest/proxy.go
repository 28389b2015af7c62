package redistest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Proxy is a loopback TCP proxy in front of a server whose behaviour the
// test switches at run time: point a client at Proxy.Addr instead of the
// server, then SetMode(Blackhole()) to cut it off without closing anything,
// SetMode(Delay(d)) or SetMode(DelayEach(f)) to slow it down, or
// CloseAfterNext to drop its connection right after a request reached the
// server. Every connection of the proxy follows the current mode,
// including those made later.
//
// It is bounded: at most maxProxyConns connections at once (more are
// closed as soon as accepted), and per connection and direction at most
// proxyQueue chunks of proxyChunk bytes read and not yet passed on; beyond
// that it stops reading and TCP pushes back. Close ends every goroutine.
type Proxy struct {
	Addr   string // "127.0.0.1:port", for the client
	target string

	ln   net.Listener
	wg   sync.WaitGroup // every goroutine of the proxy
	done chan struct{}  // closed by Close

	mu      sync.Mutex
	mode    ProxyMode
	changed chan struct{} // closed and replaced at every mode change
	pairs   map[*proxyPair]struct{}
	closed  bool

	refused    int   // client connections closed on arrival
	lastRefuse error // why the latest was
}

// Bounds of a Proxy.
const (
	maxProxyConns = 256
	proxyChunk    = 16 << 10
	proxyQueue    = 16
)

// ProxyMode is what a Proxy does with the bytes it reads.
type ProxyMode struct {
	kind  proxyModeKind
	delay time.Duration
	each  func(toServer bool) time.Duration // DelayEach's

	// CloseAfterNext's state: which request to cut after, and what to
	// close when that request has been answered.
	command []byte
	fired   chan struct{}
}

type proxyModeKind uint8

const (
	modeForward proxyModeKind = iota
	modeBlackhole
	modeDelay
	modeDelayEach
	modeCloseAfter
)

// Forward passes bytes on as they come (the initial mode).
func Forward() ProxyMode { return ProxyMode{kind: modeForward} }

// Blackhole accepts bytes both ways and holds them, never closing anything,
// as a network partition does: neither side hears from the other, and
// neither learns that the connection is gone. Bytes held are passed on
// once the mode changes back (as TCP retransmits after a partition heals),
// in order, unless the proxy is closed first.
//
// Bytes held stand for bytes still in the sender's retransmission queue,
// which the receiver never acknowledged. A client that closes its
// connection gracefully (FIN) leaves them to its kernel, which goes on
// retransmitting them: they are still delivered, then the end. A client
// that resets its connection (a close with SO_LINGER 0: RST) discards
// them: the proxy drops what it holds of that connection, which is never
// delivered, and closes the server side.
func Blackhole() ProxyMode { return ProxyMode{kind: modeBlackhole} }

// Delay passes every chunk of bytes on d after it was read, both ways.
func Delay(d time.Duration) ProxyMode { return ProxyMode{kind: modeDelay, delay: d} }

// DelayEach passes every chunk of bytes on after a delay of its own, which
// f draws as the chunk is read (toServer: a request, else a reply or a
// pushed message): requests and replies of one connection, or messages of
// a subscription, can then be late by different amounts, as on a network
// whose queues come and go. A chunk never overtakes the one read before it
// on its connection and direction (TCP keeps order): it waits for it. f is
// called from the proxy's goroutines, concurrently. Chunks read before the
// mode was set are not delayed by it.
func DelayEach(f func(toServer bool) time.Duration) ProxyMode {
	return ProxyMode{kind: modeDelayEach, each: f}
}

func (m ProxyMode) String() string {
	switch m.kind {
	case modeBlackhole:
		return "blackhole"
	case modeDelay:
		return "delay " + m.delay.String()
	case modeDelayEach:
		return "delay each"
	case modeCloseAfter:
		return fmt.Sprintf("close after %q", m.command)
	}
	return "forward"
}

// StartProxy starts a Proxy in front of target (a server's Addr) and
// closes it when the test ends.
func StartProxy(tb testing.TB, target string) *Proxy {
	tb.Helper()
	p, err := NewProxy(target)
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	tb.Cleanup(p.Close)
	return p
}

// NewProxy starts a Proxy in front of target on a free loopback port. The
// caller must Close it.
func NewProxy(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("proxy listen: %w", err)
	}
	p := &Proxy{
		Addr:    ln.Addr().String(),
		target:  target,
		ln:      ln,
		done:    make(chan struct{}),
		mode:    Forward(),
		changed: make(chan struct{}),
		pairs:   map[*proxyPair]struct{}{},
	}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// SetMode switches every connection, current and future, to m. Bytes held
// by a blackhole or a delay follow the new mode from now on.
func (p *Proxy) SetMode(m ProxyMode) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.setModeLocked(m)
}

func (p *Proxy) setModeLocked(m ProxyMode) {
	p.mode = m
	close(p.changed)
	p.changed = make(chan struct{})
}

// Mode returns the current mode.
func (p *Proxy) Mode() ProxyMode {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mode
}

// CloseAfterNext makes the proxy forward the next request that names
// command, then close that client connection at once, so that the server
// runs the command but the client only sees the connection end (go-redis
// then retries the command on a new connection, unless MaxRetries is -1).
// The proxy then forwards again. A request is one chunk the client wrote:
// go-redis writes a command, or a whole pipeline, at once. command is
// matched as a RESP bulk string, case-insensitively ("EVALSHA", "WAIT");
// "" matches any request.
//
// The returned channel is closed once the server has answered the request
// that was cut (its first reply bytes reached the proxy, so it has run),
// or the server side of that connection ended.
func (p *Proxy) CloseAfterNext(command string) <-chan struct{} {
	m := ProxyMode{kind: modeCloseAfter, fired: make(chan struct{})}
	if command != "" {
		m.command = []byte(fmt.Sprintf("$%d\r\n%s\r\n", len(command), command))
	}
	p.SetMode(m)
	return m.fired
}

// HoldConns holds the bytes of every connection open now, both ways and
// whatever the mode, until deliver is called; connections made later follow
// the mode. It stands for a partition that heals for new connections
// first: a client that reconnects gets through at once, while the next
// retransmission of an old connection may be seconds away (TCP backs off
// exponentially). As under Blackhole, a held connection that its client
// resets drops what it holds.
func (p *Proxy) HoldConns() (deliver func()) {
	frozen := make(chan struct{})
	p.mu.Lock()
	for pp := range p.pairs {
		pp.mu.Lock()
		pp.frozen = frozen
		pp.mu.Unlock()
	}
	p.mu.Unlock()
	var once sync.Once
	return func() { once.Do(func() { close(frozen) }) }
}

// Conns returns the number of client connections the proxy carries now.
func (p *Proxy) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.pairs)
}

// Refused returns how many client connections the proxy closed as soon
// as it accepted them (its dial to the server failed, or it carried
// maxProxyConns already), and why it closed the latest: what a client
// whose new connection ended at once (EOF, a reset) ran into.
func (p *Proxy) Refused() (n int, last error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refused, p.lastRefuse
}

func (p *Proxy) refuse(why error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refuseLocked(why)
}

func (p *Proxy) refuseLocked(why error) {
	p.refused++
	p.lastRefuse = why
}

// Close stops accepting, closes every connection (held bytes are dropped)
// and returns when every goroutine of the proxy has ended. It is
// idempotent.
func (p *Proxy) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		p.wg.Wait()
		return
	}
	p.closed = true
	close(p.done)
	pairs := make([]*proxyPair, 0, len(p.pairs))
	for pp := range p.pairs {
		pairs = append(pairs, pp)
	}
	p.mu.Unlock()
	p.ln.Close()
	for _, pp := range pairs {
		pp.teardown()
	}
	p.wg.Wait()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		server, err := net.DialTimeout("tcp", p.target, 2*time.Second)
		if err != nil {
			// Counted before the close: a client that sees it finds it.
			p.refuse(fmt.Errorf("dial the server: %w", err))
			client.Close() // the server is down: the client sees a reset
			continue
		}
		pp := &proxyPair{p: p, client: client, server: server, done: make(chan struct{})}
		p.mu.Lock()
		if p.closed || len(p.pairs) >= maxProxyConns {
			if !p.closed {
				p.refuseLocked(fmt.Errorf("%d connections open, the most a proxy carries", maxProxyConns))
			}
			p.mu.Unlock()
			client.Close()
			server.Close()
			continue
		}
		p.pairs[pp] = struct{}{}
		p.wg.Add(4)
		p.mu.Unlock()
		toServer := make(chan proxyChunkRead, proxyQueue)
		toClient := make(chan proxyChunkRead, proxyQueue)
		go pp.read(client, toServer)
		go pp.write(toServer, server, true)
		go pp.read(server, toClient)
		go pp.write(toClient, client, false)
	}
}

// current returns the mode and the channel closed at its next change.
func (p *Proxy) current() (ProxyMode, chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mode, p.changed
}

// fire claims a CloseAfterNext mode for one request: true if m is still
// the current mode (no other connection fired it first), which then
// becomes Forward.
func (p *Proxy) fire(m ProxyMode) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mode.kind != modeCloseAfter || p.mode.fired != m.fired {
		return false
	}
	p.setModeLocked(Forward())
	return true
}

// proxyPair is one client connection and its connection to the server,
// with a reading and a writing goroutine per direction.
type proxyPair struct {
	p              *Proxy
	client, server net.Conn
	done           chan struct{} // closed by teardown
	once           sync.Once

	mu     sync.Mutex
	cut    bool          // a CloseAfterNext closed the client: pass nothing to it
	fired  chan struct{} // that mode's channel, until the server has answered
	frozen chan struct{} // set by HoldConns: nothing passes until it is closed
}

// proxyChunkRead is bytes read from one side, or the end of that side
// (data nil), with the time they were read and the delay DelayEach drew
// for them then.
type proxyChunkRead struct {
	data  []byte
	at    time.Time
	delay time.Duration
}

// read reads from conn into out until conn ends, then queues the end.
func (pp *proxyPair) read(conn net.Conn, out chan<- proxyChunkRead) {
	defer pp.p.wg.Done()
	for {
		buf := make([]byte, proxyChunk)
		n, err := conn.Read(buf)
		if n > 0 {
			if conn == pp.server && pp.serverAnswered() {
				return
			}
			c := proxyChunkRead{data: buf[:n], at: time.Now()}
			if m, _ := pp.p.current(); m.kind == modeDelayEach {
				c.delay = m.each(conn == pp.client)
			}
			select {
			case out <- c:
			case <-pp.done:
				return
			}
		}
		if err != nil {
			if conn == pp.client && errors.Is(err, syscall.ECONNRESET) {
				pp.teardown() // see Blackhole: a reset drops what is held
				return
			}
			if conn == pp.server {
				pp.serverAnswered()
			}
			select {
			case out <- proxyChunkRead{at: time.Now()}:
			case <-pp.done:
			}
			return
		}
	}
}

// write passes the chunks of in on to conn as the mode says. toServer says
// that the chunks are requests (CloseAfterNext applies to them).
func (pp *proxyPair) write(in <-chan proxyChunkRead, conn net.Conn, toServer bool) {
	defer pp.p.wg.Done()
	for {
		var c proxyChunkRead
		select {
		case c = <-in:
		case <-pp.done:
			return
		}
		if !pp.hold(c) {
			return
		}
		if c.data == nil {
			pp.teardown() // one side ended: end the other
			return
		}
		cut := toServer && pp.claimCut(c.data)
		if _, err := conn.Write(c.data); err != nil {
			pp.teardown()
			return
		}
		if cut {
			// The client hears nothing more; the server side stays open
			// until the server has answered (serverAnswered), so that the
			// request runs before anything is closed there.
			pp.client.Close()
			return
		}
	}
}

// hold waits until the mode lets c through: not while blackholed, not
// before its delay is over. It returns false if the pair ends meanwhile.
func (pp *proxyPair) hold(c proxyChunkRead) bool {
	for {
		pp.mu.Lock()
		frozen := pp.frozen
		pp.mu.Unlock()
		if frozen != nil {
			select {
			case <-frozen:
			case <-pp.done:
				return false
			}
		}
		m, changed := pp.p.current()
		var due <-chan time.Time
		switch m.kind {
		case modeForward, modeCloseAfter:
			return true
		case modeDelay, modeDelayEach:
			d := m.delay
			if m.kind == modeDelayEach {
				d = c.delay
			}
			wait := time.Until(c.at.Add(d))
			if wait <= 0 {
				return true
			}
			timer := time.NewTimer(wait)
			defer timer.Stop() // at most one per mode change
			due = timer.C
		}
		select {
		case <-changed:
		case <-due:
			return true
		case <-pp.done:
			return false
		}
	}
}

// claimCut reports whether request is the one a CloseAfterNext mode waits
// for, and if so claims the mode for this pair (no other pair fires it)
// before the request is written, so that no reply can reach the client.
func (pp *proxyPair) claimCut(request []byte) bool {
	m, _ := pp.p.current()
	if m.kind != modeCloseAfter || m.command != nil && !bytes.Contains(bytes.ToLower(request), bytes.ToLower(m.command)) {
		return false
	}
	if !pp.p.fire(m) {
		return false
	}
	pp.mu.Lock()
	pp.cut, pp.fired = true, m.fired
	pp.mu.Unlock()
	return true
}

// serverAnswered ends a pair whose client was cut once the server has
// answered (or closed): the request ran, and the reply has nowhere to go.
// It reports whether the pair was cut.
func (pp *proxyPair) serverAnswered() bool {
	pp.mu.Lock()
	cut := pp.cut
	pp.mu.Unlock()
	if cut {
		pp.teardown()
	}
	return cut
}

// teardown closes both connections and stops the pair's goroutines.
func (pp *proxyPair) teardown() {
	pp.once.Do(func() {
		close(pp.done)
		pp.client.Close()
		pp.server.Close()
		pp.p.mu.Lock()
		delete(pp.p.pairs, pp)
		pp.p.mu.Unlock()
		pp.mu.Lock()
		fired := pp.fired
		pp.fired = nil
		pp.mu.Unlock()
		if fired != nil {
			close(fired)
		}
	})
}
