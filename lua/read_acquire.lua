-- read_acquire: take the shared side of a read/write lock.
--
-- KEYS[1] B          hash: w (writer "<holder> <fence> <deadline>"),
--                    r:<holder> (each reader's fence), f (last fence),
--                    ww (new readers wait until then: a writer is waiting),
--                    wwh (the writer that set ww),
--                    wq (someone got busy), exp (deadline the TTL covers)
-- KEYS[2] B:readers  zset reader -> deadline of its lease (server ms)
-- KEYS[3] B:wake     wake channel
-- ARGV[1] holder id, ARGV[2] lease ms, ARGV[3] PUBLISH | SPUBLISH
--
-- Idempotent: a read hold this holder already has is the same grant seen
-- again; its lease restarts. The writer may take the read side too.
--
-- Reply: {1, fence}   acquired; every reader has its own lease and fence
--        {0, wait_ms} another holder writes, or a writer is waiting (new
--                     readers let it in first); retry within wait_ms
--        {0, wait_ms, writer, left_ms} when a writer holds it, for left_ms
local readers = KEYS[2]

-- The usual acquire, a free read side for a caller that holds none (no
-- writer, no waiting writer, no reader whose lease ended), is written out
-- above the mark where the helpers are made, as semaphore_acquire's is.
-- Anything else, a call that fails LG_ARGS_OK included, goes on below with
-- what this part read (the clock, dead, st), so no command runs twice.
local holder = ARGV[1]
local read, now_ms, now_us, dead, st = false, nil, nil, nil, nil
if #KEYS >= 3 and LG_ARGS_OK then
  read = true
  local t = redis.call('TIME')
  now_ms, now_us = t[1] * 1000 + math.floor(t[2] / 1000), t[1] * 1000000 + t[2]
  dead = redis.call('ZRANGEBYSCORE', readers, '-inf', string.format('%d', now_ms))
  if not dead[1] then
    st = redis.call('HMGET', KEYS[1], 'w', 'ww', 'f', 'exp', 'wq', 'r:' .. holder)
    if not st[1] and not st[2] and not st[6] then
      -- A new hold (lg_shared_hold): one more than the last fence, or the
      -- server clock in µs for a hash that remembers none (lg_next_fence);
      -- both keys live until the latest deadline and the floor after it
      -- (lg_shared_write).
      local last = tonumber(st[3])
      local fence = last and last + 1 or now_us
      local f, deadline, exp = string.format('%d', fence), now_ms + LG_LEASE, tonumber(st[4]) or 0
      if deadline > exp then exp = deadline end
      local expire_at = string.format('%d', exp + LG_FLOOR_MS)
      redis.call('ZADD', readers, string.format('%d', deadline), holder)
      redis.call('HSET', KEYS[1], 'r:' .. holder, f, 'f', f, 'exp', string.format('%d', exp))
      redis.call('PEXPIREAT', KEYS[1], expire_at)
      redis.call('PEXPIREAT', readers, expire_at)
      return { 1, fence }
    end
  end
end

-- lg:helpers
local lease, _, err
holder, lease, _, err = lg_args(3, 3)
if err then return err end

if not read then now_ms, now_us = lg_now() end
-- Readers whose lease ended go (the part above may have read them).
lg_shared_purge(KEYS[1], readers, 'r:', now_ms, dead)
st = st or redis.call('HMGET', KEYS[1], 'w', 'ww', 'f', 'exp', 'wq', 'r:' .. holder)
local writer = lg_writer_decode(st[1], now_ms)
local ww, exp = tonumber(st[2]), tonumber(st[4]) or 0
local deadline = now_ms + lease

local mine = lg_hold_decode(st[6])
if mine then return lg_shared_hold(KEYS[1], readers, holder, mine, {}, exp, deadline) end

local wait, by
if writer and writer.holder ~= holder then
  wait, by = writer.deadline - now_ms, writer.holder
elseif not writer and ww and ww > now_ms then
  wait = ww - now_ms
end
if wait then
  lg_mark_waiting(KEYS[1], readers, st[5], exp, now_ms)
  if by then return { 0, lg_wait(wait, lease), by, wait } end
  return { 0, lg_wait(wait, lease) }
end

local fence = lg_next_fence(tonumber(st[3]), now_us)
return lg_shared_hold(KEYS[1], readers, holder, fence, { 'r:' .. holder, lg_int(fence), 'f', lg_int(fence) }, exp, deadline)
