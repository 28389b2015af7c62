-- write_leave: a writer that was refused gives up (its wait ended, its
-- context was cancelled) and stops holding new readers back. Without it, a
-- writer that tried once would keep readers out for a whole lease.
--
-- KEYS[1] B, KEYS[2] B:readers, KEYS[3] B:wake
-- ARGV[1] holder id, ARGV[2] lease ms (checked, unused), ARGV[3] PUBLISH | SPUBLISH
--
-- Reply: 1 the caller's claim (ww, set by its busy write_acquire) was
-- withdrawn; 0 it had none (another writer's claim stays: it retries).
-- Wake: "all" when the claim is withdrawn, no writer holds the lock and
-- someone got busy meanwhile: the readers held back may enter now.
local readers = KEYS[2]
local holder, _, pub, err = lg_args(3, 3)
if err then return err end

local now_ms, now_us = lg_now()
lg_shared_purge(KEYS[1], readers, 'r:', now_ms)
local st = redis.call('HMGET', KEYS[1], 'wwh', 'w', 'f', 'wq')
if st[1] ~= holder then return 0 end

redis.call('HDEL', KEYS[1], 'ww', 'wwh')
-- While a writer holds the lock the readers stay blocked; its release wakes them.
if lg_writer_decode(st[2], now_ms) then return 1 end
if st[4] then
  redis.call(pub, KEYS[3], 'all')
  redis.call('HDEL', KEYS[1], 'wq')
end
if redis.call('ZCARD', readers) == 0 then
  lg_retire_hash(KEYS[1], tonumber(st[3]), now_us)
end
return 1
