-- mutex_acquire: take the exclusive lock, or register as a waiter it can be
-- handed to.
--
-- KEYS[1] B          the lock: string "<holder> <fence> <waiters>", PX lease
--                    + the fence floor (LG_FLOOR_MS); waiters is 1 while
--                    B:waiters may hold registrations, 0 when it holds none
-- KEYS[2] B:waiters  zset waiter -> deadline of its registration (server ms);
--                    its TTL reaches the latest deadline
-- KEYS[3] B:wake     wake channel (only mutex_release publishes)
-- ARGV[1] holder id, ARGV[2] lease ms, ARGV[3] PUBLISH | SPUBLISH (unused)
-- ARGV[4] registration window ms (0..2^31): how long a busy reply keeps the
--         caller registered; 0 registers nothing (a caller that tries once).
--
-- Idempotent: a lock this holder already has is the same grant seen again
-- (a retried call, or a hand-over whose message the caller missed): the
-- lease restarts, nothing else changes. Re-entry is the runtime's business.
--
-- Reply: fence      acquired (an integer: cheaper for Redis than a table)
--        {0, wait_ms, holder[, left_ms]}
--                   held by holder (for the caller's errors; left_ms, its
--                   PTTL, only without a window). With a window, the caller
--                   is registered until ARGV[4] ms from now (a release hands
--                   the lock to a live registered waiter,
--                   "grant:<fence>:<holder>"), and wait_ms is the window:
--                   it must try again (renewing its registration, or
--                   taking a lock that expired) before then. Without, it
--                   is what is left of the lock's lease, at most the
--                   caller's lease.
--
-- This is the hot path of every lock, so it is written out whole, with no
-- prelude helper: each helper a script carries is a closure made on every
-- call (lua/doc.go, "Cost"). The checks are those of lg_args, the value
-- those of lg_lock_decode and lg_lock_encode.
if #KEYS < 3 then return redis.error_reply('ERR lockgen: want 3 KEYS, got ' .. #KEYS) end
if #ARGV < 4 then return redis.error_reply('ERR lockgen: want 4 ARGV, got ' .. #ARGV) end
local holder, lease, window = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[4])
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

-- fence and waiters stay the strings they were written as until a grant
-- needs the next fence: no conversion on the paths that only copy them.
local value = redis.call('GET', KEYS[1])
local owner, fence, waiters
if value then
  if string.byte(value) == 33 and string.byte(value, 2) == 32 then
    -- A tombstone, the usual free lock: a shorter pattern to check.
    owner = LG_TOMB
    fence, waiters = string.match(value, '^! (%d+) ([01])$')
  else
    owner, fence, waiters = string.match(value, '^(%S+) (%d+) ([01])$')
  end
  if not fence then return redis.error_reply('ERR lockgen: unexpected lock value') end
end

if owner == holder then
  redis.call('PEXPIRE', KEYS[1], lease + LG_FLOOR_MS)
  return fence + 0
end

-- Held by someone else, unless its lease has ended: then its key is only
-- the fence floor (PTTL at most LG_FLOOR_MS). A caller registering for the
-- first time does not ask (PTTL) and is told to come back; its next attempt
-- renews the registration, and that asks. So a lease that ended without a
-- release costs a newcomer one attempt more, and the registrations of a hot
-- lock, all new, cost no PTTL.
if owner and owner ~= LG_TOMB then
  if window == 0 then
    local left = redis.call('PTTL', KEYS[1]) - LG_FLOOR_MS
    if left >= 0 then return { 0, math.max(math.min(left, lease), 1), owner, left } end
  else
    local t = redis.call('TIME')
    local now_ms = t[1] * 1000 + math.floor(t[2] / 1000)
    local new = redis.call('ZADD', KEYS[2], now_ms + window, holder) == 1
    if new or redis.call('PTTL', KEYS[1]) >= LG_FLOOR_MS then
      -- The set lives as long as the newest registration. A shorter
      -- window (a setting of each caller's Locker) may cut an older,
      -- longer one short: the release then finds none live and wakes
      -- everyone instead.
      redis.call('PEXPIRE', KEYS[2], window)
      if waiters == '0' then
        redis.call('SET', KEYS[1], owner .. ' ' .. fence .. ' 1', 'KEEPTTL')
      end
      return { 0, math.max(math.min(window, lease), 1), owner }
    end
  end
end

-- Free: absent, or only a tombstone remembering the last fence (left by a
-- release, or by a lease that ended). The usual free lock, a tombstone
-- whose waiters flag is clear, costs GET and SET only. Otherwise the set
-- may hold registrations (a key that expired took its flag along, so it
-- may too): the caller's own, which must not outlive this grant (a release
-- would hand the lock to a caller that holds it already), goes, and the
-- flag says whether others are left for the release to look at.
if not owner then waiters = redis.call('ZCARD', KEYS[2]) > 0 and '1' or '0' end
if waiters == '1' then
  redis.call('ZREM', KEYS[2], holder)
  waiters = redis.call('ZCARD', KEYS[2]) > 0 and '1' or '0'
end
-- One more than the last fence; a key that remembers none starts from the
-- server clock in µs (lg_next_fence says why both stay increasing).
if fence then
  fence = fence + 1
else
  local t = redis.call('TIME')
  fence = t[1] * 1000000 + t[2]
end
redis.call('SET', KEYS[1], holder .. ' ' .. string.format('%d', fence) .. ' ' .. waiters,
  'PX', lease + LG_FLOOR_MS)
return fence
