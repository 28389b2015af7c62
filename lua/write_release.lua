-- write_release: give back one write hold.
--
-- KEYS[1] B, KEYS[2] B:readers, KEYS[3] B:wake
-- ARGV[1] holder id, ARGV[2] lease ms (checked, unused), ARGV[3] PUBLISH | SPUBLISH
--
-- Reply: n >= 0 write holds this holder still has (0: released; a read hold
-- it took stays); -1 not held.
-- Wake: "all" when the last write hold goes and someone got busy meanwhile.
local readers = KEYS[2]
local holder, _, pub, err = lg_args(3, 3)
if err then return err end

local now_ms, now_us = lg_now()
lg_shared_purge(KEYS[1], readers, 'r:', now_ms)
local st = redis.call('HMGET', KEYS[1], 'w', 'ww', 'f', 'wq')
local writer = lg_writer_decode(st[1], now_ms)
if not writer or writer.holder ~= holder then return -1 end

if writer.count > 1 then
  writer.count = writer.count - 1
  redis.call('HSET', KEYS[1], 'w', lg_writer_encode(writer))
  return writer.count
end

redis.call('HDEL', KEYS[1], 'w')
if st[4] then
  redis.call(pub, KEYS[3], 'all')
  redis.call('HDEL', KEYS[1], 'wq')
end
if redis.call('ZCARD', readers) == 0 then
  lg_shared_end(KEYS[1], tonumber(st[3]), tonumber(st[2]), now_ms, now_us)
end
return 0
