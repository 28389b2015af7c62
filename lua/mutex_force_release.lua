-- mutex_force_release: take the lock from whoever holds it (an operator's
-- tool, lockgen locks release --force).
--
-- KEYS[1] B, KEYS[2] B:waiters, KEYS[3] B:wake
-- ARGV[1] holder id of the caller (checked, unused), ARGV[2] lease ms
-- (checked, unused), ARGV[3] PUBLISH | SPUBLISH
--
-- The lock becomes a tombstone with its fence for as long as its lease
-- would have run (lg_force_tomb), so every later grant gets a higher fence;
-- the holder learns at its next renewal (0: not held). Registrations stay,
-- and so does the waiters flag that says so: the waiters find the lock free
-- at their next attempt.
--
-- Reply: 1 a holder was removed; 0 nobody held it (nothing changed).
-- Wake: "all" when someone registered while it was held.
local _, _, pub, err = lg_args(3, 3)
if err then return err end

local owner, fence, waiters, bad = lg_lock_decode(redis.call('GET', KEYS[1]))
if bad then return bad end
if lg_lock_free(KEYS[1], owner) then return 0 end

lg_force_tomb(KEYS[1], fence, waiters)
if waiters == 1 then redis.call(pub, KEYS[3], 'all') end
return 1
