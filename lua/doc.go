// Package lua holds the Lua scripts that do lockgen's work inside Redis, one
// embedded file per operation, and hands them out as [Script] values ready
// for EVALSHA:
//
//	s := lua.MutexAcquire
//	rdb.EvalSha(ctx, s.SHA1, []string{b, b + ":wake"}, holder, leaseMs, "PUBLISH")
//
// Every guarantee lockgen gives (exclusion, reentrancy, fair order, leases,
// fences, wake-ups) is a property of these scripts; the runtime only calls
// them, waits and renews. docs/design.md fixes what the scripts promise the
// rest of lockgen: KEYS, ARGV, replies and wake messages. This page
// documents what lives inside the keys.
//
// # Calling convention
//
// ARGV[1] is the holder id (1..64 bytes of [A-Za-z0-9._:-]), ARGV[2] the
// lease in milliseconds (1..2^31), ARGV[3] the publish command (PUBLISH, or
// SPUBLISH on Cluster); semaphore_acquire adds ARGV[4], the permits,
// mutex_acquire takes an optional ARGV[4] "once", "retry" or "waited", and
// fair_acquire an optional ARGV[4] "waited" (see the data model,
// mutex_acquire.lua and fair_acquire.lua). Extra ARGV are ignored.
// Malformed input is refused with an error reply starting "ERR lockgen:"
// before anything is written. Every acquire replies {1, fence}
// or {0, wait_ms}, and mutex_acquire {2, wait_ms} to a busy caller that is
// the lock's heir; wait_ms is at least 1 and at most the caller's lease.
//
// The helpers the scripts share (ARGV checks, the server clock, fences, the
// encodings below) live in prelude.lua. Each Source is the operation's file
// preceded by only the helpers it uses, directly or through another helper,
// in prelude order: Redis runs the whole chunk on every call, and every
// `local function` costs a new closure each time, so a helper a script does
// not need would still cost it CPU. [Script.Helpers] lists them. Every
// helper is a Lua local, so scripts read and write no globals.
// [Script.File] maps a line of Source back to its file and line.
//
// # Clock and fences
//
// A script reads the server's TIME at most once. Queue order, liveness and
// fences all come from that clock, never from the caller's. A fence is
// max(now in µs, last fence + 1). The last fence is kept in the lock's own
// key; when a lock ends while its fence is not yet behind the clock (a
// release in the microsecond of the grant), a tombstone holding only the
// fence lives until the clock has passed it. No key lives forever.
//
// # Data model
//
// mutex, fair: B is a string "<holder> <count> <fence> <waited>" with the
// lease as its TTL, so one GET reads the whole lock and one SET ... PX
// writes it. waited (mutex only) is set by the first busy reply that is not
// "once", by a hand-over, and by a grant to a caller that says it waited
// (ARGV[4] "waited"), so that only a contended lock publishes on release
// and a chain of waiters woken one at a time never stalls on a grant nobody
// marked. A tombstone has holder "!", which no holder id can be. Any other
// value is refused ("unexpected lock value"), but for the mutex's heir form
// below, which the fair scripts, sharing the decoder, would take as well.
//
// mutex heir: a mutex may add its heir, "<holder> <count> <fence> 1 <heir>
// <until>": the first caller that got busy on the held lock (ARGV[4] absent,
// "retry" or "waited"; not "once"), and until when (server ms, one of the
// heir's leases after its attempt) it is known to be alive. The busy reply
// that makes a caller the heir is {2, wait_ms}; B keeps its TTL (SET ...
// KEEPTTL). Each attempt of the heir pushes until on; anyone else gets {0,
// wait_ms} while the heir lives and becomes the heir once until has passed.
// Re-entries, claims, renewals and releases that are not the last keep the
// heir fields. The last release hands the lock to a live heir: B becomes
// "<heir> 1 <new fence> 1" with PX = until - now (marked: others may wait
// too) and "grant:<fence>:<heir>" is published on B:wake, on which each
// process also nudges its next parked waiter, whose attempt makes it the
// heir of the new grant. An heir that missed the message finds the lock
// its own at its next attempt, which says "retry" (right after
// subscribing) or "waited" (after a wake-up or its timer) and so claims
// the grant: {1, same fence}, still one hold, lease restarted (with ARGV[4]
// absent the same call is a re-entry, count + 1). A waiter made heir that
// gives up calls mutex_leave: still the heir, it drops the heir fields
// (reply 1; B keeps its TTL and its mark); handed the lock unheard, it
// gives the grant back unused (reply 2), which ends it as a release would,
// handing it on to a newer live heir; otherwise nothing changes (0). A dead
// heir is handed the lock and never uses it: it lapses at until, within
// one of the heir's leases.
//
// mutex reservation: the last release (or a give-back by mutex_leave) of a
// contended mutex (waited = 1) with no live heir (it gave up, its until has
// passed, or nobody registered since a hand-over) does not delete B but
// leaves "! 0 <fence> 1" for min(lease, 10) ms (longer if the fence
// tombstone must live longer) and publishes "n:1". While it lives,
// mutex_acquire grants the lock only to a caller that says it waited
// (ARGV[4] "waited"); anyone else, "retry" callers and the releaser
// included, is told to wait out its PTTL, and marks nothing. The woken
// waiter so gets the lock it was woken for instead of losing it, most of
// the time, to whoever is already on the wire; if no waiter comes, the
// reservation lapses after at most 10 ms.
//
// fair: B:queue is a sorted set of waiters scored by arrival (server ms; a
// tie goes behind the tail: max(now, tail + 1)); B:alive holds the same
// waiters scored by the deadline of their place (one lease after their last
// acquire or heartbeat). Every fair script first removes the waiters whose
// deadline has passed, wherever they stand (one ZRANGEBYSCORE when nobody
// died), and drops a queue member that has no deadline at all (damaged keys)
// instead of failing. Both sets expire with the latest deadline.
//
// fair hand-over: a fair lock is never left free while a live waiter is
// queued. Whoever finds it free (the last release, or any fair script that
// finds B absent or a tombstone while the queue is not empty: a newcomer's
// acquire, a heartbeat, a renew or release by someone else, a leave) hands
// it straight to the first live waiter, the head: the head leaves both
// sets, B becomes "<head> 1 <new fence> 0" with PX = the head's place
// deadline - now (what is left of its place, not the releaser's lease), and
// "grant:<fence>:<head>" is published on B:wake; the head holds the lock
// without another call. A newcomer that finds the lock free with someone
// else first queues behind, told to retry when the head's hold would end.
// A head that missed the message finds out from its next heartbeat (reply
// 0: no longer queued) or retry: fair_acquire with ARGV[4] "waited" by the
// owner claims the grant, {1, same fence}, still one hold, lease restarted
// (without "waited" the same call is a re-entry, count + 1). A head that
// gives up calls fair_leave, which gives an unused grant back (reply 2): the
// lock goes to the next live head, or is retired (DEL, or a fence
// tombstone) if there is none. A head that died is handed the lock and
// never uses it: it lapses at that place's deadline, within one lease.
//
// read/write: B is a hash: w = "<holder> <count> <fence> <deadline>" for the
// writer (ignored once its deadline has passed), r:<holder> = "<count>
// <fence>" per reader, f = last fence, ww = until when new readers must let
// a waiting writer in (set and extended by the writer's busy retries), wwh =
// the writer that set ww (write_leave withdraws only its own claim, so a
// writer that gives up does not keep readers out for the rest of its lease),
// wq = someone got busy since the last wake, exp = the deadline the TTL
// covers.
// B:readers scores each reader by the deadline of its own lease; readers
// past it are purged before any decision, so a vanished reader blocks a
// writer for one lease at most.
//
// semaphore: the same shape: B holds h:<holder> = "<count> <fence>", f, wq,
// exp; B:holds scores each holder by its deadline. A holder counts once
// however often it re-enters.
//
// # Cost
//
// Redis commands per call on the common paths, counted with INFO
// commandstats against redis-server (TestCommandCost in gopherlua_test pins
// these numbers; BenchmarkScriptCPU there reports the server CPU of the
// uncontended mutex path, about 6-8 µs per call on a shared 2-core machine,
// against 1-1.5 µs for a script that only returns):
//
//	path                               cmds  commands
//	mutex uncontended acquire            3   TIME GET SET
//	mutex reentrant acquire              2   GET SET
//	mutex busy, becomes heir / heir      4   GET PTTL TIME SET
//	mutex busy, live heir                3   GET PTTL TIME
//	mutex busy, once                     2   GET PTTL
//	mutex busy (reserved, not waited)    2   GET PTTL
//	mutex acquire (reserved, waited)     3   GET TIME SET
//	mutex claim (retry/waited, handed)   2   GET SET
//	mutex renew                          2   GET PEXPIRE
//	mutex release, no waiters            3   GET TIME DEL
//	mutex release, hands over            4   GET TIME SET(heir's grant) PUBLISH(grant)
//	mutex release, waiters, no heir      4   GET TIME SET(reservation) PUBLISH(n:1)
//	mutex release, reentrant             2   GET SET
//	mutex_leave, heir / not heir        2/1  GET [SET]
//	mutex_leave, grant given back        4   GET TIME SET(new heir's grant or reservation) PUBLISH
//	fair uncontended acquire             4   GET TIME ZRANGE SET
//	fair reentrant acquire               4   GET TIME ZRANGE SET
//	fair busy (joins queue / queued)   11/10
//	fair heartbeat                       9
//	fair heartbeat, empty queue          3   GET TIME ZRANGE
//	fair renew                           4   GET TIME ZRANGE PEXPIRE
//	fair release, no waiters             4   GET TIME ZRANGE DEL
//	fair release, hands over            10   GET TIME ZRANGE ZRANGEBYSCORE ZRANGE ZSCORE ZREM×2 SET PUBLISH
//	fair claim (waited, handed)          4   GET TIME ZRANGE SET
//	read acquire / re-entry / renew      7   TIME ZRANGEBYSCORE HMGET ZADD HSET PEXPIREAT×2
//	read release, last reader            7
//	write uncontended acquire            7
//	write busy (readers)                 8
//	write renew                          5
//	write release, no waiters            6
//	semaphore uncontended acquire        8
//	semaphore busy                       8
//	semaphore renew                      7
//	semaphore release, last holder       7
//
// The scripts are checked in package gopherlua_test: scenario tables run
// in the gopher-lua shim and on a real redis-server, which must agree, with
// every line of every script executed offline.
package lua
