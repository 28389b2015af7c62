-- write_renew: restart the lease of this holder's write hold.
--
-- KEYS[1] B, KEYS[2] B:readers, KEYS[3] B:wake (unused)
-- ARGV[1] holder id, ARGV[2] lease ms, ARGV[3] PUBLISH | SPUBLISH
--
-- Reply: 1 the lease now ends ARGV[2] ms from now; 0 not the writer (or its
-- lease already ended).
local holder, lease, _, err = lg_args(3, 3)
if err then return err end

local now_ms = lg_now()
local st = redis.call('HMGET', KEYS[1], 'w', 'exp')
local writer = lg_writer_decode(st[1], now_ms)
if not writer or writer.holder ~= holder then return 0 end

writer.deadline = now_ms + lease
lg_shared_write(KEYS[1], KEYS[2], { 'w', lg_writer_encode(writer) }, tonumber(st[2]) or 0, writer.deadline)
return 1
