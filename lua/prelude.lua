-- prelude.lua: helpers shared by every lockgen script. Package lua prepends
-- this file to each operation, so everything here is a local of the script's
-- chunk: no globals are read or written.

-- Holder ids may not contain this, so it marks a tombstone: a lock value kept
-- only to remember the last fence (see lg_retire_*).
local LG_TOMB = '!'

-- The fence floor: every key of a lock that holds a fence lives at least
-- this many ms longer than the lock needs it (past the end of the last
-- lease, or past the release). A lease that ends leaves its key behind for
-- this long, so a new grant on any master whose clock is at most this far
-- behind the clock of the master that issued the last fence still finds
-- that fence and goes above it (docs/design.md, "Fences"). Exclusive locks
-- (mutex, fair) read the rest of a holder's lease as PTTL minus the floor.
local LG_FLOOR_MS = 10000

-- How long a mutex release offers the lock to its first registered waiter
-- (at most the releaser's lease): the waiter claims it within this, or the
-- offer lapses and the others try. It bounds what a waiter that died costs
-- the next, so it is short; a live waiter's claim takes a round trip after
-- the message.
local LG_OFFER_MS = 500

-- A mutex registration's score in B:waiters is its fence minus this (2^53,
-- above any fence: exact, and below zero). The order is the fences', and
-- protocol 1's scripts, which read a score as a deadline in server ms,
-- see every protocol 2 registration as lapsed; protocol 1's own
-- registrations (deadlines, above zero) sort after every protocol 2 one,
-- and a release never offers the lock to them. The set outlives the lock's
-- key, so during a rolling deploy (or a rollback) the one may meet a
-- holder of the other protocol: read as a deadline, a fence in µs lies
-- some 55,000 years on.
local LG_SCORE_BASE = 9007199254740992

local function lg_error(msg)
  return redis.error_reply('ERR lockgen: ' .. msg)
end

-- Formats an integer without Lua 5.1's exponent notation (1.7e+15).
local function lg_int(x)
  return string.format('%d', x)
end

-- Parses a positive integer no larger than max; nil when malformed. Any
-- spelling Lua reads as that number ("1e3", " 5") is taken: one call of
-- tonumber and three comparisons cost a fraction of a digit pattern, and
-- the value is all a script uses.
local function lg_positive(s, max)
  local n = tonumber(s)
  if not n or n < 1 or n > max or n % 1 ~= 0 then return nil end
  return n
end

-- ARGV[2], the lease in ms, read as lg_positive reads it (nil if it is no
-- number), and whether ARGV[1..3] pass lg_args's checks, as one value and
-- no message. They are values, not functions (no closure per call): a
-- script's usual path, written out above its helpers (lua.HelpersMark),
-- tests LG_ARGS_OK, and a call that fails it goes on to lg_args, which
-- refuses it before anything is read.
local LG_LEASE = tonumber(ARGV[2])
local LG_ARGS_OK = #ARGV >= 3 and LG_LEASE and LG_LEASE >= 1 and LG_LEASE <= 2147483648 and LG_LEASE % 1 == 0
  and #ARGV[1] > 0 and #ARGV[1] <= 64 and not string.find(ARGV[1], ' ', 1, true) and ARGV[1] ~= LG_TOMB
  and (ARGV[3] == 'PUBLISH' or ARGV[3] == 'SPUBLISH')

-- mutex_acquire, mutex_renew and mutex_release write this and the value's
-- decoding out themselves (no closure per call on the mutex cycle); the
-- malformed-input scenarios keep them refusing what these refuse.

-- Checks KEYS and the ARGV every script shares: ARGV[1] holder id, ARGV[2]
-- lease in ms, ARGV[3] the publish command. Returns holder, lease, publish
-- command, or nil and an error reply. Runs before any write.
local function lg_args(nkeys, nargs)
  if #KEYS < nkeys then
    return nil, nil, nil, lg_error('want ' .. nkeys .. ' KEYS, got ' .. #KEYS)
  end
  if #ARGV < nargs then
    return nil, nil, nil, lg_error('want ' .. nargs .. ' ARGV, got ' .. #ARGV)
  end
  local holder = ARGV[1]
  -- The runtime keeps holder ids to [A-Za-z0-9._:-]. A script checks what
  -- its own encodings need, with a plain search, a fraction of the cost of
  -- matching the alphabet: no space (the separator of a string lock's
  -- value) and not the tombstone's mark.
  if #holder == 0 or #holder > 64 or string.find(holder, ' ', 1, true) or holder == LG_TOMB then
    return nil, nil, nil, lg_error('holder id must be 1..64 bytes without a space, and not "!"')
  end
  local lease = lg_positive(ARGV[2], 2147483648)
  if not lease then
    return nil, nil, nil, lg_error('lease must be an integer number of ms in 1..2^31')
  end
  local pub = ARGV[3]
  if pub ~= 'PUBLISH' and pub ~= 'SPUBLISH' then
    return nil, nil, nil, lg_error('publish command must be PUBLISH or SPUBLISH')
  end
  return holder, lease, pub, nil
end

-- The server clock, read once per script: milliseconds (deadlines, queue
-- order) and microseconds (fences).
local function lg_now()
  local t = redis.call('TIME')
  local sec, usec = t[1] + 0, t[2] + 0 -- TIME replies digit strings
  return sec * 1000 + math.floor(usec / 1000), sec * 1000000 + usec
end

-- The fence of a new grant: one more than the last fence, which every key
-- that holds a lock keeps for the fence floor after the lock needs it; a
-- key that remembers none (first use, or idle past the floor) starts from
-- the server clock in µs, read here unless the caller has (now_us). Each
-- grant takes a script run of more than a µs, so fences never overtake the
-- clock of the server that counts them, and a restart from the clock lands
-- above every fence issued before on any master whose clock is less than
-- the floor ahead (docs/design.md, "Fences"). Counting also spares the
-- uncontended acquire its TIME.
local function lg_next_fence(last, now_us)
  if last then return last + 1 end
  if now_us then return now_us end
  local _, us = lg_now()
  return us
end

-- How long a busy caller should sleep at most: until the blocking lease ends,
-- at least 1 ms and never longer than the caller's own lease.
local function lg_wait(ms, lease)
  if ms > lease then return lease end
  if ms < 1 then return 1 end
  return ms
end

-- The TTL of an exclusive lock's key for a lease of ms: the key outlives the
-- lease by the floor, so that a lease that ends keeps its fence.
local function lg_lease_ttl(ms)
  return lg_int(ms + LG_FLOOR_MS)
end

-- The ms left of the lease of the exclusive lock in key, whose holder is
-- someone else: negative once the lease has ended and only the floor is
-- left (0 in its last ms: Redis keeps a key in the ms of its expiry). A lock
-- whose key has no TTL (damaged by hand) counts as ended.
local function lg_lease_left(key)
  return redis.call('PTTL', key) - LG_FLOOR_MS
end

-- Whether a lock read as owner (lg_lock_decode) is free for a new grant:
-- absent, a tombstone, or a lease that has ended. The caller's own lock is
-- never free for its acquire: a retried acquire after its lease ended, with
-- nobody else granted in between, is the same grant with the same fence.
-- (Its renewal is refused then: mutex_renew, fair_renew.)
local function lg_lock_free(key, owner)
  return not owner or owner == LG_TOMB or lg_lease_left(key) < 0
end

-- Exclusive locks (mutex, fair) keep one string: holder, fence and a flag
-- set while a mutex's waiters set may hold registrations (always "-" for
-- fair, whose queue speaks for itself), separated by spaces (holder ids have
-- none): "<holder> <fence> <-|+>". A single GET reads it and a single SET
-- ... PX writes it with its TTL. Holds are not counted here: a re-entry by
-- the same call chain is counted by the runtime, so any acquire that finds
-- the lock its holder's is the same grant seen again (a retried or
-- duplicated call), never a new hold.
--
-- The flag's alphabet is the protocol version: protocol 1 wrote "0" and
-- "1", protocol 2 (mutex waiters registered without deadlines, hand-overs
-- claimed) writes "-" and "+". Each refuses the other's values, so two
-- lockgen versions on one key during a rolling deploy fail with an error
-- instead of misreading each other's registrations.
local LG_PROTOCOL_ERR = 'ERR lockgen: lock written by lockgen protocol 1 (an older lockgen); every process using this key must run the same protocol: finish the deploy, or wait until the key expires'

-- The error reply for a value that is not a protocol 2 lock.
local function lg_bad_value(v)
  if string.find(v, ' [01]$') then return redis.error_reply(LG_PROTOCOL_ERR) end
  return lg_error('unexpected lock value')
end

-- Returns holder, fence, waiters (numbers for the last two); nothing for an
-- absent key; an error reply as the fourth value for a value that is not a
-- lock.
local function lg_lock_decode(v)
  if not v then return nil end
  local holder, fence, waiters = string.match(v, '^(%S+) (%d+) ([-+])$')
  if not holder then return nil, nil, nil, lg_bad_value(v) end
  -- fence is digits only (arithmetic converts it without a call of
  -- tonumber) and waiters one of two strings.
  return holder, fence + 0, waiters == '+' and 1 or 0
end

-- What a fair script does first below its helpers' mark: lg_args's
-- checks, then the lock's value, read by the usual path above the mark
-- (read) or now, decoded. Returns holder, lease, publish command, owner
-- and fence, or, as the sixth value, the error reply for bad arguments or
-- a value that is not a lock.
local function lg_fair_begin(read, value)
  local holder, lease, pub, err = lg_args(4, 3)
  if err then return nil, nil, nil, nil, nil, err end
  if not read then value = redis.call('GET', KEYS[1]) end
  local owner, fence, _, bad = lg_lock_decode(value)
  return holder, lease, pub, owner, fence, bad
end

-- lg_int keeps the µs fence out of Lua 5.1's exponent notation (1.7e+15);
-- the rest is concatenation, cheaper than a three-field string.format.
local function lg_lock_encode(holder, fence, waiters)
  return holder .. ' ' .. lg_int(fence) .. (waiters == 1 and ' +' or ' -')
end

-- Hands an exclusive lock that just became free straight to a registered
-- waiter, so that the waiter needs no acquire of its own: the handoff costs
-- the release's round trip and one Pub/Sub message. The lock is the
-- waiter's, with a new fence, for ttl_ms: until the waiter's registration
-- would have run out. The waiter counts its lease from when it sent the
-- request that made that registration, so its local deadline falls before
-- Redis's; its first renewal (or, if it missed the message, its next
-- acquire, which finds the lock its own) gives the lock its full lease.
-- Returns the wake message, which a release also replies with: a waiter in
-- the releaser's own process then hears of its grant from the reply,
-- without waiting for the message.
local function lg_hand_over(key, holder, fence, waiters, ttl_ms, pub, wake)
  fence = lg_next_fence(fence)
  redis.call('SET', key, lg_lock_encode(holder, fence, waiters), 'PX', lg_lease_ttl(ttl_ms))
  local grant = 'grant:' .. lg_int(fence) .. ':' .. holder
  redis.call(pub, wake, grant)
  return grant
end

-- Ends an exclusive lock whose waiters set is empty: leaves a tombstone
-- holding the fence for the floor. No clock is read: fences stay below the
-- clock of the master that counts them (lg_next_fence).
local function lg_retire_string(key, fence)
  redis.call('SET', key, lg_lock_encode(LG_TOMB, fence, 0), 'PX', LG_FLOOR_MS)
end

-- The same for the hash of a shared lock (read/write, semaphore): the
-- tombstone keeps only field f, the last fence.
local function lg_retire_hash(key, fence)
  redis.call('DEL', key)
  if fence then
    redis.call('HSET', key, 'f', lg_int(fence))
    redis.call('PEXPIRE', key, LG_FLOOR_MS)
  end
end

-- Fair locks keep their waiters in two sorted sets with the same members:
-- the queue (score: arrival, the server clock in µs: two scripts do not run
-- in one µs, so arrivals do not tie in practice, and a tie is only ordered
-- by holder id) and alive (score: the deadline of the
-- waiter's place in server ms, one lease after its last acquire or
-- heartbeat). Both live at least until the latest deadline given to any
-- waiter (lg_fair_expire_at_least), so an abandoned queue disappears. A
-- dead place is removed when it comes first in line (lg_fair_live_head):
-- until then it holds nobody up, so no script pays to look for it.

-- The first waiter, or nil.
local function lg_fair_first(queue)
  return redis.call('ZRANGE', queue, 0, 0)[1]
end

-- Removes every waiter whose place has run out, wherever it stands. Run
-- once a dead place is found first in line: where one died, more may have
-- (a crashed process), and one sweep is cheaper than finding them one by
-- one.
local function lg_fair_evict(queue, alive, now_ms)
  local dead = redis.call('ZRANGEBYSCORE', alive, '-inf', lg_int(now_ms))
  -- ZREM in slices: unpack of a long list would overflow the Lua stack.
  for i = 1, #dead, 500 do
    local last = math.min(i + 499, #dead)
    redis.call('ZREM', queue, unpack(dead, i, last))
    redis.call('ZREM', alive, unpack(dead, i, last))
  end
end

-- The first waiter whose place is live, and its deadline (a number), or
-- nil; head, when known, is the first waiter. Dead places in front of it
-- go (lg_fair_evict). A queue member without a deadline (a dead place
-- whose deadline a release popped, lg_fair_take_deadline, or sets damaged
-- by hand) is dropped rather than blocking everyone or making a script
-- compare nil with a number.
local function lg_fair_live_head(queue, alive, now_ms, head)
  while true do
    head = head or lg_fair_first(queue)
    if not head then return nil, nil end
    local deadline = redis.call('ZSCORE', alive, head)
    if not deadline then
      redis.call('ZREM', queue, head)
    elseif deadline + 0 > now_ms then
      return head, deadline + 0
    else
      lg_fair_evict(queue, alive, now_ms)
    end
    head = nil
  end
end

-- Makes key live at least until at (ms) with PEXPIREAT GT (Redis 7), which
-- moves a TTL only later: one command, no read of the latest deadline. A
-- TTL therefore never shrinks when the waiter with the latest deadline
-- leaves: the sets may outlive their last place by up to 3 leases (a
-- heartbeat's refresh, fair_heartbeat). GT
-- counts a key without a TTL as never expiring, and refuses: only a set
-- that the caller's ZADD may just have made (fresh: it added a member) has
-- none, and NX gives it one.
local function lg_fair_expire_at_least(key, at, fresh)
  if redis.call('PEXPIREAT', key, at, 'GT') == 0 and fresh then
    redis.call('PEXPIREAT', key, at, 'NX')
  end
end

-- Gives holder's place another lease, and both sets at least as long
-- (joined: the caller's ZADD added holder to the queue).
local function lg_fair_keep_alive(queue, alive, holder, deadline, joined)
  local at = lg_int(deadline)
  local fresh = redis.call('ZADD', alive, at, holder) == 1
  lg_fair_expire_at_least(queue, at, joined)
  lg_fair_expire_at_least(alive, at, fresh)
end

-- Joins holder behind the tail, or keeps its place: ZADD NX changes no
-- place that exists, so one command both tests and joins. A place that ran
-- out (not yet removed: dead places go when they come first) is not kept:
-- the caller goes to the back, as if it had been removed.
local function lg_fair_join(queue, alive, holder, lease, now_ms, now_us)
  local arrival = lg_int(now_us)
  local joined = redis.call('ZADD', queue, 'NX', arrival, holder) == 1
  if not joined then
    local deadline = redis.call('ZSCORE', alive, holder)
    if not deadline or deadline + 0 <= now_ms then
      redis.call('ZADD', queue, arrival, holder)
    end
  end
  lg_fair_keep_alive(queue, alive, holder, now_ms + lease, joined)
end

-- Hands a free fair lock to head, the first live waiter, already out of
-- the queue (lg_hand_over), for as long as its place would have lived:
-- deadline is one lease after its last acquire or heartbeat.
local function lg_fair_hand_over(lock, alive, head, deadline, fence, now_ms, pub, wake)
  redis.call('ZREM', alive, head)
  return lg_hand_over(lock, head, fence, 0, deadline - now_ms, pub, wake)
end

-- Called by a script that found the lock free (absent, a tombstone with
-- the last fence, or a lease that ended) while the queue may not be empty:
-- the first live waiter, if any, gets the lock at once. Returns the wake
-- message of its grant, or false if nobody got it. head is the first
-- waiter if the caller knows it, else nil.
local function lg_fair_grant_head(lock, queue, alive, fence, now_ms, pub, wake, head)
  local deadline
  head, deadline = lg_fair_live_head(queue, alive, now_ms, head)
  if not head then return false end
  redis.call('ZREM', queue, head)
  return lg_fair_hand_over(lock, alive, head, deadline, fence, now_ms, pub, wake)
end

-- Removes first from alive and returns its deadline (a number), or nil if
-- it had none. The waiter first in line usually has the earliest deadline
-- too (places given the same lease and kept alive in turn): then one
-- ZPOPMIN reads and removes it. Otherwise the waiter popped goes back if
-- its place is live; a dead one stays out, and its queue entry goes when
-- it comes first (lg_fair_live_head) or calls again (lg_fair_join).
local function lg_fair_take_deadline(alive, first, now_ms)
  local earliest = redis.call('ZPOPMIN', alive)
  if earliest[1] == first then return earliest[2] + 0 end
  local deadline = redis.call('ZSCORE', alive, first)
  if earliest[1] and earliest[2] + 0 > now_ms then
    redis.call('ZADD', alive, earliest[2], earliest[1])
    -- alive is empty without first (damaged sets): ZADD made it anew.
    if not deadline then lg_fair_expire_at_least(alive, earliest[2], true) end
  end
  if not deadline then return nil end
  redis.call('ZREM', alive, first)
  return deadline + 0
end

-- The release of a held fair lock: the lock goes to first, the first
-- waiter, which the caller popped off the queue as it read it (ZPOPMIN
-- saves a ZREM; an empty queue needs no clock), or to the next one if that
-- place ran out. Returns the wake message of the grant, or false if nobody
-- got it.
local function lg_fair_pass_on(lock, queue, alive, first, fence, now_ms, pub, wake)
  local deadline = lg_fair_take_deadline(alive, first, now_ms)
  if deadline and deadline > now_ms then
    return lg_hand_over(lock, first, fence, 0, deadline - now_ms, pub, wake)
  end
  if deadline then lg_fair_evict(queue, alive, now_ms) end
  return lg_fair_grant_head(lock, queue, alive, fence, now_ms, pub, wake, nil)
end

-- Shared locks (read/write, semaphore) keep one hash B and one sorted set of
-- holders (score: the deadline of each holder's own lease). The hash holds
-- each holder's fence under <prefix><holder>, the last fence in
-- f, the latest deadline its TTL covers in exp, and wq = 1 once someone got
-- busy since the last wake. Both keys live until exp.

-- Removes holders whose lease ended; returns how many. dead, when given,
-- is what the caller's own ZRANGEBYSCORE of them replied (a script's usual
-- path, above its helpers, reads it first).
local function lg_shared_purge(hash, set, prefix, now_ms, dead)
  dead = dead or redis.call('ZRANGEBYSCORE', set, '-inf', lg_int(now_ms))
  for i = 1, #dead, 500 do
    local last = math.min(i + 499, #dead)
    local fields = {}
    for j = i, last do fields[#fields + 1] = prefix .. dead[j] end
    redis.call('ZREM', set, unpack(dead, i, last))
    redis.call('HDEL', hash, unpack(fields))
  end
  return #dead
end

-- The holder whose lease ends first, as ZRANGE 0 0 WITHSCORES replies
-- ({} when none), after the holders whose lease ended are purged. That
-- one is read first: if it is live, none has ended, and the purge (a
-- ZRANGEBYSCORE) is skipped; a busy caller takes its wait from the same
-- reply. first, when given, is that reply, read by the caller's usual
-- path above its helpers.
local function lg_shared_first(hash, set, prefix, now_ms, first)
  first = first or redis.call('ZRANGE', set, 0, 0, 'WITHSCORES')
  if first[2] and first[2] + 0 <= now_ms then
    lg_shared_purge(hash, set, prefix, now_ms)
    first = redis.call('ZRANGE', set, 0, 0, 'WITHSCORES')
  end
  return first
end

-- A holder's entry in a shared lock's hash is its fence; nil when absent.
local function lg_hold_decode(v)
  return tonumber(v)
end

-- Writes fields (a flat name, value list) to the hash and makes the hash and
-- the set live until the latest of exp and deadline. Returns the new exp.
local function lg_shared_write(hash, set, fields, exp, deadline)
  if deadline > exp then exp = deadline end
  fields[#fields + 1] = 'exp'
  fields[#fields + 1] = lg_int(exp)
  redis.call('HSET', hash, unpack(fields))
  -- Both keys keep the last fence (and the deadlines that purge its
  -- holders) for the floor after the last lease.
  redis.call('PEXPIREAT', hash, lg_int(exp + LG_FLOOR_MS))
  redis.call('PEXPIREAT', set, lg_int(exp + LG_FLOOR_MS))
  return exp
end

-- Grants holder its hold of a shared lock (a reader, a permit) until
-- deadline and returns the acquire's reply {1, fence}: fields are what the
-- hash gains, its entry and the last fence for a new hold, nothing for the
-- hold it has already (a retried acquire, whose deadline only moves on).
-- read_acquire and semaphore_acquire grant alike.
local function lg_shared_hold(hash, set, holder, fence, fields, exp, deadline)
  redis.call('ZADD', set, lg_int(deadline), holder)
  lg_shared_write(hash, set, fields, exp, deadline)
  return { 1, fence }
end

-- Restarts the lease of one holder of a shared lock (a reader, a permit):
-- its deadline in the set, and the TTL of both keys if that reaches further.
-- Returns 1, or 0 when holder holds nothing (or its lease already ended).
local function lg_shared_renew(hash, set, prefix, holder, lease)
  local now_ms = lg_now()
  lg_shared_purge(hash, set, prefix, now_ms)
  local st = redis.call('HMGET', hash, prefix .. holder, 'exp')
  if not st[1] then return 0 end
  local deadline = now_ms + lease
  redis.call('ZADD', set, lg_int(deadline), holder)
  lg_shared_write(hash, set, {}, tonumber(st[2]) or 0, deadline)
  return 1
end

-- Records that a caller got busy, so the next release wakes waiters.
local function lg_mark_waiting(hash, set, wq, exp, now_ms)
  if not wq then lg_shared_write(hash, set, { 'wq', '1' }, exp, now_ms) end
end

-- The writer of a read/write lock: "<holder> <fence> <deadline>" in field
-- w; nil when absent or when its lease has ended (a dead writer blocks
-- nobody, even before its field is cleaned up).
local function lg_writer_decode(v, now_ms)
  if not v then return nil end
  local holder, fence, deadline = string.match(v, '^(%S+) (%d+) (%d+)$')
  if not holder or tonumber(deadline) <= now_ms then return nil end
  return { holder = holder, fence = tonumber(fence), deadline = tonumber(deadline) }
end

local function lg_writer_encode(w)
  return w.holder .. ' ' .. lg_int(w.fence) .. ' ' .. lg_int(w.deadline)
end

-- Ends the hash of a shared lock once nobody holds it: if a writer is still
-- waiting (ww in the future), keep only what blocks new readers until then;
-- otherwise retire it.
local function lg_shared_end(hash, fence, ww, now_ms)
  if ww and ww > now_ms then
    redis.call('HDEL', hash, 'wq', 'w')
    return
  end
  lg_retire_hash(hash, fence)
end

-- A latch (latch_* scripts) is one hash B: c = the count left, g = its
-- generation (the server clock in µs when it was set), s = the id of the
-- call that set it, p:<party> = 1 for each party that counted down (dropped
-- when the count reaches 0). Every latch script restarts B's TTL.

-- Reads a latch: count, generation, setter; nothing for an absent latch;
-- an error reply as the fourth value for a hash no latch script wrote.
local function lg_latch_read(key)
  local st = redis.call('HMGET', key, 'c', 'g', 's')
  if not st[1] and not st[2] and not st[3] then return nil end
  if not string.find(st[1] or '', '^%d+$') or not string.find(st[2] or '', '^%d+$') or not st[3] then
    return nil, nil, nil, lg_error('unexpected latch value')
  end
  return tonumber(st[1]), tonumber(st[2]), st[3]
end

-- Inspection and forced release (lockgen locks). The inspect scripts reply
-- { now_ms, last_fence, holders, waiters, claim }: holders is a flat list of
-- <id, side, fence, lease deadline ms>, waiters of <id, deadline ms> in the
-- order they are served, claim <writer, deadline ms> or empty. Times are
-- absolute server ms, so the caller sees what is left against now_ms.
-- Entries whose time has run out are left out: the other scripts treat them
-- as gone and drop them at their next call.

-- The members of a sorted set whose score lies after now_ms, as a flat list
-- of member, score (a number), lowest score first.
local function lg_live_scored(set, now_ms)
  local raw = redis.call('ZRANGEBYSCORE', set, '(' .. lg_int(now_ms), '+inf', 'WITHSCORES')
  for i = 2, #raw, 2 do raw[i] = tonumber(raw[i]) end
  return raw
end

-- A hash as a table of field -> value.
local function lg_hash_table(hash)
  local flat = redis.call('HGETALL', hash)
  local t = {}
  for i = 1, #flat, 2 do t[flat[i]] = flat[i + 1] end
  return t
end

-- The state of a string lock (mutex, fair): its holder, if any, as the
-- first reply fields.
local function lg_inspect_string(key, side, now_ms)
  local owner, fence, _, bad = lg_lock_decode(redis.call('GET', key))
  if bad then return nil, nil, bad end
  if not owner or owner == LG_TOMB then return {}, fence or 0 end
  local left = lg_lease_left(key)
  if left < 0 then return {}, fence end -- a lease that ended: only the floor
  return { owner, side, fence, now_ms + left }, fence
end

-- Appends to holders each live holder of a shared lock (its lease deadline in
-- set, its fence in the hash field prefix .. id), as side.
local function lg_inspect_shared(holders, fields, set, prefix, side, now_ms)
  local live = lg_live_scored(set, now_ms)
  for i = 1, #live, 2 do
    local fence = lg_hold_decode(fields[prefix .. live[i]])
    if fence then
      local n = #holders
      holders[n + 1], holders[n + 2], holders[n + 3], holders[n + 4] = live[i], side, fence, live[i + 1]
    end
  end
  return holders
end

-- Ends a string lock by force. Its tombstone keeps the last fence as long
-- as the lease the holder was granted would still have run (it may act on
-- its fence until its renewal is refused) and the floor after it (the key's
-- PTTL), at least the floor. It keeps the waiters flag too: the set may
-- still hold registrations, and an acquire that finds the flag clear does
-- not look there (mutex_acquire).
local function lg_force_tomb(key, fence, waiters)
  local keep = math.max(redis.call('PTTL', key), LG_FLOOR_MS)
  redis.call('SET', key, lg_lock_encode(LG_TOMB, fence, waiters), 'PX', lg_int(keep))
end

-- Removes every holder of a shared lock at once: the hash keeps the last
-- fence and keep (a flat name, value list) until exp, the latest lease it had.
local function lg_shared_clear(hash, set, keep, fence, exp, now_ms)
  redis.call('DEL', hash, set)
  keep[#keep + 1] = 'f'
  keep[#keep + 1] = fence
  lg_shared_write(hash, set, keep, exp, now_ms)
end
