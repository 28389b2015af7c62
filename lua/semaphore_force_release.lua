-- semaphore_force_release: take every permit of a semaphore back (an
-- operator's tool, lockgen locks release --force).
--
-- KEYS[1] B, KEYS[2] B:holds, KEYS[3] B:wake
-- ARGV[1] holder id of the caller (checked, unused), ARGV[2] lease ms
-- (checked, unused), ARGV[3] PUBLISH | SPUBLISH
--
-- B keeps the last fence until the latest lease it had would have ended
-- (lg_shared_clear), so every later grant gets a higher fence; each holder
-- learns at its next renewal (0: not held).
--
-- Reply: how many permits were taken back; 0 nothing changed.
-- Wake: "n:<N>" (N: the permits taken back) when someone got busy meanwhile.
local holds = KEYS[2]
local _, _, pub, err = lg_args(3, 3)
if err then return err end

local now_ms = lg_now()
local removed = redis.call('ZCOUNT', holds, '(' .. lg_int(now_ms), '+inf')
if removed == 0 then return 0 end

local st = redis.call('HMGET', KEYS[1], 'f', 'wq', 'exp')
lg_shared_clear(KEYS[1], holds, {}, st[1], tonumber(st[3]), now_ms)
if st[2] then redis.call(pub, KEYS[3], 'n:' .. lg_int(removed)) end
return removed
