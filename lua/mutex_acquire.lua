-- mutex_acquire: take the exclusive lock, register as a waiter it can be
-- offered to, or claim an offer.
--
-- KEYS[1] B          the lock: string "<holder> <fence> <waiters>", PX lease
--                    + the fence floor (LG_FLOOR_MS); waiters is "+" while
--                    B:waiters may hold registrations, "-" when it holds none
-- KEYS[2] B:waiters  zset waiter -> the fence under which it registered,
--                    minus LG_SCORE_BASE (the prelude says why)
--                    (registrations made while one holder holds the lock
--                    queue behind those made under earlier holders); no
--                    deadlines: a registration lives until a release offers
--                    the lock to it, its waiter withdraws, or the set's TTL
--                    (2 x the registering lease + the floor) runs out
-- KEYS[3] B:wake     wake channel
-- ARGV[1] holder id, ARGV[2] lease ms, ARGV[3] PUBLISH | SPUBLISH
-- ARGV[4] 0 for a caller that tries once (registers nothing); any other
--         integer ms (0..2^31, the old registration window) registers.
-- ARGV[5] (optional) the holder id of the next waiter of the caller's
--         process: registered when this call takes the lock (or claims
--         it), so that it waits without a call of its own.
--
-- Idempotent: a lock this holder already has is the same grant seen again
-- (a retried call, or the claim of an offer a release made to it, even one
-- whose short offer lease ran out while nobody else took the lock): the
-- lease restarts, nothing else changes. A claim of a lock with waiters
-- publishes "taken:<fence>", so that the processes that saw the offer stop
-- waiting for it to lapse. Re-entry is the runtime's business.
--
-- Reply: fence      acquired (an integer: cheaper for Redis than a table)
--        {0, wait_ms, holder[, left_ms]}
--                   held by holder (for the caller's errors; left_ms, its
--                   lease left, only without registration). wait_ms is what
--                   is left of the holder's lease, at most the caller's
--                   lease: the caller tries again then unless a message
--                   comes first (an offer to it, "all", or an offer to
--                   another that lapses).
--
-- This is the hot path of every lock, so it is written out whole, with no
-- prelude helper: each helper a script carries is a closure made on every
-- call (lua/doc.go, "Cost"). The checks are those of lg_args, the value
-- those of lg_lock_decode and lg_lock_encode.
if #KEYS < 3 then return redis.error_reply('ERR lockgen: want 3 KEYS, got ' .. #KEYS) end
if #ARGV < 4 then return redis.error_reply('ERR lockgen: want 4 ARGV, got ' .. #ARGV) end
local holder, lease, window, after = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[4]), ARGV[5]
if #holder == 0 or #holder > 64 or string.find(holder, ' ', 1, true) or holder == LG_TOMB then
  return redis.error_reply('ERR lockgen: holder id must be 1..64 bytes without a space, and not "!"')
end
if not lease or lease < 1 or lease > 2147483648 or lease % 1 ~= 0 then
  return redis.error_reply('ERR lockgen: lease must be an integer number of ms in 1..2^31')
end
if ARGV[3] ~= 'PUBLISH' and ARGV[3] ~= 'SPUBLISH' then
  return redis.error_reply('ERR lockgen: publish command must be PUBLISH or SPUBLISH')
end
-- 0 only spelt "0": tonumber also reads "-0" or "0.0" as 0.
if not window or window % 1 ~= 0 or window > 2147483648 or window < 1 and ARGV[4] ~= '0' then
  return redis.error_reply('ERR lockgen: registration window must be an integer number of ms in 0..2^31')
end
if after and (#after == 0 or #after > 64 or string.find(after, ' ', 1, true) or after == LG_TOMB or after == holder) then
  return redis.error_reply('ERR lockgen: next waiter must be a holder id other than the caller\'s')
end

-- fence and waiters stay the strings they were written as until a grant
-- needs the next fence: no conversion on the paths that only copy them.
local value = redis.call('GET', KEYS[1])
local owner, fence, waiters
if value then
  if string.byte(value) == 33 and string.byte(value, 2) == 32 then
    -- A tombstone, the usual free lock: a shorter pattern to check.
    owner = LG_TOMB
    fence, waiters = string.match(value, '^! (%d+) ([-+])$')
  else
    owner, fence, waiters = string.match(value, '^(%S+) (%d+) ([-+])$')
  end
  if not fence then
    if string.find(value, ' [01]$') then return redis.error_reply(LG_PROTOCOL_ERR) end
    return redis.error_reply('ERR lockgen: unexpected lock value')
  end
end

if owner == holder then
  redis.call('PEXPIRE', KEYS[1], lease + LG_FLOOR_MS)
  if after then
    redis.call('ZADD', KEYS[2], 'NX', string.format('%d', fence - LG_SCORE_BASE), after)
    redis.call('PEXPIRE', KEYS[2], 2 * lease + LG_FLOOR_MS)
    if waiters == '-' then
      waiters = '+'
      redis.call('SET', KEYS[1], holder .. ' ' .. fence .. ' +', 'KEEPTTL')
    end
  end
  if waiters == '+' then redis.call(ARGV[3], KEYS[3], 'taken:' .. fence) end
  return fence + 0
end

-- Held by someone else, unless its lease has ended: then its key is only
-- the fence floor (PTTL at most LG_FLOOR_MS). A waiter already registered
-- costs ZADD NX and nothing more; a new one sets the set's TTL (2 leases
-- and the floor from the newest member: an older one may go with the set,
-- and then costs its place, not the lock) and the flag.
if owner and owner ~= LG_TOMB then
  local left = redis.call('PTTL', KEYS[1]) - LG_FLOOR_MS
  if left >= 0 then
    local wait = math.max(math.min(left, lease), 1)
    if window == 0 then return { 0, wait, owner, left } end
    if redis.call('ZADD', KEYS[2], 'NX', string.format('%d', fence - LG_SCORE_BASE), holder) == 1 then
      redis.call('PEXPIRE', KEYS[2], 2 * lease + LG_FLOOR_MS)
      if waiters == '-' then
        redis.call('SET', KEYS[1], owner .. ' ' .. fence .. ' +', 'KEEPTTL')
      end
    end
    return { 0, wait, owner }
  end
end

-- Free: absent, or only a tombstone remembering the last fence (left by a
-- release, by a lease that ended, or by an offer that lapsed). The usual
-- free lock, a tombstone whose waiters flag is clear, costs GET and SET
-- only. Otherwise the set may hold registrations (a key that expired took
-- its flag along, so it may too): the caller's own, which must not outlive
-- this grant (a release would offer the lock to a caller that holds it
-- already), goes, and the flag says whether others are left for the
-- release to offer it to.
if not owner then waiters = redis.call('ZCARD', KEYS[2]) > 0 and '+' or '-' end
if waiters == '+' then
  redis.call('ZREM', KEYS[2], holder)
  waiters = redis.call('ZCARD', KEYS[2]) > 0 and '+' or '-'
end
-- One more than the last fence; a key that remembers none starts from the
-- server clock in µs (lg_next_fence says why both stay increasing).
if fence then
  fence = string.format('%d', fence + 1)
else
  local t = redis.call('TIME')
  fence = string.format('%d', t[1] * 1000000 + t[2])
end
if after then
  redis.call('ZADD', KEYS[2], 'NX', string.format('%d', fence - LG_SCORE_BASE), after)
  redis.call('PEXPIRE', KEYS[2], 2 * lease + LG_FLOOR_MS)
  waiters = '+'
end
redis.call('SET', KEYS[1], holder .. ' ' .. fence .. ' ' .. waiters, 'PX', lease + LG_FLOOR_MS)
return fence + 0
