-- mutex_floor: restart the lease of a lock this holder holds and raise its
-- fence to at least a floor. The quorum Locker runs it on every server of
-- a majority that granted a lock, with the highest fence among their
-- grants, and as its renewal: since any later majority shares a server
-- with this one, and that server's next grant takes a fence above the
-- floor, fences keep rising across holders even when the servers' clocks
-- disagree.
--
-- KEYS[1] B, KEYS[2] B:waiters (unused), KEYS[3] B:wake (unused)
-- ARGV[1] holder id, ARGV[2] lease ms, ARGV[3] PUBLISH | SPUBLISH
-- ARGV[4] fence floor: a positive integer of at most 16 digits, no more
--         than 2^31 ms ahead of the server clock (in µs, as fences are)
--
-- The lease is the caller's as for mutex_renew (a lease that ended is
-- lost); the key keeps the raised fence for the fence floor after it, so a
-- holder that vanishes leaves the floor behind, as a release does with a
-- tombstone.
--
-- Reply: the lock's fence now, max(its fence, floor); 0 not held by this
-- holder (nothing changed).
local holder, lease, _, err = lg_args(3, 4)
if err then return err end
local floor = ARGV[4]
if #floor > 16 or not string.find(floor, '^[1-9]%d*$') then
  return lg_error('fence floor must be a positive integer of at most 16 digits')
end
floor = tonumber(floor)

local owner, fence, waiters, bad = lg_lock_decode(redis.call('GET', KEYS[1]))
if bad then return bad end
-- A lease that ended is lost (as in mutex_renew).
if owner ~= holder or lg_lease_left(KEYS[1]) < 0 then return 0 end

local _, now_us = lg_now()
if floor - now_us > 2147483648000 then
  return lg_error('fence floor more than 2^31 ms ahead of the server clock')
end
-- The key outlives the lease by the fence floor (LG_FLOOR_MS), which
-- keeps the raised fence after the lease ends: tokens keep rising while
-- the servers' clocks disagree by less than the floor.
if floor > fence then
  fence = floor
  redis.call('SET', KEYS[1], lg_lock_encode(owner, fence, waiters), 'PX', lg_lease_ttl(lease))
else
  redis.call('PEXPIRE', KEYS[1], lg_lease_ttl(lease))
end
return fence
