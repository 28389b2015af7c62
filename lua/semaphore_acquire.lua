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
-- The hold whose lease ends first, read before anything else: when
-- every permit is taken it says how long to wait, so a waiter's retry
-- costs one ZRANGE where a purge's ZRANGEBYSCORE and the wait's ZRANGE
-- were two.
local first = lg_shared_first(KEYS[1], holds, 'h:', now_ms)
local st = redis.call('HMGET', KEYS[1], 'h:' .. holder, 'f', 'exp', 'wq')
local exp = tonumber(st[3]) or 0
local deadline = now_ms + lease

local mine = lg_hold_decode(st[1])
if mine then return lg_shared_hold(KEYS[1], holds, holder, mine, {}, exp, deadline) end

if redis.call('ZCARD', holds) >= permits then
  lg_mark_waiting(KEYS[1], holds, st[4], exp, now_ms)
  return { 0, lg_wait(first[2] - now_ms, lease) }
end

local fence = lg_next_fence(tonumber(st[2]), now_us)
return lg_shared_hold(KEYS[1], holds, holder, fence, { 'h:' .. holder, lg_int(fence), 'f', lg_int(fence) }, exp, deadline)
