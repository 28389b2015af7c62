-- semaphore_acquire: take one of ARGV[4] permits.
--
-- KEYS[1] B        hash: h:<holder> (each holder's fence), f (last
--                  fence), wq (someone got busy), exp (deadline the TTL covers)
-- KEYS[2] B:holds  zset holder -> deadline of its lease (server ms); holders
--                  whose lease ended are purged before deciding
-- KEYS[3] B:wake   wake channel
-- ARGV[1] holder id, ARGV[2] lease ms, ARGV[3] PUBLISH | SPUBLISH,
-- ARGV[4] permits (integer >= 1)
--
-- Idempotent: a permit this holder already has is the same grant seen
-- again; its lease restarts.
--
-- Reply: {1, fence}   a permit (a fence per grant)
--        {0, wait_ms} all permits taken; retry within wait_ms (until the
--                     first holder's lease ends)
local holds = KEYS[2]
local holder, lease, _, err = lg_args(3, 4)
if err then return err end
local permits = lg_positive(ARGV[4], 2147483648)
if not permits then return lg_error('permits must be an integer in 1..2^31') end

local now_ms, now_us = lg_now()
-- The hold whose lease ends first, read before anything else (as
-- write_acquire reads its first reader): if it is live, no hold has
-- ended, so there is nothing to purge, and when every permit is taken
-- the same reply says how long to wait. A waiter's retry then costs one
-- ZRANGE where a purge's ZRANGEBYSCORE and the wait's ZRANGE were two.
local first = redis.call('ZRANGE', holds, 0, 0, 'WITHSCORES')
if first[2] and first[2] + 0 <= now_ms then
  lg_shared_purge(KEYS[1], holds, 'h:', now_ms)
  first = nil
end
local st = redis.call('HMGET', KEYS[1], 'h:' .. holder, 'f', 'exp', 'wq')
local exp = tonumber(st[3]) or 0
local deadline = now_ms + lease

local mine = lg_hold_decode(st[1])
if mine then return lg_shared_hold(KEYS[1], holds, holder, mine, {}, exp, deadline) end

if redis.call('ZCARD', holds) >= permits then
  lg_mark_waiting(KEYS[1], holds, st[4], exp, now_ms)
  -- Busy after a purge: the first hold is another than the one read.
  if not first then first = redis.call('ZRANGE', holds, 0, 0, 'WITHSCORES') end
  return { 0, lg_wait(first[2] - now_ms, lease) }
end

local fence = lg_next_fence(tonumber(st[2]), now_us)
return lg_shared_hold(KEYS[1], holds, holder, fence, { 'h:' .. holder, lg_int(fence), 'f', lg_int(fence) }, exp, deadline)
