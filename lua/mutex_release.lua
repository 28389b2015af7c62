-- mutex_release: give back one hold of the lock.
--
-- KEYS[1] B, KEYS[2] B:wake
-- ARGV[1] holder id, ARGV[2] lease ms (checked, unused), ARGV[3] PUBLISH | SPUBLISH
--
-- Reply: n >= 0 holds this holder still has (0: released); -1 not held.
-- Wake: "n:1" on B:wake when the last hold goes and someone got busy while
-- the lock was held; nothing otherwise.
local holder, _, pub, err = lg_args(2, 3)
if err then return err end

local owner, count, fence, waited, bad = lg_lock_decode(redis.call('GET', KEYS[1]))
if bad then return bad end
if owner ~= holder then return -1 end

if count > 1 then
  redis.call('SET', KEYS[1], lg_lock_encode(holder, count - 1, fence, waited), 'KEEPTTL')
  return count - 1
end

local _, now_us = lg_now()
lg_retire_string(KEYS[1], fence, now_us)
if waited == 1 then
  redis.call(pub, KEYS[2], 'n:1')
end
return 0
