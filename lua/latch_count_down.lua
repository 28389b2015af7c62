-- latch_count_down: one party counts a latch down, once.
--
-- KEYS[1] B        hash: c, g, s, p:<party> (see latch_set)
-- KEYS[2] B:wake   wake channel
-- ARGV[1] party id, ARGV[2] TTL ms, ARGV[3] PUBLISH | SPUBLISH
--
-- Idempotent: a party counts once per latch. A call whose party id has
-- counted already (a retry, a duplicate, the same party again) only
-- restarts the TTL, as does any call on an open latch.
--
-- Reply: the count left, 0 once open; -1 no such latch (never set, or
--        expired): nothing written.
-- Wake: "open" when this call brought the count to 0. The parties' fields
-- go then; the open latch (c = 0) lives one more TTL, so that an awaiter
-- that comes late returns at once.
local party, ttl, pub, err = lg_args(2, 3)
if err then return err end

local count, gen, setter, bad = lg_latch_read(KEYS[1])
if bad then return bad end
if not count then return -1 end
redis.call('PEXPIRE', KEYS[1], ttl)
if count == 0 then return 0 end
if redis.call('HSETNX', KEYS[1], 'p:' .. party, '1') == 0 then return count end

count = count - 1
if count > 0 then
  redis.call('HSET', KEYS[1], 'c', lg_int(count))
  return count
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'c', '0', 'g', lg_int(gen), 's', setter)
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call(pub, KEYS[2], 'open')
return 0
