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

-- The usual acquire, a free permit for a caller that holds none while no
-- holder's lease has ended, is written out here, above the mark where the
-- helpers are made, as fair_acquire's is: making their closures and
-- calling them cost about a fifth of this path's Redis CPU. Its test is
-- LG_ARGS_OK and lg_positive's of the permits. Anything else, a call that
-- fails the test included, goes on below with what this part read (the
-- clock, first, st, count), so no command runs twice.
local holder, permits = ARGV[1], tonumber(ARGV[4])
local read, now_ms, now_us, first, st, count = false, nil, nil, nil, nil, nil
if #KEYS >= 3 and LG_ARGS_OK and permits and permits >= 1 and permits <= 2147483648 and permits % 1 == 0 then
  read = true
  local t = redis.call('TIME')
  now_ms, now_us = t[1] * 1000 + math.floor(t[2] / 1000), t[1] * 1000000 + t[2]
  first = redis.call('ZRANGE', holds, 0, 0, 'WITHSCORES')
  if not first[2] or first[2] + 0 > now_ms then
    st = redis.call('HMGET', KEYS[1], 'h:' .. holder, 'f', 'exp', 'wq')
    if not st[1] then
      count = redis.call('ZCARD', holds)
      if count < permits then
        -- A new hold (lg_shared_hold): one more than the last fence, or
        -- the server clock in µs for a hash that remembers none
        -- (lg_next_fence); both keys live until the latest deadline and
        -- the floor after it (lg_shared_write).
        local last = tonumber(st[2])
        local fence = last and last + 1 or now_us
        local f, deadline, exp = string.format('%d', fence), now_ms + LG_LEASE, tonumber(st[3]) or 0
        if deadline > exp then exp = deadline end
        local expire_at = string.format('%d', exp + LG_FLOOR_MS)
        redis.call('ZADD', holds, string.format('%d', deadline), holder)
        redis.call('HSET', KEYS[1], 'h:' .. holder, f, 'f', f, 'exp', string.format('%d', exp))
        redis.call('PEXPIREAT', KEYS[1], expire_at)
        redis.call('PEXPIREAT', holds, expire_at)
        return { 1, fence }
      end
    end
  end
end

-- lg:helpers
local lease, _, err
holder, lease, _, err = lg_args(3, 4)
if err then return err end
permits = lg_positive(ARGV[4], 2147483648)
if not permits then return lg_error('permits must be an integer in 1..2^31') end

if not read then now_ms, now_us = lg_now() end
-- The hold whose lease ends first, read before anything else: when
-- every permit is taken it says how long to wait, so a waiter's retry
-- costs one ZRANGE where a purge's ZRANGEBYSCORE and the wait's ZRANGE
-- were two. The part above may have read it (first).
first = lg_shared_first(KEYS[1], holds, 'h:', now_ms, first)
st = st or redis.call('HMGET', KEYS[1], 'h:' .. holder, 'f', 'exp', 'wq')
local exp = tonumber(st[3]) or 0
local deadline = now_ms + lease

local mine = lg_hold_decode(st[1])
if mine then return lg_shared_hold(KEYS[1], holds, holder, mine, {}, exp, deadline) end

if (count or redis.call('ZCARD', holds)) >= permits then
  lg_mark_waiting(KEYS[1], holds, st[4], exp, now_ms)
  return { 0, lg_wait(first[2] - now_ms, lease) }
end

local fence = lg_next_fence(tonumber(st[2]), now_us)
return lg_shared_hold(KEYS[1], holds, holder, fence, { 'h:' .. holder, lg_int(fence), 'f', lg_int(fence) }, exp, deadline)
