-- mutex_acquire: take the exclusive lock, or register as a waiter it can be
-- handed to.
--
-- KEYS[1] B          the lock: string "<holder> <fence> <waiters>", PX lease
--                    + the fence floor (lg_lease_ttl); waiters is 1 while
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
local holder, lease, _, err = lg_args(3, 4)
if err then return err end
local window = lg_count(ARGV[4], 2147483648)
if not window then return lg_error('registration window must be an integer number of ms in 0..2^31') end

local owner, fence, waiters, bad = lg_lock_decode(redis.call('GET', KEYS[1]))
if bad then return bad end

if owner == holder then
  redis.call('PEXPIRE', KEYS[1], lg_lease_ttl(lease))
  return fence
end

-- Held by someone else, unless its lease has ended: then its key is only
-- the fence floor. A caller registering for the first time does not ask
-- (PTTL) and is told to come back; its next attempt renews the
-- registration, and that asks. So a lease that ended without a release
-- costs a newcomer one attempt more, and the registrations of a hot lock,
-- all new, cost no PTTL.
if owner and owner ~= LG_TOMB then
  if window == 0 then
    local left = lg_lease_left(KEYS[1])
    if left >= 0 then return { 0, lg_wait(left, lease), owner, left } end
  else
    local now_ms = lg_now()
    local new = redis.call('ZADD', KEYS[2], lg_int(now_ms + window), holder) == 1
    if new or lg_lease_left(KEYS[1]) >= 0 then
      -- The set lives as long as the newest registration. A shorter
      -- window (a setting of each caller's Locker) may cut an older,
      -- longer one short: the release then finds none live and wakes
      -- everyone instead.
      redis.call('PEXPIRE', KEYS[2], window)
      if waiters == 0 then
        redis.call('SET', KEYS[1], lg_lock_encode(owner, fence, 1), 'KEEPTTL')
      end
      return { 0, lg_wait(window, lease), owner }
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
if not owner then waiters = redis.call('ZCARD', KEYS[2]) > 0 and 1 or 0 end
if waiters == 1 then
  redis.call('ZREM', KEYS[2], holder)
  waiters = redis.call('ZCARD', KEYS[2]) > 0 and 1 or 0
end
fence = lg_next_fence(fence)
redis.call('SET', KEYS[1], lg_lock_encode(holder, fence, waiters), 'PX', lg_lease_ttl(lease))
return fence
