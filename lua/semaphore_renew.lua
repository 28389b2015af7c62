-- semaphore_renew: restart the lease of this holder's permit.
--
-- KEYS[1] B, KEYS[2] B:holds, KEYS[3] B:wake (unused)
-- ARGV[1] holder id, ARGV[2] lease ms, ARGV[3] PUBLISH | SPUBLISH
--
-- Reply: 1 the lease now ends ARGV[2] ms from now; 0 no permit held (or its
-- lease already ended).
local holds = KEYS[2]
local holder, lease, _, err = lg_args(3, 3)
if err then return err end

local now_ms = lg_now()
lg_shared_purge(KEYS[1], holds, 'h:', now_ms)
local st = redis.call('HMGET', KEYS[1], 'h:' .. holder, 'exp')
if not lg_hold_decode(st[1]) then return 0 end

local deadline = now_ms + lease
redis.call('ZADD', holds, lg_int(deadline), holder)
lg_shared_write(KEYS[1], holds, {}, tonumber(st[2]) or 0, deadline)
return 1
