package quorum

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/lua"
)

// A quorum call goes to every server in parallel and returns once its
// outcome is known, without waiting for a server that is slow or down. The
// call left running there may still take the lock, register a waiter or
// release, so each server runs at most one call per lock and holder id at
// a time (a slot), and a call that started while the slot was taken is not
// sent to that server (errServerBusy: no answer). When a call ends without
// its caller (abandoned), without a reply, or after a later call was
// turned away from its slot, and the holder does not hold the lock through
// the quorum, the slot stays taken while the release script runs for that
// holder on that server until the server answers (twice when the call in
// doubt got no reply: its command may still have been in the server's
// input buffer), or the lease would have ended. So nothing is left in the
// name of a holder that gave up or released, and no clean-up of an old
// call can undo a newer call of the same holder.

// errServerBusy: the server still runs an earlier call of the same holder
// on the same lock, so this one was not sent there.
var errServerBusy = errors.New("an earlier call of this holder on this lock is still running on this server")

// slotKey is one holder id on one lock (its base key).
type slotKey struct{ base, holder string }

func keyOf(c backend.Call) slotKey { return slotKey{c.Keys[0], c.Args[0]} }

// quorumMember is one server of the quorum.
type quorumMember struct {
	index int
	b     backend.Backend
	pub   string // its publish command, for ARGV[3]
	// failing: the server's latest call that ended, ended in an error.
	// A server that is silent now counts as down if it is failing, and
	// as slow otherwise.
	failing atomic.Bool

	mu      sync.Mutex
	flights map[slotKey]*flight // taken slots
}

// flight is a taken slot: skipped is set when a call was turned away.
type flight struct{ skipped bool }

func (m *quorumMember) claim(k slotKey) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if f := m.flights[k]; f != nil {
		f.skipped = true
		return false
	}
	m.flights[k] = &flight{}
	return true
}

func (m *quorumMember) free(k slotKey) {
	m.mu.Lock()
	delete(m.flights, k)
	m.mu.Unlock()
}

// run sends calls to the server: one Eval, or one batch.
func (m *quorumMember) run(ctx context.Context, calls []backend.Call) []backend.Reply {
	if len(calls) == 1 {
		v, err := m.b.Eval(ctx, calls[0])
		return []backend.Reply{{Value: v, Err: err}}
	}
	return m.b.EvalBatch(ctx, calls)
}

// memberAnswer is one server's replies to a fan-out, one per call; nil if
// it did not answer in time.
type memberAnswer struct{ replies []backend.Reply }

// reply returns the server's reply to call i, and whether it answered it.
func (a memberAnswer) reply(i int) (backend.Reply, bool) {
	if a.replies == nil || a.replies[i].Err != nil {
		return backend.Reply{}, false
	}
	return a.replies[i], true
}

// failed reports whether the server failed call i: it replied with an
// error, or it is silent (no answer in time, or an earlier call still
// running) and its latest call failed.
func (a memberAnswer) failed(m *quorumMember, i int) bool {
	if a.replies != nil && a.replies[i].Err != nil && a.replies[i].Err != errServerBusy {
		return true
	}
	_, ok := a.reply(i)
	return !ok && m.failing.Load()
}

// err says why the server did not answer the first call (nil if it did).
func (a memberAnswer) err() error {
	if a.replies == nil {
		return errNoAnswer
	}
	return a.replies[0].Err
}

// errNoAnswer: a server did not answer before the fan-out stopped waiting.
// It is not the runtime's "no reply" of a call whose outcome is unknown:
// the quorum's own call did return, with a verdict.
var errNoAnswer = errors.New("no answer in time")

func countAnswered(answers []memberAnswer) int {
	n := 0
	for _, a := range answers {
		if _, ok := a.reply(0); ok {
			n++
		}
	}
	return n
}

func allFailed(rs []backend.Reply) bool {
	for _, r := range rs {
		if r.Err == nil {
			return false
		}
	}
	return true
}

// memberCall is one server's part of a fan-out.
type memberCall struct {
	mu         sync.Mutex
	abandoned  bool // the fan-out stopped waiting for it
	delivering bool // its answer is on its way to the fan-out
}

// abandon tells the call that nobody waits for it, unless its answer is
// already on its way (false).
func (mc *memberCall) abandon() bool {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	if mc.delivering {
		return false
	}
	mc.abandoned = true
	return true
}

type indexedAnswer struct {
	member  int
	replies []backend.Reply
}

// minGrace is the least a fan-out waits for the servers still running
// once its outcome is known.
const minGrace = 10 * time.Millisecond

// fanOut sends calls to the servers at indexes members (all if nil) in
// parallel and collects their answers until each has answered, ctx ends,
// bound passes, or, once settled reports the outcome known, a grace as long
// as the fan-out has taken so far (at least minGrace). Servers still
// running then are left to finish in the background (see above). Each
// server's calls run on a context that ctx cannot cancel, bounded by the
// longest lease among them: past it, no reply matters.
func (q *quorumBackend) fanOut(ctx context.Context, members []int, calls []backend.Call, bound time.Duration, settled func([]memberAnswer) bool) []memberAnswer {
	if members == nil {
		for i := range q.members {
			members = append(members, i)
		}
	}
	start := time.Now()
	results := make(chan indexedAnswer, len(members))
	mcs := make(map[int]*memberCall, len(members))
	for _, i := range members {
		mcs[i] = q.start(ctx, q.members[i], calls, results)
	}
	answers := make([]memberAnswer, len(q.members))
	expire := time.NewTimer(bound)
	defer expire.Stop()
	var grace <-chan time.Time
wait:
	for got := 0; got < len(members); got++ {
		select {
		case a := <-results:
			answers[a.member].replies = a.replies
			if grace == nil && settled != nil && settled(answers) {
				t := time.NewTimer(max(time.Since(start), minGrace))
				defer t.Stop()
				grace = t.C
			}
			continue
		case <-grace:
		case <-expire.C:
		case <-ctx.Done():
		}
		break wait
	}
	for _, i := range members {
		if answers[i].replies == nil && !mcs[i].abandon() {
			for answers[i].replies == nil {
				a := <-results
				answers[a.member].replies = a.replies
			}
		}
	}
	return answers
}

// start sends calls to m in a goroutine of their own; the answer goes to
// results unless the fan-out abandons the call first.
func (q *quorumBackend) start(ctx context.Context, m *quorumMember, calls []backend.Call, results chan<- indexedAnswer) *memberCall {
	mc := &memberCall{}
	bound := time.Duration(0)
	replies := make([]backend.Reply, len(calls))
	var sent []backend.Call
	var at []int
	for i, c := range calls {
		if !m.claim(keyOf(c)) {
			replies[i] = backend.Reply{Err: errServerBusy}
			continue
		}
		bound = max(bound, leaseOf(c))
		sent = append(sent, backend.Call{Script: c.Script, Keys: c.Keys, Args: memberArgs(c, m.pub)})
		at = append(at, i)
	}
	if len(sent) == 0 {
		mc.delivering = true
		results <- indexedAnswer{m.index, replies}
		return mc
	}
	go func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), bound)
		rs := m.run(cctx, sent)
		cancel()
		m.failing.Store(allFailed(rs))
		mc.mu.Lock()
		abandoned := mc.abandoned
		mc.delivering = !abandoned
		mc.mu.Unlock()
		for j, i := range at {
			replies[i] = rs[j]
			q.settle(m, sent[j], abandoned || rs[j].Err != nil)
		}
		if !abandoned {
			results <- indexedAnswer{m.index, replies}
		}
	}()
	return mc
}

// settle frees the slot of call c on m once c has ended, or first runs the
// release for its holder there (see above).
func (q *quorumBackend) settle(m *quorumMember, c backend.Call, inDoubt bool) {
	k := keyOf(c)
	m.mu.Lock()
	f := m.flights[k]
	_, held := q.holds(k)
	if held || !(inDoubt || f.skipped) {
		delete(m.flights, k)
		m.mu.Unlock()
		return
	}
	m.mu.Unlock()
	if !q.spawn(func() {
		defer m.free(k)
		q.followUp(m, c, inDoubt)
	}) {
		m.free(k)
	}
}

// spawn runs f in the background unless the backend is closed.
func (q *quorumBackend) spawn(f func()) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	select {
	case <-q.stop:
		return false
	default:
	}
	q.tasks.Add(1)
	go func() {
		defer q.tasks.Done()
		f()
	}()
	return true
}

// followUp runs the release script for c's holder on m until m answers
// (twice if confirm), or the lease would have ended, or the backend closes.
func (q *quorumBackend) followUp(m *quorumMember, c backend.Call, confirm bool) {
	lease := leaseOf(c)
	release := backend.Call{Script: lua.MutexRelease, Keys: c.Keys, Args: []string{c.Args[0], c.Args[1], ""}}
	release.Args = memberArgs(release, m.pub)
	giveUpAt := time.Now().Add(lease)
	backoff := time.Duration(0)
	for replies := 0; ; {
		ctx, cancel := context.WithDeadline(context.Background(), giveUpAt)
		_, err := m.b.Eval(ctx, release)
		cancel()
		if err == nil {
			replies++
			if replies == 2 || !confirm {
				return
			}
			backoff = followUpBackoffMin
		} else {
			backoff = min(max(2*backoff, followUpBackoffMin), followUpBackoffMax)
		}
		if !time.Now().Add(backoff).Before(giveUpAt) {
			return
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-q.stop:
			t.Stop()
			return
		}
	}
}

// Pacing of a follow-up's releases: after an answer (when a second one is
// wanted), or the first failure, it waits followUpBackoffMin, doubling on
// each failure up to followUpBackoffMax.
const (
	followUpBackoffMin = 10 * time.Millisecond
	followUpBackoffMax = time.Second
)

// leaseOf reads a call's lease (ARGV[2], ms), 1s if it is malformed (the
// script will refuse it anyway).
func leaseOf(c backend.Call) time.Duration {
	ms, err := strconv.ParseInt(c.Args[1], 10, 64)
	if err != nil || ms < 1 {
		return time.Second
	}
	return time.Duration(ms) * time.Millisecond
}

// fenceArg formats a fence for ARGV.
func fenceArg(f int64) string { return strconv.FormatInt(f, 10) }

// memberArgs is c's ARGV as one server runs it: with that server's publish
// command, and for a release, "all" (mutex_release's ARGV[6]): the release
// wakes every waiter instead of offering the lock to the one registered
// first there. Each server orders its registrations by their arrival,
// which differs from server to server, so offers made server by server
// can name different waiters, none of them on a majority; every one of
// them would then wait for its offers to lapse.
func memberArgs(c backend.Call, pub string) []string {
	args := append([]string(nil), c.Args...)
	args[2] = pub
	if c.Script == lua.MutexRelease {
		for len(args) < 4 {
			args = append(args, "") // no fence guess
		}
		args = append(args[:4], "", "all") // no waiter of this process first; offer to nobody
	}
	return args
}
