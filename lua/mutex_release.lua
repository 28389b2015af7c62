-- mutex_release: give back one hold of the lock.
--
-- KEYS[1] B, KEYS[2] B:wake
-- ARGV[1] holder id, ARGV[2] lease ms (caps the reservation below),
-- ARGV[3] PUBLISH | SPUBLISH
--
-- Reply: n >= 0 holds this holder still has (0: released); -1 not held.
-- Wake: "n:1" on B:wake when the last hold goes and someone got busy while
-- the lock was held; nothing otherwise.
--
-- When someone waited, the lock is not deleted but reserved for the waiters
-- for min(lease, 10) ms (longer if the fence tombstone must live longer):
-- B becomes "! 0 <fence> 1", which mutex_acquire grants only to a caller
-- that says it waited. Without it the releaser coming straight back, or any
-- newcomer, would take the lock in the round trip the woken waiter needs to
-- get here, and most grants under contention went out of arrival order.
-- 10 ms covers that trip on any sane network; if no waiter comes (it gave
-- up), the lock is free again after that.
local reservation_ms = 10

local holder, lease, pub, err = lg_args(2, 3)
if err then return err end

local owner, count, fence, waited, bad = lg_lock_decode(redis.call('GET', KEYS[1]))
if bad then return bad end
if owner ~= holder then return -1 end

if count > 1 then
  redis.call('SET', KEYS[1], lg_lock_encode(holder, count - 1, fence, waited), 'KEEPTTL')
  return count - 1
end

local _, now_us = lg_now()
if waited == 1 then
  lg_retire_string(KEYS[1], fence, now_us, math.min(lease, reservation_ms))
  redis.call(pub, KEYS[2], 'n:1')
else
  lg_retire_string(KEYS[1], fence, now_us)
end
return 0
