-- mutex_release: give back one hold of the lock.
--
-- KEYS[1] B, KEYS[2] B:wake
-- ARGV[1] holder id, ARGV[2] lease ms (caps the reservation of lg_mutex_end),
-- ARGV[3] PUBLISH | SPUBLISH
--
-- Reply: n >= 0 holds this holder still has (0: released); -1 not held.
-- Wake, when the last hold goes (lg_mutex_end): "grant:<fence>:<heir>" when
-- the lock is handed to its heir; else "n:1" when someone got busy while
-- the lock was held; nothing otherwise.
local holder, lease, pub, err = lg_args(2, 3)
if err then return err end

local owner, count, fence, waited, bad, heir, heir_until = lg_lock_decode(redis.call('GET', KEYS[1]))
if bad then return bad end
if owner ~= holder then return -1 end

if count > 1 then
  redis.call('SET', KEYS[1], lg_lock_encode(holder, count - 1, fence, waited, heir, heir_until), 'KEEPTTL')
  return count - 1
end

local now_ms, now_us = lg_now()
lg_mutex_end(KEYS[1], KEYS[2], pub, fence, waited, heir, heir_until, lease, now_ms, now_us)
return 0
