-- fair_acquire: take the fair lock if the caller is first in line, or join
-- (or keep) its place in the queue.
--
-- KEYS[1] B        the lock: string "<holder> <fence> -", PX lease
--                  + the fence floor
-- KEYS[2] B:queue  zset waiter -> arrival (server µs)
-- KEYS[3] B:alive  zset waiter -> deadline of its place (server ms)
-- KEYS[4] B:wake   wake channel
-- ARGV[1] holder id, ARGV[2] lease ms (of the lock, and of the caller's place
-- in the queue), ARGV[3] PUBLISH | SPUBLISH
--
-- Idempotent: a lock this holder already has is the same grant seen again (a
-- retried call, or a hand-over whose message the caller missed): the lease
-- restarts, nothing else changes. A waiter asking again keeps its place
-- (one whose place ran out goes to the back).
--
-- Reply: fence        acquired (an integer: cheaper for Redis than {1, fence})
--        {0, wait_ms, holder, left_ms, now_ms}
--                     queued: retry within wait_ms (what is left of the
--                     lock's lease), or on "grant:<fence>:<holder>" for the
--                     caller; holder holds the lock for left_ms more (for
--                     the caller's errors); now_ms is the server clock (ms),
--                     from which the caller's heartbeats compute the
--                     deadlines of its place without TIME (fair_heartbeat)
-- Wake: "grant:<fence>:<head>" when the lock is free and someone else is
-- first in line: the lock is handed to it and the caller queues behind it.
local queue, alive = KEYS[2], KEYS[3]

-- The usual acquire, a free lock with nobody queued, is written out here,
-- above the mark where the helpers are made: their closures and calls
-- cost Redis more than the commands on this path (lua/doc.go, "Cost").
-- Anything else, a call that fails LG_ARGS_OK included, goes on below
-- with what this part read (value, head), so no command runs twice.
local holder = ARGV[1]
local read, value, head = false, nil, nil
if #KEYS >= 4 and LG_ARGS_OK then
  read, value = true, redis.call('GET', KEYS[1])
  local owner, fence = string.match(value or '', '^(%S+) (%d+) [-+]$')
  if not value or owner == LG_TOMB then
    head = redis.call('ZRANGE', queue, 0, 0)[1]
    if not head then
      -- One more than the last fence; a key that remembers none starts
      -- from the server clock in µs (lg_next_fence).
      local n = fence and fence + 1
      if not n then
        local t = redis.call('TIME')
        n = t[1] * 1000000 + t[2]
      end
      fence = string.format('%d', n)
      redis.call('SET', KEYS[1], holder .. ' ' .. fence .. ' -', 'PX', LG_LEASE + LG_FLOOR_MS)
      return fence + 0
    end
  end
end

-- lg:helpers
local lease, pub, owner, fence, err
holder, lease, pub, owner, fence, err = lg_fair_begin(read, value)
if err then return err end
if owner == holder then
  redis.call('PEXPIRE', KEYS[1], lg_lease_ttl(lease))
  return fence
end

local wait = owner and owner ~= LG_TOMB and lg_lease_left(KEYS[1])
local by, now_ms, now_us = owner, nil, nil
if not wait or wait < 0 then
  -- Free, and someone may be queued: the head's place has a deadline to
  -- check against the server clock.
  local deadline
  now_ms, now_us = lg_now()
  head, deadline = lg_fair_live_head(queue, alive, now_ms, head)
  if not head or head == holder then
    if head then
      redis.call('ZREM', queue, holder)
      redis.call('ZREM', alive, holder)
    end
    fence = lg_next_fence(fence, now_us)
    redis.call('SET', KEYS[1], lg_lock_encode(holder, fence, 0), 'PX', lg_lease_ttl(lease))
    return fence
  end
  -- Free, but someone else is first: never jump the queue. The lock goes
  -- to the head now, and the caller waits behind it.
  redis.call('ZREM', queue, head)
  lg_fair_hand_over(KEYS[1], alive, head, deadline, fence, now_ms, pub, KEYS[4])
  wait, by = deadline - now_ms, head
else
  now_ms, now_us = lg_now()
end
-- Held: the caller queues, whoever is first. Dead places are not looked
-- for here: they go when they come first in line.
lg_fair_join(queue, alive, holder, lease, now_ms, now_us)
return { 0, lg_wait(wait, lease), by, wait, now_ms }
