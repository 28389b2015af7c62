-- fair_heartbeat: keep a waiter's place in the queue for another lease.
--
-- KEYS[1] B, KEYS[2] B:queue, KEYS[3] B:alive, KEYS[4] B:wake
-- ARGV[1] holder id, ARGV[2] lease ms (the place lives this long), ARGV[3]
-- PUBLISH | SPUBLISH
--
-- Reply: 1 place kept (if that makes the caller the head of a free lock, it
-- is handed the lock at once, its lease counted from this heartbeat); 0 not
-- queued: evicted or never there (acquire again), or handed the lock
-- already (its next acquire finds the lock its own).
-- Wake: "grant:<fence>:<head>" when the lock is free while someone waits
-- (possibly the caller, whose waiting goroutine must hear it).
local queue, alive = KEYS[2], KEYS[3]
local holder, lease, pub, err = lg_args(4, 3)
if err then return err end

local owner, fence, _, bad = lg_lock_decode(redis.call('GET', KEYS[1]))
if bad then return bad end

-- alive holds the same waiters as the queue (a member of either alone is
-- damage, and goes when it comes first in line).
local kept, deadline = 0, redis.call('ZSCORE', alive, holder)
local now_ms
if deadline then
  now_ms = lg_now()
  if deadline + 0 > now_ms then
    lg_fair_keep_alive(queue, alive, holder, now_ms + lease, false)
    kept = 1
  else
    -- The place ran out before this heartbeat came: it is gone, as it
    -- would have been had anyone looked for it earlier.
    redis.call('ZREM', queue, holder)
    redis.call('ZREM', alive, holder)
  end
end
if lg_lock_free(KEYS[1], owner) then
  if not now_ms then now_ms = lg_now() end
  lg_fair_grant_head(KEYS[1], queue, alive, fence, now_ms, pub, KEYS[4], nil)
end
return kept
