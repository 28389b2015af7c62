// Package lua holds the Lua scripts that do lockgen's work inside Redis, one
// embedded file per operation, and hands them out as [Script] values ready
// for EVALSHA:
//
//	s := lua.MutexAcquire
//	rdb.EvalSha(ctx, s.SHA1, []string{b, b + ":waiters", b + ":wake"}, holder, leaseMs, "PUBLISH", windowMs)
//
// Every guarantee lockgen gives (exclusion, fair order, leases, fences,
// hand-overs, wake-ups, idempotence) is a property of these scripts; the
// runtime only calls them, waits, renews and counts re-entries.
// docs/design.md fixes what the scripts promise the rest of lockgen: KEYS,
// ARGV, replies and wake messages. This page documents what lives inside
// the keys.
//
// # Calling convention
//
// ARGV[1] is the holder id (1..64 bytes; the runtime keeps them to
// [A-Za-z0-9._:-], the scripts refuse only what breaks their encodings: a
// space, or "!" alone), ARGV[2] the lease in milliseconds (an integer in
// 1..2^31, however Lua spells it), ARGV[3] the publish command (PUBLISH, or
// SPUBLISH on Cluster). mutex_acquire adds ARGV[4] (an integer in 0..2^31:
// 0 registers nothing, for a caller that tries once; any other value
// registers a busy caller) and an optional ARGV[5], the holder id of the
// next waiter of the caller's process, registered when the call takes or
// claims the lock; and semaphore_acquire ARGV[4], the permits (1..2^31). The latch
// scripts take the same three ARGV, ARGV[1] naming the caller (the setter,
// the party counting down) and ARGV[2] being the latch's TTL, and latch_set
// ARGV[4], the count (1..2^31), and mutex_floor ARGV[4], the fence floor
// (the quorum Locker's renewal: it raises the lock's fence to the floor and
// restarts the lease; it replies the fence, or 0 if not held). Extra ARGV are ignored. Malformed input is
// refused with an error reply starting "ERR lockgen:" before anything is
// written.
//
// Every acquire replies {1, fence} (fair_acquire: the bare fence, an
// integer reply costing Redis less than a table) or {0, wait_ms[, holder[,
// left_ms]]}; wait_ms is at least 1 and at most the caller's lease; holder (and what is
// left of its lease) is there when the script read it: a mutex or fair
// holder, a writer. Renew replies 1 (the lease now ends
// ARGV[2] ms from now) or 0 (not held). Release replies 1 (released) or 0
// (not held by this holder id); a release that finds the lock not the
// caller's withdraws whatever a busy acquire left for that holder id (a
// mutex registration, a fair queue place, a writer's claim), so it is also
// what a waiter that gives up calls, and the clean-up after an acquire
// whose outcome is unknown. fair_heartbeat replies 0 (not queued) or, the
// place kept, the ms until the lock's lease ends at the latest (1 at
// least, the lease at most): when the waiter's next heartbeat should look
// whether the holder died. While that lease runs it reads only the lock's
// TTL (one PTTL, no GET), so under a protocol 1 holder it keeps the place
// (the queue's format is the same in both) and refuses once the lease has
// ended.
//
// The helpers the scripts share (ARGV checks, the server clock, fences, the
// encodings below) live in prelude.lua. Each Source is the operation's file
// with only the helpers it uses, directly or through another helper, in
// prelude order, ahead of it (the functions below the mark in a file
// that has one, see below): Redis runs the whole chunk on every call, and every `local function` costs a
// new closure each time, so a helper a script does not need would still
// cost it CPU. [Script.Helpers] lists them. Every helper is a Lua local, so
// scripts read and write no globals. The three scripts every mutex cycle
// runs (mutex_acquire, mutex_renew, mutex_release) take no helper at all,
// only the constants LG_TOMB and LG_FLOOR_MS: they write out the checks of
// lg_args and the value of lg_lock_decode and lg_lock_encode, a third less
// Redis CPU ("Cost"). The fair scripts that run often (acquire, release,
// renew, heartbeat) and the shared kinds' acquires (read, write, semaphore)
// write out only their usual path (a free lock with nobody queued, a
// release with nobody queued, a lease that runs, a waiter behind a live
// holder, a free read side, lock or permit) above the line [HelpersMark] of
// their file. The composer puts the prelude's constants ahead of the file
// and its functions right below the mark, so the usual path makes no
// closure: it tests LG_ARGS_OK (lg_args's checks as one value) and hands
// everything else, with what it read, to the code below the mark, 15 to 49
// per cent less Redis CPU per call (docs/redis-cost.md). The
// malformed-input scenarios hold them all to the same refusals.
// [Script.File] maps a line of Source back to its file and line.
//
// # Idempotence
//
// Redis counts no holds. A re-entry by the call chain that holds a lock is
// counted by the runtime, which does not call Redis for it, so an acquire
// that finds the lock already its holder id's is the same grant seen again:
// a call retried by the client after a dropped connection, a duplicated
// request, or a hand-over whose message the caller missed. It replies {1,
// the same fence}, restarts the lease (PEXPIRE for mutex and fair, the
// holder's deadline for read/write and semaphore) and changes nothing else.
// A busy acquire repeated registers, queues or claims once, moving its
// deadline on. No retry can add a hold, and the one release after any
// number of them leaves nothing behind but the last fence (for the fence
// floor, below).
//
// # Clock and fences
//
// A script reads the server's TIME only where it makes a deadline or has
// no fence to count from: once at most, but for a fair hand-over of a lock
// whose key had expired (its first fence, read where it is made). Queue order, liveness and fences
// all come from that clock, never from the caller's. A fence is the last
// fence + 1; only a key that remembers none starts from the clock in µs.
// The last fence is kept in the lock's own key B, and B outlives what the
// lock needs it for by the fence floor, LG_FLOOR_MS ([FenceFloor], 10 s): a
// mutex or fair B has PX lease + floor (the rest of the holder's lease is
// PTTL - floor; a negative rest means the lease ended and B is only a
// tombstone with a holder's name), a release leaves the tombstone
// "! <fence> <waiters>" for the floor (a mutex's keeps B's TTL: the rest of
// the lease, then the floor), and a shared lock's hash and set
// expire at the last deadline + floor (a release of the last hold leaves a
// hash with only f). A grant takes a script run of more than a µs, so a
// count never overtakes the clock of the master that counts; a key that
// was idle for the floor restarts from a clock above every fence issued
// before, on any master whose clock is less than the floor ahead. So fences
// keep rising through a failover or a restart on another host, as long as
// the masters' clocks are less than the floor apart. No key lives forever:
// an idle lock's keys are gone a floor after its last use.
// An acquire or renew that finds the lock its own holder's after the lease
// ended (nobody took it in between) is the same grant: it restarts the
// lease with the same fence.
//
// # Data model
//
// mutex, fair: B is a string "<holder> <fence> <waiters>" with the lease
// (plus the fence floor) as its TTL, so one GET reads the whole lock and one
// SET ... PX writes it; waiters is "-" or "+" (protocol 2). A tombstone is
// "! <fence> -": holder "!", which no holder id can be. A value with the
// flag "0" or "1" was written by protocol 1 and is refused with "lock
// written by lockgen protocol 1"; any other value is refused ("unexpected
// lock value").
//
// mutex waiters: B:waiters is a sorted set of registered waiters scored by
// the fence of the holder they registered under, minus 2^53
// (LG_SCORE_BASE: negative, so that protocol 1's scripts, which read
// scores as deadlines, see them as lapsed). A busy mutex_acquire that
// registers adds the caller with ZADD NX (a waiter already registered keeps
// its place and costs GET PTTL ZADD, nothing more); a new member sets the
// set's TTL to 2 x lease + floor and B's flag to "+". Its reply is
// {0, min(PTTL - floor, lease)}: the caller tries again when the holder's
// lease would end, unless a message comes first. An acquire that takes a
// free lock (or a tombstone) removes the caller's own registration, so that
// no release offers the lock to a caller that has it.
//
// mutex release: a holder that believes it holds the lock sends the fence
// of its grant (ARGV[4]), and mutex_release writes the tombstone on that
// guess in one command, SET B "! <fence> -" KEEPTTL GET XX, whose reply is
// the value it replaced. Only when that was "<holder> <fence> -" is the
// release done; otherwise the same script puts B right (back as it was,
// TTL included, for a lock that is not the caller's; the tombstone with
// B's own fence; or the offer below) before anyone can read it. A caller
// that does not know its fence (a clean-up, a waiter withdrawing) sends
// none, and B is only read unless the lock is the caller's.
//
// mutex offer: the release of a lock whose flag is "+" pops the first
// registration (ZPOPMIN) and offers it the lock: B becomes "<waiter> <new
// fence> +" with PX = min(lease, 500 ms) + floor, and
// "grant:<fence>:<waiter>" is published on B:wake and is also the
// release's reply. The waiter claims it with mutex_acquire, which finds the
// lock its own, restarts the full lease and publishes "taken:<fence>". An
// offer nobody claims is a lease that ended after 500 ms: any acquire takes
// the lock then, with the next fence. With the flag "+" but the set empty
// (it expired) the release retires the lock and publishes "all"; a popped
// score above zero (a protocol 1 registration) deletes the set and does
// the same.
//
// fair: B:queue is a sorted set of waiters scored by arrival (the server
// clock in µs, with no read of the tail: two scripts do not run in one µs,
// so arrivals do not tie in practice, and a tie would only be ordered by
// holder id; a step of the server's clock back by d can put a waiter that
// arrives within d ahead of earlier ones); B:alive holds the same waiters
// scored by the deadline of their place (server ms, one lease after their
// last acquire or heartbeat; the runtime heartbeats 2/3 of a lease after
// the last, or when the lock's lease ends if that is sooner, and a waiter
// makes no attempts of its own meanwhile). A waiter whose deadline has passed has lost
// its place: nobody waits for it, inspect does not list it, and a call of
// its own finds it gone (a heartbeat replies 0, an acquire joins at the
// back). Its entries are removed when it comes first in line (one sweep
// then removes every dead place, ZRANGEBYSCORE on alive) or when it calls
// again, so that the common paths pay nothing to look for the dead; a
// queue member that has no deadline at all (damaged keys) is dropped when
// it comes first instead of failing. A release reads and removes the
// head's deadline with one ZPOPMIN of alive, which holds the head first
// whenever alive is in queue order (waiters given the same lease, none
// kept alive out of turn); otherwise it puts back what it popped (if live)
// and reads the head's deadline with ZSCORE. Both sets expire with the
// latest deadline ever given to a waiter (PEXPIREAT GT, so no read of the
// highest score; a waiter that leaves does not shorten them). B's waiters
// flag is always 0: the queue says who waits.
//
// fair hand-over: a fair lock is never left free while a live waiter is
// queued. Whoever finds it free (the last release, or any fair script that
// finds B absent or a tombstone while the queue is not empty: a newcomer's
// acquire, a heartbeat, a renew or release by someone else) hands it
// straight to the first live waiter, the head: the head leaves both sets, B
// becomes "<head> <new fence> 0" with PX = the head's place deadline - now
// (what is left of its place, not the releaser's lease), and
// "grant:<fence>:<head>" is published on B:wake (and is the reply of a
// release that handed the lock on, as for the mutex). A newcomer that finds the
// lock free with someone else first queues behind, told to retry when the
// head's hold would end. A head that missed the message finds out from its
// next heartbeat (reply 0: no longer queued) or acquire (the same grant); a
// head that gives up releases the lock it was handed (reply 1), which goes
// on to the next live head. A head that died is handed the lock and never
// uses it: it lapses at that place's deadline, within one lease.
//
// read/write: B is a hash: w = "<holder> <fence> <deadline>" for the
// writer (ignored once its deadline has passed), r:<holder> = "<fence>" per
// reader, f = last fence, ww = until when new readers must let a waiting
// writer in (set and extended by the writer's busy retries), wwh = the
// writer that set ww, wq = someone got busy since the last wake, exp = the
// deadline the TTL covers. B:readers scores each reader by the deadline of
// its own lease; readers past it are purged before any decision that
// reads the readers, so a vanished reader blocks a writer for one lease at
// most. write_acquire reads the readers only when no other writer holds
// the lock, and then the first reader (ZRANGE 0 0) first: the purge runs
// only when that one is dead (lg_shared_first). A waiting writer's retry
// writes its claim with one HSET when it ends within the floor after exp
// (the keys live that long already): exp then covers the holders, not the
// claim, which outlives exp by less than the floor. write_release by the
// writer named in wwh, when it does not hold the lock, withdraws that
// claim (reply 0), so a writer that gives up does not keep readers out for
// the rest of its lease; another writer's claim stays.
//
// semaphore: the same shape: B holds h:<holder> = "<fence>", f, wq, exp;
// B:holds scores each holder by its deadline. A holder id holds at most one
// permit. semaphore_acquire reads the first holder (ZRANGE 0 0) first, as
// write_acquire does: the purge runs only when that one is dead, and a
// busy reply's wait comes from the same read, so a waiter's retry is
// TIME, ZRANGE, HMGET and ZCARD.
//
// latch: B is a hash: c = the count left, g = the generation (server µs
// when it was set), s = the id of the TrySetCount call that set it,
// p:<party> for each party that counted down. latch_set writes only when B
// is absent (a latch is one-shot); latch_count_down adds p:<party> with
// HSETNX and counts only if it was new, and the call that reaches 0 drops
// the p: fields and publishes "open" on B:wake. Every latch script restarts
// B's TTL (ARGV[2]), so a latch lives while it is used and an open one stays
// open for one TTL after its last use. A hash whose c or g is not a plain
// integer, or that lacks s, is refused ("unexpected latch value").
//
// # Operations
//
// <family>_inspect (mutex, fair, rw, semaphore) reads a lock without
// writing: { now_ms, last fence, holders <id, side, fence, deadline>,
// waiters <id, deadline> in the order they are served, a waiting writer's
// claim <id, until> }, all times in server ms, what has run out left out.
// <family>_force_release removes every holder whatever its id (an
// operator's tool): an exclusive lock goes to the first live fair waiter or
// becomes a tombstone, a shared lock keeps f (and a waiting writer's
// claim), each for as long as the removed leases would have run, so later
// fences stay higher even if the server's clock steps back; waiters are
// woken as after a release, and each removed holder's next renewal gets 0.
//
// # Cost
//
// Redis commands per call on the common paths, counted with INFO
// commandstats against redis-server (TestCommandCost in gopherlua_test pins
// these numbers and checks this table against them; BenchmarkScriptCPU
// there reports the server CPU of the uncontended mutex path, 5.7-6.1 µs
// per acquire of a tombstone and 3.8 µs per release on a 2-core machine,
// against 1.2 µs for a script that only returns; 2026-11-24):
//
//	path                                cmds  commands
//	mutex uncontended acquire             4   GET ZCARD TIME SET
//	mutex uncontended acquire, tombstone  2   GET SET
//	mutex acquire, own lock               2   GET PEXPIRE
//	mutex busy, registers, marks          5   GET PTTL ZADD(NX) PEXPIRE SET
//	mutex busy, registers                 4   GET PTTL ZADD(NX) PEXPIRE
//	mutex busy, already registered        3   GET PTTL ZADD(NX)
//	mutex busy, window 0                  2   GET PTTL
//	mutex renew                           3   GET PTTL PEXPIRE
//	mutex floor, fence above it (quorum)  4   GET PTTL TIME PEXPIRE
//	mutex release, no waiters             1   SET(tombstone, GET)
//	mutex release, hands over             4   SET(tombstone, GET) ZPOPMIN SET(offer) PUBLISH
//	mutex release, registrations expired  3   SET(tombstone, GET) ZPOPMIN PUBLISH(all)
//	mutex claim of an offer               3   GET PEXPIRE PUBLISH(taken)
//	mutex claim, others waiting           3   GET PEXPIRE PUBLISH(taken)
//	mutex claim, registers next           5   GET PEXPIRE ZADD(NX) PEXPIRE PUBLISH(taken)
//	mutex free take, registers next       4   GET ZADD(NX) PEXPIRE SET
//	mutex release by a waiter             2   GET ZREM
//	fair uncontended acquire              4   GET ZRANGE TIME SET
//	fair uncontended acquire, tombstone   3   GET ZRANGE SET
//	fair acquire, own lock                2   GET PEXPIRE
//	fair busy (joins queue)               9   GET PTTL TIME ZADD(NX) ZADD PEXPIREAT×4(GT, NX: new sets)
//	fair busy (joins behind)              7   GET PTTL TIME ZADD(NX) ZADD PEXPIREAT×2(GT)
//	fair busy (queued)                    8   GET PTTL TIME ZADD(NX) ZSCORE ZADD PEXPIREAT×2(GT)
//	fair heartbeat                        2   PTTL ZADD(XX GT CH)
//	fair heartbeat, refresh               4   PTTL ZADD(XX GT CH) PEXPIREAT×2(GT)
//	fair heartbeat, deadline not later    3   PTTL ZADD(XX GT CH) ZSCORE
//	fair heartbeat, not queued            3   PTTL ZADD(XX GT CH) ZSCORE
//	fair heartbeat, lock free            15   PTTL GET TIME ZSCORE ZADD PEXPIREAT×2 ZRANGE ZSCORE ZREM×2 TIME SET PUBLISH PTTL
//	fair renew                            3   GET PTTL PEXPIRE
//	fair release, no waiters              3   GET ZPOPMIN SET(tombstone)
//	fair release, hands over              6   GET ZPOPMIN TIME ZPOPMIN SET PUBLISH
//	fair acquire, handed (missed)         2   GET PEXPIRE
//	fair release by a waiter              4   GET ZREM×2 PTTL
//	read uncontended acquire              7   TIME ZRANGEBYSCORE HMGET ZADD HSET PEXPIREAT×2
//	read acquire, own hold                7   TIME ZRANGEBYSCORE HMGET ZADD HSET PEXPIREAT×2
//	read renew                            7
//	read release, last reader             9
//	write uncontended acquire             6   TIME HMGET ZRANGE HSET PEXPIREAT×2
//	write acquire, own hold               5   TIME HMGET HSET PEXPIREAT×2
//	write busy (readers)                  4   TIME HMGET ZRANGE HSET
//	write busy (writer)                   3   TIME HMGET HSET
//	write busy, claim past the floor      6   TIME HMGET ZRANGE HSET PEXPIREAT×2
//	write renew                           5
//	write release, no waiters             8
//	write release, claim withdrawn        7   TIME ZRANGEBYSCORE HMGET HDEL PUBLISH HDEL ZCARD
//	semaphore uncontended acquire         8
//	semaphore acquire, own permit         7
//	semaphore busy                        7   TIME ZRANGE HMGET ZCARD HSET PEXPIREAT×2
//	semaphore busy, a waiter's retry      4   TIME ZRANGE HMGET ZCARD
//	semaphore renew                       7
//	semaphore release, last holder        9
//	latch set                             4   HMGET TIME HSET PEXPIRE
//	latch count down                      4   HMGET PEXPIRE HSETNX HSET
//	latch count down, again               3   HMGET PEXPIRE HSETNX
//	latch count down, opens               7   HMGET PEXPIRE HSETNX DEL HSET PEXPIRE PUBLISH
//	latch count                           2   HMGET PEXPIRE
//
// A grant on a hot mutex costs a registration (4; 5 for the first on a
// grant nobody had waited for, which also marks it) and a release that
// hands over (5): 9 commands, in two script calls, with no acquire by the
// waiter it was handed to. Only a registration renewed asks PTTL whether
// the holder's lease ended (its key then being only the fence floor).
//
// A grant on a hot fair key costs a release that hands over (6) and the
// releaser's next request, which joins behind the others (7): 13 commands
// in two script calls, 15 with the calls themselves (INFO commandstats
// counts EVALSHA too), where the protocol before this trim paid 17 (19.8
// executed per grant at 8 processes of 4 goroutines, 15.6 now). The head's
// deadline comes with one ZPOPMIN of alive as long as alive is in queue
// order; when it is not (waiters with different leases, or one kept alive
// out of turn), that release pays up to three commands more.
//
// The uncontended mutex cycle was trimmed to what it needs: the acquire of
// a lock whose key is a tombstone (any lock used again within the fence
// floor) runs GET and SET, the release one SET. Fences count on from the
// one the key keeps, so neither reads TIME (only a key that remembers no
// fence does), a clear waiters flag spares the acquire its ZREM, the
// release writes its tombstone on the fence the runtime remembers and
// reads the old value from that same SET (GET option; each redis.call
// costs about 0.5-1 µs of Redis CPU, whatever the command), and a grant
// replies its fence as an integer. The tombstone keeps B's TTL (KEEPTTL,
// where a PX would need the old TTL to put back a lock that was not the
// caller's), so a released mutex's key lives the rest of the lease longer
// than before: about 100 B per released key for up to a lease.
//
// Then the Lua around those commands. Measured inside redis-server (a loop
// of 200,000 in one EVAL, 2026-11-24): a string.match that decodes the
// value about 270 ns, string.format of a 16-digit fence 150 ns, a dozen
// helper closures 250 ns, a TTL passed as a Lua number about 130 ns more
// than as a string, tonumber 40 ns, a concatenation 30 ns. So the three
// mutex cycle scripts carry no helper (no closure is made per call); the
// fence and the waiters flag stay the strings they were written as until a
// grant needs the next fence (a tombstone keeps the digits, no format on
// release); a tombstone is checked with a pattern over the part after
// its mark only; the checks are a tonumber and three comparisons each.
// Redis CPU per acquire + release, interleaved
// on one redis-server (INFO commandstats, EVALSHA, medians of 7 rounds of
// 20,000 cycles; loaded 2-core machine, 2026-11-24): with a dozen helpers
// each 12.1-12.6 µs, without 10.0-10.8, with the shorter checks 10.0 (the
// same rounds: 10.4 before), against 7.2-7.8 µs for two scripts that only
// GET and SET. The same work run inside one EVAL, without the cost of the
// calls themselves: 4.2 µs per cycle, against 2.6 µs for the bare GET and
// SET of each script. What is left above the bare commands is checking
// the arguments and the value and making the new value. The one-write
// release then took the cycle from 9.8 to 8.9 µs on a tombstone, and from
// 12.3 to 10.9 µs on a key's first use (the same rounds, same machine).
//
// bsm/redislock, the lean reference, also makes one script call per
// acquire (SET NX PX) and one per release (GET, DEL), but keeps no fence
// and no waiters: its acquire of a free key writes one new key, its
// release deletes it. lockgen's release must leave the fence behind for
// the floor (a SET, not a DEL) and the acquire reads the key first (GET),
// with 3 KEYS and 3-4 ARGV where redislock has 1 and 1-3. The published
// `make bench` compares the Redis time per uncontended cycle
// (docs/benchmarks.md, section 1).
//
// # Why not Redis Functions
//
// FCALL (Redis 7) was measured against EVALSHA on the uncontended mutex
// cycle (BenchmarkFunctionVsEvalsha in gopherlua_test, interleaved rounds,
// medians of three runs of 300 rounds on a loaded 2-core machine; Redis CPU
// per call from INFO commandstats, acquire / release):
//
//	EVALSHA, the scripts as shipped           5.69 / 5.03 µs
//	FCALL, the same Source as the function    5.63 / 4.95 µs  (-1%)
//	FCALL, helpers made once at library load  5.55 / 4.94 µs  (-2%)
//	wall time per acquire + release: the same for all three within noise
//	(125.1, 125.6 and 125.5 µs in one run: round trips dominate)
//
// (2026-11-24, after the mutex scripts lost their helpers; before, with a
// dozen helpers each, the same benchmark gave 8.55 / 7.69 µs for EVALSHA
// and -12% for a library that makes its helpers once.) The call itself
// costs the same, and a library could only save what a script makes per
// call; the mutex scripts now make nothing. Taking FCALL would mean loading
// a versioned library on every master (each Cluster shard, and again after
// a failover or FUNCTION FLUSH) and falling back to EVALSHA where FUNCTION
// is missing or denied (Redis 6, ACLs, some managed services), for 1-2% of
// server CPU and no client-visible gain, so the scripts stay EVALSHA.
//
// The scripts are checked in package gopherlua_test: scenario tables run
// in the gopher-lua shim and on a real redis-server, which must agree, with
// every line of every script executed offline.
package lua
