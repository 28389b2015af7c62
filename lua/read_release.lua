-- read_release: give back this holder's read hold.
--
-- KEYS[1] B, KEYS[2] B:readers, KEYS[3] B:wake
-- ARGV[1] holder id, ARGV[2] lease ms (checked, unused), ARGV[3] PUBLISH | SPUBLISH
--
-- Reply: 1 released; 0 not held.
-- Wake: "all" when the last reader leaves a lock nobody writes and someone
-- got busy meanwhile.
local readers = KEYS[2]
local holder, _, pub, err = lg_args(3, 3)
if err then return err end

local now_ms = lg_now()
lg_shared_purge(KEYS[1], readers, 'r:', now_ms)
local st = redis.call('HMGET', KEYS[1], 'r:' .. holder, 'w', 'ww', 'f', 'wq')
if not st[1] then return 0 end

redis.call('ZREM', readers, holder)
redis.call('HDEL', KEYS[1], 'r:' .. holder)
if redis.call('ZCARD', readers) == 0 and not lg_writer_decode(st[2], now_ms) then
  if st[5] then redis.call(pub, KEYS[3], 'all') end
  lg_shared_end(KEYS[1], tonumber(st[4]), tonumber(st[3]), now_ms)
end
return 1
