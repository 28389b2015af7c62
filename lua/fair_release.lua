-- fair_release: give the fair lock back (the first live waiter gets it), or
-- leave the queue. Also the clean-up after an acquire whose outcome is
-- unknown, and what a waiter that gives up calls: whatever the holder id
-- may have taken or queued is given back.
--
-- KEYS[1] B, KEYS[2] B:queue, KEYS[3] B:alive, KEYS[4] B:wake
-- ARGV[1] holder id, ARGV[2] lease ms (checked, unused), ARGV[3] PUBLISH | SPUBLISH
--
-- Reply: 1 released (the lock was the caller's: held, or handed to it
-- before it heard); 0 not held by this holder (its place in the queue, if
-- any, is gone).
-- Wake: "grant:<fence>:<head>" when the lock goes to the first live waiter
-- (lg_fair_hand_over), or, when not held, if the lock is free while someone
-- waits.
local queue, alive = KEYS[2], KEYS[3]
local holder, _, pub, err = lg_args(4, 3)
if err then return err end

local owner, fence, _, bad = lg_lock_decode(redis.call('GET', KEYS[1]))
if bad then return bad end
local now_ms, now_us = lg_now()

if owner ~= holder then
  local old_head = lg_fair_first(queue)
  if old_head then
    -- The head as read, if nobody was evicted (then it need not be read again).
    local head = lg_fair_evict(queue, alive, now_ms, old_head)
    redis.call('ZREM', queue, holder)
    redis.call('ZREM', alive, holder)
    if head == holder then head = nil end
    if lg_lock_free(KEYS[1], owner) then
      lg_fair_grant_head(KEYS[1], queue, alive, fence, now_ms, now_us, pub, KEYS[4], head)
    end
  end
  return 0
end

-- The caller's lock goes to the first live waiter. The head leaves the
-- queue as it is read (granted, or dropped as dead), which saves a ZREM.
local first = redis.call('ZPOPMIN', queue)[1]
if first then
  lg_fair_evict(queue, alive, now_ms)
  if lg_fair_grant_popped(KEYS[1], alive, first, fence, now_ms, now_us, pub, KEYS[4])
      or lg_fair_grant_head(KEYS[1], queue, alive, fence, now_ms, now_us, pub, KEYS[4], nil) then
    return 1
  end
end
lg_retire_string(KEYS[1], fence)
return 1
