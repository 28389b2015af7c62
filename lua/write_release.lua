-- write_release: give back this holder's write hold, or withdraw its claim
-- that holds new readers back (a writer that gave up waiting). Also the
-- clean-up after an acquire whose outcome is unknown.
--
-- KEYS[1] B, KEYS[2] B:readers, KEYS[3] B:wake
-- ARGV[1] holder id, ARGV[2] lease ms (checked, unused), ARGV[3] PUBLISH | SPUBLISH
--
-- Reply: 1 released (a read hold the writer took stays); 0 not the writer
-- (its claim, if any, is withdrawn; another writer's claim stays).
-- Wake: "all" when the write hold or the claim goes, no writer holds the
-- lock and someone got busy meanwhile.
local readers = KEYS[2]
local holder, _, pub, err = lg_args(3, 3)
if err then return err end

local now_ms = lg_now()
lg_shared_purge(KEYS[1], readers, 'r:', now_ms)
local st = redis.call('HMGET', KEYS[1], 'w', 'ww', 'f', 'wq', 'wwh')
local writer = lg_writer_decode(st[1], now_ms)
local mine = writer and writer.holder == holder
if not mine then
  if st[5] ~= holder then return 0 end
  -- A writer that gave up. While another writer holds the lock the readers
  -- stay blocked; its release wakes them.
  redis.call('HDEL', KEYS[1], 'ww', 'wwh')
  if writer then return 0 end
  st[2] = nil
end

if mine then redis.call('HDEL', KEYS[1], 'w') end
if st[4] then
  redis.call(pub, KEYS[3], 'all')
  redis.call('HDEL', KEYS[1], 'wq')
end
if redis.call('ZCARD', readers) == 0 then
  lg_shared_end(KEYS[1], tonumber(st[3]), tonumber(st[2]), now_ms)
end
return mine and 1 or 0
