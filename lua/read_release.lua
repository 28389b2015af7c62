-- read_release: give back one read hold.
--
-- KEYS[1] B, KEYS[2] B:readers, KEYS[3] B:wake
-- ARGV[1] holder id, ARGV[2] lease ms (checked, unused), ARGV[3] PUBLISH | SPUBLISH
--
-- Reply: n >= 0 read holds this holder still has (0: released); -1 not held.
-- Wake: "all" when the last reader leaves a lock nobody writes and someone
-- got busy meanwhile.
local readers = KEYS[2]
local holder, _, pub, err = lg_args(3, 3)
if err then return err end

local now_ms, now_us = lg_now()
lg_shared_purge(KEYS[1], readers, 'r:', now_ms)
local st = redis.call('HMGET', KEYS[1], 'r:' .. holder, 'w', 'ww', 'f', 'wq')
local mine = lg_hold_decode(st[1])
if not mine then return -1 end

if mine.count > 1 then
  mine.count = mine.count - 1
  redis.call('HSET', KEYS[1], 'r:' .. holder, lg_hold_encode(mine))
  return mine.count
end

redis.call('ZREM', readers, holder)
redis.call('HDEL', KEYS[1], 'r:' .. holder)
if redis.call('ZCARD', readers) == 0 and not lg_writer_decode(st[2], now_ms) then
  if st[5] then redis.call(pub, KEYS[3], 'all') end
  lg_shared_end(KEYS[1], tonumber(st[4]), tonumber(st[3]), now_ms, now_us)
end
return 0
