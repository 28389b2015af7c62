-- fair_release: give back one hold of the fair lock; the last one hands the
-- turn to the first live waiter.
--
-- KEYS[1] B, KEYS[2] B:queue, KEYS[3] B:alive, KEYS[4] B:wake
-- ARGV[1] holder id, ARGV[2] lease ms (checked, unused), ARGV[3] PUBLISH | SPUBLISH
--
-- Reply: n >= 0 holds this holder still has (0: released); -1 not held.
-- Wake: "id:<head>" to the first live waiter when the lock becomes free (or,
-- when not held, if evicting dead waiters made a new head of a free lock).
local queue, alive = KEYS[2], KEYS[3]
local holder, _, pub, err = lg_args(4, 3)
if err then return err end

local owner, count, fence, waited, bad = lg_lock_decode(redis.call('GET', KEYS[1]))
if bad then return bad end
local now_ms, now_us = lg_now()
local old_head = lg_fair_first(queue)
if old_head then lg_fair_evict(queue, alive, now_ms) end

if owner ~= holder then
  if not owner or owner == LG_TOMB then
    lg_fair_wake_new_head(queue, alive, old_head, nil, pub, KEYS[4])
  end
  return -1
end

if count > 1 then
  redis.call('SET', KEYS[1], lg_lock_encode(holder, count - 1, fence, waited), 'KEEPTTL')
  return count - 1
end

lg_retire_string(KEYS[1], fence, now_us)
if old_head then
  local head = lg_fair_live_head(queue, alive)
  if head then redis.call(pub, KEYS[4], 'id:' .. head) end
end
return 0
