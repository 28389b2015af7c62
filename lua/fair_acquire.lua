-- fair_acquire: take the fair lock if the caller is first in line, or join
-- (or keep) its place in the queue.
--
-- KEYS[1] B        the lock: string "<holder> <fence> 0", PX lease
-- KEYS[2] B:queue  zset waiter -> arrival (server ms)
-- KEYS[3] B:alive  zset waiter -> deadline of its place (server ms)
-- KEYS[4] B:wake   wake channel
-- ARGV[1] holder id, ARGV[2] lease ms (of the lock, and of the caller's place
-- in the queue), ARGV[3] PUBLISH | SPUBLISH
--
-- Idempotent: a lock this holder already has is the same grant seen again (a
-- retried call, or a hand-over whose message the caller missed): the lease
-- restarts, nothing else changes. A waiter asking again keeps its place.
--
-- Reply: {1, fence}   acquired
--        {0, wait_ms, holder, left_ms}
--                     queued: retry within wait_ms (what is left of the
--                     lock's lease), or on "grant:<fence>:<holder>" for the
--                     caller; holder holds the lock for left_ms more (for
--                     the caller's errors)
-- Wake: "grant:<fence>:<head>" when the lock is free and someone else is
-- first in line: the lock is handed to it and the caller queues behind it.
local queue, alive = KEYS[2], KEYS[3]
local holder, lease, pub, err = lg_args(4, 3)
if err then return err end

local owner, fence, _, bad = lg_lock_decode(redis.call('GET', KEYS[1]))
if bad then return bad end
if owner == holder then
  redis.call('PEXPIRE', KEYS[1], lg_lease_ttl(lease))
  return { 1, fence }
end

local now_ms, now_us = lg_now()
local wait = owner and owner ~= LG_TOMB and lg_lease_left(KEYS[1])
local by = owner
if wait and wait >= 0 then
  -- Held: the caller queues, whoever is first. Dead places still go, so
  -- that an abandoned queue cannot hold up the next grant.
  lg_fair_evict(queue, alive, now_ms)
else
  local head, head_deadline = lg_fair_first(queue), nil
  if head then
    head, head_deadline = lg_fair_live_head(queue, alive, lg_fair_evict(queue, alive, now_ms, head))
  end
  if not head or head == holder then
    if head then
      redis.call('ZREM', queue, holder)
      redis.call('ZREM', alive, holder)
    end
    fence = lg_next_fence(fence, now_us)
    redis.call('SET', KEYS[1], lg_lock_encode(holder, fence, 0), 'PX', lg_lease_ttl(lease))
    return { 1, fence }
  end
  -- Free, but someone else is first: never jump the queue. The lock goes
  -- to the head now, and the caller waits behind it.
  lg_fair_hand_over(KEYS[1], queue, alive, head, head_deadline, fence, now_ms, now_us, pub, KEYS[4])
  wait, by = head_deadline - now_ms, head
end

-- Join behind the tail, or keep the place: ZADD NX changes no place that
-- exists, so one command both tests and joins.
local tail = redis.call('ZRANGE', queue, -1, -1, 'WITHSCORES')
local arrival = now_ms
if tail[2] and tail[2] + 0 >= arrival then arrival = tail[2] + 1 end
local join -- nil: was queued already (lg_expire_at_least)
if redis.call('ZADD', queue, 'NX', lg_int(arrival), holder) == 1 then
  join = tail[1] and 'behind' or 'first'
end
lg_fair_keep_alive(queue, alive, holder, now_ms + lease, join)
return { 0, lg_wait(wait, lease), by, wait }
