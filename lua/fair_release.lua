-- fair_release: give back one hold of the fair lock; the last one hands the
-- lock to the first live waiter.
--
-- KEYS[1] B, KEYS[2] B:queue, KEYS[3] B:alive, KEYS[4] B:wake
-- ARGV[1] holder id, ARGV[2] lease ms (checked, unused), ARGV[3] PUBLISH | SPUBLISH
--
-- Reply: n >= 0 holds this holder still has (0: released); -1 not held.
-- Wake: "grant:<fence>:<head>" when the lock goes to the first live waiter
-- (lg_fair_hand_over): on the last release, or, when not held, if the lock
-- is free while someone waits.
local queue, alive = KEYS[2], KEYS[3]
local holder, _, pub, err = lg_args(4, 3)
if err then return err end

local owner, count, fence, waited, bad = lg_lock_decode(redis.call('GET', KEYS[1]))
if bad then return bad end
local now_ms, now_us = lg_now()
local old_head = lg_fair_first(queue)
if old_head then lg_fair_evict(queue, alive, now_ms) end

if owner ~= holder then
  if old_head and (not owner or owner == LG_TOMB) then
    lg_fair_grant_head(KEYS[1], queue, alive, fence, now_ms, now_us, pub, KEYS[4])
  end
  return -1
end

if count > 1 then
  redis.call('SET', KEYS[1], lg_lock_encode(holder, count - 1, fence, waited), 'KEEPTTL')
  return count - 1
end

if not (old_head and lg_fair_grant_head(KEYS[1], queue, alive, fence, now_ms, now_us, pub, KEYS[4])) then
  lg_retire_string(KEYS[1], fence, now_us)
end
return 0
