-- mutex_leave: a waiter that was made the heir (a {2, wait_ms} reply from
-- mutex_acquire) gives up.
--
-- KEYS[1] B, KEYS[2] B:wake
-- ARGV[1] holder id, ARGV[2] lease ms (caps a reservation, as in
-- mutex_release), ARGV[3] PUBLISH | SPUBLISH
--
-- Reply: 1 no longer the heir; 0 was not the heir (any more); 2 had been
-- handed the lock and gives it back unused.
-- Wake: as mutex_release, when the lock is given back.
local holder, lease, pub, err = lg_args(2, 3)
if err then return err end

local owner, count, fence, waited, bad, heir, heir_until = lg_lock_decode(redis.call('GET', KEYS[1]))
if bad then return bad end

if owner == holder then
  -- Only a waiter calls this, so the lock is a grant it never used: every
  -- hold of it ends with the give-up.
  local now_ms, now_us = lg_now()
  lg_mutex_end(KEYS[1], KEYS[2], pub, fence, waited, heir, heir_until, lease, now_ms, now_us)
  return 2
end
if heir ~= holder then return 0 end
redis.call('SET', KEYS[1], lg_lock_encode(owner, count, fence, waited), 'KEEPTTL')
return 1
