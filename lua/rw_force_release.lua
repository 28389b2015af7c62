-- rw_force_release: take a read/write lock from everyone who holds it, the
-- writer and every reader (an operator's tool, lockgen locks release
-- --force).
--
-- KEYS[1] B, KEYS[2] B:readers, KEYS[3] B:wake (see read_acquire for the
-- fields of B)
-- ARGV[1] holder id of the caller (checked, unused), ARGV[2] lease ms
-- (checked, unused), ARGV[3] PUBLISH | SPUBLISH
--
-- B keeps the last fence, and a waiting writer's claim on new readers,
-- until the latest lease it had would have ended (lg_shared_clear), so
-- every later grant gets a higher fence; each holder learns at its next
-- renewal (0: not held).
--
-- Reply: how many holds were removed (the writer and each reader); 0
-- nothing changed.
-- Wake: "all" when someone got busy meanwhile.
local readers = KEYS[2]
local _, _, pub, err = lg_args(3, 3)
if err then return err end

local now_ms = lg_now()
local st = redis.call('HMGET', KEYS[1], 'w', 'f', 'ww', 'wwh', 'wq', 'exp')
local removed = redis.call('ZCOUNT', readers, '(' .. lg_int(now_ms), '+inf')
if lg_writer_decode(st[1], now_ms) then removed = removed + 1 end
if removed == 0 then return 0 end

local keep = {}
local ww = tonumber(st[3])
if ww and ww > now_ms then keep = { 'ww', st[3], 'wwh', st[4] } end
lg_shared_clear(KEYS[1], readers, keep, st[2], tonumber(st[6]), now_ms)
if st[5] then redis.call(pub, KEYS[3], 'all') end
return removed
