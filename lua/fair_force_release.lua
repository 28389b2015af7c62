-- fair_force_release: take the fair lock from whoever holds it (an
-- operator's tool, lockgen locks release --force).
--
-- KEYS[1] B, KEYS[2] B:queue, KEYS[3] B:alive, KEYS[4] B:wake
-- ARGV[1] holder id of the caller (checked, unused), ARGV[2] lease ms
-- (checked, unused), ARGV[3] PUBLISH | SPUBLISH
--
-- The first live waiter gets the lock with a higher fence, as after a
-- release; with nobody waiting the lock becomes a tombstone with its fence
-- for as long as its lease would have run (lg_force_tomb). The holder
-- learns at its next renewal (0: not held).
--
-- Reply: 1 a holder was removed; 0 nobody held it (nothing changed).
-- Wake: "grant:<fence>:<head>" when the lock goes to the first live waiter.
local queue, alive = KEYS[2], KEYS[3]
local _, _, pub, err = lg_args(4, 3)
if err then return err end

local owner, fence, _, bad = lg_lock_decode(redis.call('GET', KEYS[1]))
if bad then return bad end
if lg_lock_free(KEYS[1], owner) then return 0 end

local now_ms = lg_now()
if lg_fair_grant_head(KEYS[1], queue, alive, fence, now_ms, pub, KEYS[4], nil) then return 1 end
lg_force_tomb(KEYS[1], fence, 0)
return 1
