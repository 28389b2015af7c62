-- latch_count: read a latch's count (Count, and every check of Await).
--
-- KEYS[1] B        hash: c, g, s, p:<party> (see latch_set)
-- KEYS[2] B:wake   wake channel (unused)
-- ARGV[1] caller id (checked, unused), ARGV[2] TTL ms,
-- ARGV[3] PUBLISH | SPUBLISH (checked, unused)
--
-- Reading is a use: the TTL restarts, so a latch lives while someone awaits
-- it.
--
-- Reply: {count, generation} (count 0: open); {0, 0} no such latch (never
--        set, or expired).
local _, ttl, _, err = lg_args(2, 3)
if err then return err end

local count, gen, _, bad = lg_latch_read(KEYS[1])
if bad then return bad end
if not count then return { 0, 0 } end
redis.call('PEXPIRE', KEYS[1], ttl)
return { count, gen }
