-- latch_set: give a latch that does not exist its count (TrySetCount).
--
-- KEYS[1] B        hash: c (count left), g (generation), s (setter id),
--                  p:<party> (parties that counted down); see lg_latch_read
-- KEYS[2] B:wake   wake channel (unused)
-- ARGV[1] setter id (a new one per TrySetCount call), ARGV[2] TTL ms,
-- ARGV[3] PUBLISH | SPUBLISH (checked, unused), ARGV[4] count (1..2^31)
--
-- Idempotent: a latch set by this setter id is the same setting seen again
-- (a retried or duplicated call): {1, its generation}, nothing but the TTL
-- changes.
--
-- Reply: {1, generation} the latch now counts ARGV[4] down, generation being
--                        the server clock in µs when it was set
--        {0, generation} a latch exists already (counting, or open); only
--                        its TTL restarts
local setter, ttl, _, err = lg_args(2, 4)
if err then return err end
local count = lg_positive(ARGV[4], 2147483648)
if not count then return lg_error('count must be an integer in 1..2^31') end

local _, gen, by, bad = lg_latch_read(KEYS[1])
if bad then return bad end
if gen then
  redis.call('PEXPIRE', KEYS[1], ttl)
  if by == setter then return { 1, gen } end
  return { 0, gen }
end

local _, now_us = lg_now()
redis.call('HSET', KEYS[1], 'c', lg_int(count), 'g', lg_int(now_us), 's', setter)
redis.call('PEXPIRE', KEYS[1], ttl)
return { 1, now_us }
