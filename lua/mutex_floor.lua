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
-- The lock then lives for the lease, or until the server clock has passed
-- its fence if that is later: a holder that vanishes leaves the floor
-- behind, as a release does with a tombstone.
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
if owner ~= holder then return 0 end

local _, now_us = lg_now()
if floor - now_us > 2147483648000 then
  return lg_error('fence floor more than 2^31 ms ahead of the server clock')
end
local raise = floor > fence
if raise then fence = floor end
local ttl = lg_tomb_ms(fence, now_us)
if ttl < lease then ttl = lease end
if raise then
  redis.call('SET', KEYS[1], lg_lock_encode(owner, fence, waiters), 'PX', lg_int(ttl))
else
  redis.call('PEXPIRE', KEYS[1], lg_int(ttl))
end
return fence
