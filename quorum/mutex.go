package quorum

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/internal/protocol"
	"github.com/lockgen/lockgen/lua"
)

// acquire sends mutex_acquire to every server and grants the lock if a
// majority granted it and confirmed the fence floor within the validity
// time (the lease less the drift margin, counted from before the call was
// sent, as the Locker counts it). Otherwise it gives back at once what
// some servers granted, and replies busy, or ErrNoQuorum if so many
// servers failed (an error, or silence after an error) that no majority
// can answer. A server that is merely slow makes it busy: a waiter tries
// again, and a busy machine does not end its wait.
func (q *quorumBackend) acquire(ctx context.Context, c backend.Call) (any, error) {
	sent := time.Now()
	lease := leaseOf(c)
	validity := lease - protocol.DriftMargin(lease)
	settled := q.acquireSettled
	if tryOnce(c) {
		settled = q.tryOnceSettled
	}
	answers := q.fanOut(ctx, nil, []backend.Call{c}, min(validity, answerBound(lease)), settled)
	var grants []memberFence
	var wait int64
	answered := 0
	for i, a := range answers {
		r, ok := a.reply(0)
		if !ok {
			continue
		}
		reply, err := protocol.ParseAcquire(r.Value)
		if err != nil {
			answers[i].replies[0].Err = err
			continue
		}
		answered++
		if reply.Granted() {
			grants = append(grants, memberFence{i, reply.N})
		} else if wait == 0 || reply.N < wait {
			wait = reply.N
		}
	}
	if len(grants) >= q.majority {
		deadline := sent.Add(validity)
		if fence, ok := q.writeFloor(ctx, c, grants, deadline); ok && time.Now().Before(deadline) {
			q.setHeld(keyOf(c), fence)
			return []any{int64(protocol.AcquireGranted), fence}, nil
		}
	}
	q.giveBack(ctx, c, grants)
	failed := 0
	for i, a := range answers {
		if a.failed(q.members[i], 0) {
			failed++
		}
	}
	switch {
	case failed > len(q.members)-q.majority:
		return nil, q.noQuorum("acquire", answers)
	case answered < q.majority && (wait == 0 || wait > slowRetry):
		// Slow servers: try again soon, whatever the others said.
		wait = slowRetry
	}
	return []any{int64(protocol.AcquireBusy), splitWait(wait, len(grants) > 0 || answered < q.majority)}, nil
}

// slowRetry bounds the retry time (ms) of an acquire that too few servers
// answered in time.
const slowRetry = 50

// answerBound is how long an acquire waits for servers whose answer could
// still change its outcome: a tenth of the lease, at least 200 ms. Until
// then the servers that did grant hold the lock for nobody; a server that
// answers later is counted as a refusal (its grant is given back).
func answerBound(lease time.Duration) time.Duration { return max(lease/10, 200*time.Millisecond) }

// memberFence is one server's grant.
type memberFence struct {
	member int
	fence  int64
}

// acquireSettled: the outcome of an acquire is known once a majority
// granted or so many refused or failed that no majority can grant.
func (q *quorumBackend) acquireSettled(answers []memberAnswer) bool {
	granted, refused := 0, 0
	for _, a := range answers {
		if a.replies == nil {
			continue
		}
		if r, ok := a.reply(0); ok {
			if reply, err := protocol.ParseAcquire(r.Value); err == nil && reply.Granted() {
				granted++
				continue
			}
		}
		refused++
	}
	return granted >= q.majority || refused > len(q.members)-q.majority
}

// tryOnceSettled settles the acquire of a caller that tries once: as
// acquireSettled, or as soon as a majority has answered. A split vote is
// then busy at once, where a waiter's acquire waits for the others (up to
// answerBound, a minute at a 10-minute lease) since their answer may
// still make a majority.
func (q *quorumBackend) tryOnceSettled(answers []memberAnswer) bool {
	return q.acquireSettled(answers) || countAnswered(answers) >= q.majority
}

// tryOnce reports whether c is the acquire of a caller that tries once:
// it registers no waiter (a window of 0, ARGV[4]).
func tryOnce(c backend.Call) bool { return len(c.Args) > 3 && c.Args[3] == "0" }

// splitWait is the busy reply's retry time. After a split vote (some
// servers granted, none by a majority) the waiters that split it must not
// all try again at the same moment: each waits a random part of it.
func splitWait(wait int64, split bool) int64 {
	wait = max(wait, 1)
	if split {
		return 1 + rand.Int64N(wait)
	}
	return wait
}

// writeFloor raises the fence of every granting server to the highest of
// their fences (mutex_floor) and reports whether a majority now holds it.
func (q *quorumBackend) writeFloor(ctx context.Context, c backend.Call, grants []memberFence, deadline time.Time) (int64, bool) {
	var fence int64
	for _, g := range grants {
		fence = max(fence, g.fence)
	}
	confirmed := 0
	var lower []int
	for _, g := range grants {
		if g.fence == fence {
			confirmed++
		} else {
			lower = append(lower, g.member)
		}
	}
	if len(lower) == 0 || confirmed >= q.majority {
		return fence, confirmed >= q.majority && !time.Now().After(deadline)
	}
	floor := backend.Call{Script: lua.MutexFloor, Keys: c.Keys, Args: []string{c.Args[0], c.Args[1], c.Args[2], fenceArg(fence)}}
	need := q.majority - confirmed
	raised := func(a memberAnswer) bool {
		r, ok := a.reply(0)
		v, isInt := r.Value.(int64)
		return ok && isInt && v >= fence
	}
	settled := func(answers []memberAnswer) bool {
		n := 0
		for _, a := range answers {
			if raised(a) {
				n++
			}
		}
		return n >= need
	}
	bound := min(time.Until(deadline), answerBound(leaseOf(c)))
	if bound <= 0 {
		return fence, false
	}
	for _, a := range q.fanOut(ctx, lower, []backend.Call{floor}, bound, settled) {
		if raised(a) {
			confirmed++
		}
	}
	return fence, confirmed >= q.majority
}

// giveBack runs the release script, at once, on the servers that granted
// an acquire the quorum did not grant. It waits for them as long as ctx
// lets it (the caller's wait is a hard bound); a server that has not
// answered by then is left to the follow-up, which releases until it does.
func (q *quorumBackend) giveBack(ctx context.Context, c backend.Call, grants []memberFence) {
	if len(grants) == 0 {
		return
	}
	members := make([]int, len(grants))
	for i, g := range grants {
		members[i] = g.member
	}
	release := backend.Call{Script: lua.MutexRelease, Keys: c.Keys, Args: c.Args[:3]}
	q.fanOut(ctx, members, []backend.Call{release}, leaseOf(c), anyAnswer)
}

// anyAnswer settles a fan-out whose outcome nothing waits for: after the
// first answer, only the grace is left for the others.
func anyAnswer([]memberAnswer) bool { return true }

// renew renews locks on every server with mutex_floor (which keeps the
// fence floor alive as well): 1 for a lock a majority confirmed, 0 for one
// that a majority can no longer confirm, an error (try again) otherwise.
func (q *quorumBackend) renew(ctx context.Context, calls []backend.Call) []backend.Reply {
	floors := make([]backend.Call, len(calls))
	bound := time.Duration(0)
	for i, c := range calls {
		floors[i] = c
		if fence, ok := q.holds(keyOf(c)); ok {
			floors[i] = backend.Call{Script: lua.MutexFloor, Keys: c.Keys, Args: []string{c.Args[0], c.Args[1], c.Args[2], fenceArg(fence)}}
		}
		bound = max(bound, leaseOf(c))
	}
	count := func(answers []memberAnswer, i int) (confirmed, unknown int) {
		for _, a := range answers {
			r, ok := a.reply(i)
			v, isInt := r.Value.(int64)
			switch {
			case !ok:
				unknown++
			case isInt && v > 0:
				confirmed++
			}
		}
		return confirmed, unknown
	}
	settled := func(answers []memberAnswer) bool {
		for i := range calls {
			if ok, unknown := count(answers, i); ok < q.majority && ok+unknown >= q.majority && unknown > 0 {
				return false
			}
		}
		return true
	}
	answers := q.fanOut(ctx, nil, floors, bound, settled)
	out := make([]backend.Reply, len(calls))
	for i, c := range calls {
		switch ok, unknown := count(answers, i); {
		case ok >= q.majority:
			out[i] = backend.Reply{Value: int64(1)}
		case ok+unknown >= q.majority:
			out[i] = backend.Reply{Err: q.noQuorum("renew", answersFor(answers, i))}
		default:
			out[i] = backend.Reply{Value: int64(0)}
			q.dropLost(ctx, c, answers, i)
		}
	}
	return out
}

// dropLost forgets a lock that a majority no longer confirms (its holder
// is told it is lost and never releases it) and gives it back on the
// servers that did renew it: they still hold it in the holder's name, for
// a whole lease (an acquire that landed there late, after the lock was
// deleted or had expired on the others). Left there, it would outlive the
// holder and hold up every later grant on those servers.
func (q *quorumBackend) dropLost(ctx context.Context, c backend.Call, answers []memberAnswer, i int) {
	q.dropHeld(keyOf(c))
	var renewed []memberFence
	for m, a := range answers {
		if r, ok := a.reply(i); ok {
			if v, isInt := r.Value.(int64); isInt && v > 0 {
				renewed = append(renewed, memberFence{member: m})
			}
		}
	}
	q.giveBack(ctx, c, renewed)
}

// answersFor keeps the replies to call i only.
func answersFor(answers []memberAnswer, i int) []memberAnswer {
	out := make([]memberAnswer, len(answers))
	for j, a := range answers {
		if a.replies != nil {
			out[j].replies = []backend.Reply{a.replies[i]}
		}
	}
	return out
}

func (q *quorumBackend) renewOne(ctx context.Context, c backend.Call) (any, error) {
	r := q.renew(ctx, []backend.Call{c})[0]
	return r.Value, r.Err
}

// release runs the release script on every server: 1 if a majority
// released the lock, 0 if a majority answered otherwise (not held, or a
// waiter's withdrawal), ErrNoQuorum if fewer than a majority answered.
// A server that does not answer is left to the follow-up. The outcome is
// known once a majority released, or once so many said "not held" that a
// majority of releases is out of reach; any majority of answers is not
// enough: a lock held on 2 of 3 servers, whose third server answers first,
// would be reported not held when one of its two answered late.
func (q *quorumBackend) release(ctx context.Context, c backend.Call) (any, error) {
	q.dropHeld(keyOf(c))
	settled := func(answers []memberAnswer) bool {
		released := countReleased(answers)
		return released >= q.majority || countAnswered(answers)-released > len(q.members)-q.majority
	}
	answers := q.fanOut(ctx, nil, []backend.Call{c}, leaseOf(c), settled)
	released := countReleased(answers)
	switch {
	case released >= q.majority:
		return int64(1), nil
	case countAnswered(answers) >= q.majority:
		return int64(0), nil
	}
	return nil, q.noQuorum("release", answers)
}

// countReleased counts the servers whose reply to a release script says
// it released the caller's lock.
func countReleased(answers []memberAnswer) int {
	n := 0
	for _, a := range answers {
		if r, ok := a.reply(0); ok {
			if _, done := protocol.ReleasedBy(r.Value); done {
				n++
			}
		}
	}
	return n
}
