-- semaphore_release: give back this holder's permit.
--
-- KEYS[1] B, KEYS[2] B:holds, KEYS[3] B:wake
-- ARGV[1] holder id, ARGV[2] lease ms (checked, unused), ARGV[3] PUBLISH | SPUBLISH
--
-- Reply: 1 released; 0 not held.
-- Wake: "n:<N>" when the permit comes back and someone got busy since the
-- semaphore was last empty; N counts this permit and those of holders whose
-- lease ran out, purged now.
local holds = KEYS[2]
local holder, _, pub, err = lg_args(3, 3)
if err then return err end

local now_ms = lg_now()
local purged = lg_shared_purge(KEYS[1], holds, 'h:', now_ms)
local st = redis.call('HMGET', KEYS[1], 'h:' .. holder, 'f', 'wq')
if not st[1] then return 0 end

redis.call('ZREM', holds, holder)
redis.call('HDEL', KEYS[1], 'h:' .. holder)
-- Waiters are not counted, so wq stays set (every release wakes one more)
-- until the semaphore is empty.
if st[3] then redis.call(pub, KEYS[3], 'n:' .. lg_int(purged + 1)) end
if redis.call('ZCARD', holds) == 0 then
  lg_retire_hash(KEYS[1], tonumber(st[2]))
end
return 1
