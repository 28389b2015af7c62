-- write_acquire: take the exclusive side of a read/write lock.
--
-- KEYS[1] B, KEYS[2] B:readers, KEYS[3] B:wake (see read_acquire for the
-- fields of B)
-- ARGV[1] holder id, ARGV[2] lease ms, ARGV[3] PUBLISH | SPUBLISH
--
-- Idempotent: a write hold this holder already has is the same grant seen
-- again; its lease restarts.
--
-- Reply: {1, fence}   acquired
--        {0, wait_ms} another writer, or any reader (the caller included: a
--                     read hold cannot be upgraded), holds it; retry within
--                     wait_ms. While a writer keeps retrying, new readers are
--                     refused (ww, set by wwh), so readers cannot starve it;
--                     a writer that gives up withdraws that with
--                     write_release.
--        {0, wait_ms, writer, left_ms} when another writer holds it, for
--                     left_ms
local readers = KEYS[2]

-- The usual acquire, a lock nobody holds (no writer field, no reader), is
-- written out above the mark where the helpers are made, as
-- semaphore_acquire's is. Anything else, a call that fails LG_ARGS_OK
-- included, goes on below with what this part read (the clock, st,
-- first), so no command runs twice.
local holder = ARGV[1]
local read, now_ms, now_us, st, first = false, nil, nil, nil, nil
if #KEYS >= 3 and LG_ARGS_OK then
  read = true
  local t = redis.call('TIME')
  now_ms, now_us = t[1] * 1000 + math.floor(t[2] / 1000), t[1] * 1000000 + t[2]
  st = redis.call('HMGET', KEYS[1], 'w', 'ww', 'f', 'exp')
  if not st[1] then
    first = redis.call('ZRANGE', readers, 0, 0, 'WITHSCORES')
    if not first[2] then
      -- One more than the last fence, or the server clock in µs for a hash
      -- that remembers none (lg_next_fence); a waiting writer's claim goes;
      -- both keys live until the latest deadline and the floor after it
      -- (lg_shared_write).
      local last = tonumber(st[3])
      local fence = last and last + 1 or now_us
      local f, deadline, exp = string.format('%d', fence), now_ms + LG_LEASE, tonumber(st[4]) or 0
      if st[2] then redis.call('HDEL', KEYS[1], 'ww', 'wwh') end
      if deadline > exp then exp = deadline end
      local expire_at = string.format('%d', exp + LG_FLOOR_MS)
      redis.call('HSET', KEYS[1], 'w', holder .. ' ' .. f .. ' ' .. string.format('%d', deadline), 'f', f,
        'exp', string.format('%d', exp))
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
st = st or redis.call('HMGET', KEYS[1], 'w', 'ww', 'f', 'exp')
local writer = lg_writer_decode(st[1], now_ms)
local exp = tonumber(st[4]) or 0
local deadline = now_ms + lease

if writer and writer.holder == holder then
  writer.deadline = deadline
  lg_shared_write(KEYS[1], readers, { 'w', lg_writer_encode(writer) }, exp, deadline)
  return { 1, writer.fence }
end

-- Another writer's hold decides the wait, whatever the readers: they are
-- read only when no writer holds the lock (dead ones are purged then, or
-- by the writer's release), and then the first reader says whether (and
-- until when) readers block this writer. So a writer waiting behind a
-- writer costs TIME, HMGET and HSET.
local wait, by
if writer then
  wait, by = writer.deadline - now_ms, writer.holder
else
  first = lg_shared_first(KEYS[1], readers, 'r:', now_ms, first)
  if first[2] then wait = first[2] - now_ms end
end
if wait then
  -- Hold new readers back for one lease; every retry extends it. wwh names
  -- the writer that set it, so that write_release withdraws only its own
  -- claim. Both keys live until exp and the floor after it: a claim that
  -- ends within that (a holder's lease ends at most a lease from now, and
  -- with a lease up to the floor, or a holder that renewed lately, it
  -- does) needs no TTL moved, and so a waiting writer's retry costs one
  -- HSET, not three commands.
  local claim = { 'ww', lg_int(deadline), 'wwh', holder, 'wq', '1' }
  if deadline <= exp + LG_FLOOR_MS then
    redis.call('HSET', KEYS[1], unpack(claim))
  else
    lg_shared_write(KEYS[1], readers, claim, exp, deadline)
  end
  if by then return { 0, lg_wait(wait, lease), by, wait } end
  return { 0, lg_wait(wait, lease) }
end

local fence = lg_next_fence(tonumber(st[3]), now_us)
if st[2] then redis.call('HDEL', KEYS[1], 'ww', 'wwh') end
lg_shared_write(KEYS[1], readers,
  { 'w', lg_writer_encode({ holder = holder, fence = fence, deadline = deadline }), 'f', lg_int(fence) },
  exp, deadline)
return { 1, fence }
