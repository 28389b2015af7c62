-- fair_heartbeat: keep a waiter's place in the queue for another lease.
--
-- KEYS[1] B, KEYS[2] B:queue, KEYS[3] B:alive, KEYS[4] B:wake
-- ARGV[1] holder id, ARGV[2] lease ms (the place lives this long), ARGV[3]
-- PUBLISH | SPUBLISH
--
-- Reply: n >= 1  place kept; the lock's lease (whoever holds it now) ends
--                within n ms (at most the lease), when the next heartbeat
--                should look whether it ended without a release. If the
--                lock was free and that made the caller the head, it is
--                handed the lock at once, its lease counted from this
--                heartbeat.
--        0       not queued: evicted or never there (acquire again), or
--                handed the lock already (its next acquire finds the lock
--                its own).
-- Wake: "grant:<fence>:<head>" when the lock is free while someone waits
-- (possibly the caller, whose waiting goroutine must hear it).
local queue, alive = KEYS[2], KEYS[3]
local holder, lease, pub, err = lg_args(4, 3)
if err then return err end

-- The common case, a waiter behind a holder whose lease runs: one PTTL
-- says so, without the GET that only a free lock needs, and the place is
-- kept with ZSCORE, TIME, ZADD and the sets' TTLs.
local left = lg_lease_left(KEYS[1])
if left >= 0 then
  local deadline = redis.call('ZSCORE', alive, holder)
  if not deadline then return 0 end
  local now_ms = lg_now()
  if deadline + 0 <= now_ms then
    -- The place ran out before this heartbeat came: it is gone, as it
    -- would have been had anyone looked for it earlier.
    redis.call('ZREM', queue, holder)
    redis.call('ZREM', alive, holder)
    return 0
  end
  lg_fair_keep_alive(queue, alive, holder, now_ms + lease, false)
  return lg_wait(left, lease)
end

-- Free (absent, a tombstone, a lease that ended, or a damaged key): keep
-- the place as above, then hand the lock to the first live waiter.
local owner, fence, _, bad = lg_lock_decode(redis.call('GET', KEYS[1]))
if bad then return bad end
local now_ms = lg_now()
local kept, deadline = false, redis.call('ZSCORE', alive, holder)
if deadline and deadline + 0 > now_ms then
  lg_fair_keep_alive(queue, alive, holder, now_ms + lease, false)
  kept = true
elseif deadline then
  redis.call('ZREM', queue, holder)
  redis.call('ZREM', alive, holder)
end
if lg_lock_free(KEYS[1], owner) then
  lg_fair_grant_head(KEYS[1], queue, alive, fence, now_ms, pub, KEYS[4], nil)
end
if not kept then return 0 end
-- Whoever was handed the lock (the caller included) holds it for at most
-- a lease; an owner whose key has no TTL counts as a lease that ended.
return lg_wait(lg_lease_left(KEYS[1]), lease)
