package goredis

import (
	"context"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/lockgen/lockgen/internal/callerr"
	"github.com/redis/go-redis/v9"
)

// serverWatch tells the backend's watchers (Caps.WatchMasters) when a
// *redis.Client's new connections reach another server than before: a
// Sentinel failover client dialling the master it was switched to, or a
// server that restarted at the same address (without persistence, every
// lock it had is gone). A server is known by its run_id, which INFO
// reports and every start of redis-server draws anew. It is checked after
// a dial, in the background, so that a dial costs nothing more; dials
// while a check runs make it check once more when it is done.
//
// On a change, every held lock is verified at once, and the backend's
// Pub/Sub connection, which may still be to the old server (go-redis's
// failover client closes only the pooled connections), is dropped, its
// channels ended (PayloadUnsubscribed), so that the waiters subscribe
// again on the new master.
type serverWatch struct {
	b    *goRedisBackend
	rdb  *redis.Client
	stop chan struct{} // closed by the backend's Close: a check pausing between tries ends
	// changed is called when the run_id changed (sure), or when a check
	// could not tell (see changedTo): b.serverChanged, or a Cluster
	// node's (nodewatch.go).
	changed func(sure bool)

	mu       sync.Mutex
	runID    string // of the server last seen; "" before the first check
	checking bool
	again    bool // a dial happened during the check
	// unsure: a check met a server it could not read and ended without a
	// run_id, so whatever server the next check reads may be another.
	unsure bool
}

// serverCheckTimeout bounds one INFO of a server check.
const serverCheckTimeout = 5 * time.Second

// serverCheckPauses are the pauses between the INFOs of a check while they
// fail for a reason that passes (isTransient: a refused or lost
// connection, LOADING; a refusal such as NOPERM is final). After dials
// were refused, go-redis fails calls at once, with the last dial error,
// until its own probe, once a second, reaches the server again, and that
// probe's dial may be the very one that started the check: a check that
// gave up then would leave a restarted server unnoticed until the next
// renewal. About three seconds of tries cover it.
var serverCheckPauses = [...]time.Duration{
	50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond,
	400 * time.Millisecond, 800 * time.Millisecond, 1600 * time.Millisecond,
}

func (w *serverWatch) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := next(ctx, network, addr)
		if err == nil {
			w.dialed()
		}
		return conn, err
	}
}

func (w *serverWatch) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (w *serverWatch) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// useClient makes the checks read the run_id through c: on a Cluster,
// the node client go-redis made last for the address.
func (w *serverWatch) useClient(c *redis.Client) {
	w.mu.Lock()
	w.rdb = c
	w.mu.Unlock()
}

// dialed starts a check, or asks the one running for another.
func (w *serverWatch) dialed() {
	if w.b.closing() {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.checking {
		w.again = true
		return
	}
	w.checking = true
	go w.check()
}

// check reads the server's run_id until no dial happened meanwhile, and
// reports a change to the backend.
func (w *serverWatch) check() {
	for {
		id, troubled := w.readRunIDPatiently()
		w.mu.Lock()
		changed, sure := w.changedTo(id, troubled)
		if id != "" {
			w.runID = id
		}
		again := w.again
		w.again = false
		w.checking = again
		w.mu.Unlock()
		if changed && !w.b.closing() {
			w.changed(sure)
		}
		if !again {
			return
		}
	}
}

// changedTo reports whether a check that read id ("" if it could not;
// troubled if an INFO of it failed for a reason that passes, such as a
// server that was down) must be taken for a change of server, and whether
// that is sure (two run_ids differ); w.mu is held. A check that met a
// server it could not read cannot tell whether the server behind the
// connection is still the one it knew: one killed and restarted while the
// first check after the Locker's start was under way, or during a check
// that gave up, has lost its locks unseen. Then the held locks are
// verified, as on a change: one call per lock, and nothing that is still
// there is lost. (Without INFO in the ACL nothing is ever read, nor
// troubled: such a Locker finds lost locks at their renewals.)
func (w *serverWatch) changedTo(id string, troubled bool) (changed, sure bool) {
	switch {
	case id == "":
		w.unsure = w.unsure || troubled
		return troubled, false
	case w.runID == "":
		unsure := w.unsure || troubled
		w.unsure = false
		return unsure, false
	}
	w.unsure = false
	return id != w.runID, true
}

// readRunIDPatiently reads the run_id, trying again after each of
// serverCheckPauses while the INFO fails for a reason that passes; "" if
// it cannot tell. troubled says that an INFO failed for such a reason.
func (w *serverWatch) readRunIDPatiently() (id string, troubled bool) {
	for i := 0; ; i++ {
		id, err := w.readRunID()
		if !callerr.IsTransient(err) || i == len(serverCheckPauses) {
			return id, troubled || callerr.IsTransient(err)
		}
		troubled = true
		select {
		case <-time.After(serverCheckPauses[i]):
		case <-w.stop:
			return "", false
		}
	}
}

// readRunID returns the run_id of the server the client now reaches; ""
// and no error once the backend is closed or if INFO has none.
func (w *serverWatch) readRunID() (string, error) {
	if w.b.closing() {
		return "", nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), serverCheckTimeout)
	defer cancel()
	w.mu.Lock()
	rdb := w.rdb
	w.mu.Unlock()
	info, err := rdb.Info(ctx, "server").Result()
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(info, "\n") {
		if id, ok := strings.CutPrefix(strings.TrimSpace(line), "run_id:"); ok {
			return id, nil
		}
	}
	return "", nil
}

// serverChanged acts on a change of server behind a *redis.Client: every
// held lock is verified, and, when the change is sure, the Pub/Sub
// connection is dropped so that waiters subscribe on the new server.
func (b *goRedisBackend) serverChanged(sure bool) {
	if !sure {
		// Maybe the same server: its locks are verified, and the Pub/Sub
		// connection stays. (Dropping it would redial, start another
		// check, and, while INFO keeps failing, a LOADING server say,
		// repeat all this every few seconds.) A server that did restart
		// dropped that connection itself; its redial resubscribed.
		b.slots.tell(func(string) bool { return true })
		return
	}
	b.mu.Lock()
	ns := b.nodes[""]
	delete(b.nodes, "")
	b.mu.Unlock()
	if ns != nil {
		ns.abandon()
	}
	b.slots.tell(func(string) bool { return true })
	// A Pub/Sub connection for the next change, and the next dying server.
	b.watchServer()
}

// watchServer keeps a Pub/Sub connection open to the server of a
// *redis.Client once a watchdog watches it: when the server dies or
// restarts, the connection drops at once and its redial, through the
// dial hook, finds the new server, even when no call is due.
func (b *goRedisBackend) watchServer() {
	if b.server == nil || b.closing() {
		return
	}
	b.subscriber(b.server.rdb, "")
}
