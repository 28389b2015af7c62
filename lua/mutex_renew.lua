-- mutex_renew: restart the lease of a lock this holder holds.
--
-- KEYS[1] B, KEYS[2] B:waiters (unused), KEYS[3] B:wake (unused)
-- ARGV[1] holder id, ARGV[2] lease ms, ARGV[3] PUBLISH | SPUBLISH
--
-- Reply: 1 the lease now ends ARGV[2] ms from now; 0 not held by this holder
-- (nothing changed).
local holder, lease, _, err = lg_args(3, 3)
if err then return err end

local owner, _, _, bad = lg_lock_decode(redis.call('GET', KEYS[1]))
if bad then return bad end
-- A lease that ended is lost, even if nobody took the lock since: the
-- holder's runtime has given it up by its own clock, or will hear it now.
if owner ~= holder or lg_lease_left(KEYS[1]) < 0 then return 0 end

redis.call('PEXPIRE', KEYS[1], lg_lease_ttl(lease))
return 1
