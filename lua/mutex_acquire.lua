-- mutex_acquire: take the exclusive, reentrant lock, or say how long to wait.
--
-- KEYS[1] B       the lock: string "<holder> <count> <fence> <waited>", PX lease
-- KEYS[2] B:wake  wake channel (only mutex_release publishes)
-- ARGV[1] holder id, ARGV[2] lease ms, ARGV[3] PUBLISH | SPUBLISH
-- ARGV[4] optional: "waited" when the caller got busy before and is
--         retrying. Its grant keeps the lock marked contended, so that its
--         release wakes the next waiter: the other waiters may be asleep on
--         their timers (a wake reaches one waiter per process), and none of
--         them would mark the new grant. Only such a caller may take a
--         lock that mutex_release reserved for the waiters ("! 0 <fence> 1").
--         "once" when the caller tries once and will not wait (wait=0,
--         onbusy=skip): its busy reply marks nothing, so the holder's
--         release neither publishes nor reserves the lock for nobody.
--
-- Reply: {1, fence}   acquired; a re-entry adds one hold, keeps the fence and
--                     restarts the lease
--        {0, wait_ms} held by another holder, or reserved for the waiters and
--                     the caller did not wait; retry within wait_ms (its PTTL)
local holder, lease, _, err = lg_args(2, 3)
if err then return err end
local retry = ARGV[4]
if retry ~= nil and retry ~= 'waited' and retry ~= 'once' then
  return lg_error('ARGV[4] must be absent, "waited" or "once"')
end
local waiter = retry == 'waited'

local owner, count, fence, waited, bad = lg_lock_decode(redis.call('GET', KEYS[1]))
if bad then return bad end

if owner == holder then
  redis.call('SET', KEYS[1], lg_lock_encode(holder, count + 1, fence, waited), 'PX', lease)
  return { 1, fence }
end

if owner and owner ~= LG_TOMB then
  local pttl = redis.call('PTTL', KEYS[1])
  -- Mark the lock as contended once, so that its release wakes a waiter and
  -- an uncontended release publishes nothing.
  if waited == 0 and retry ~= 'once' then
    redis.call('SET', KEYS[1], lg_lock_encode(owner, count, fence, 1), 'KEEPTTL')
  end
  return { 0, lg_wait(pttl, lease) }
end

-- Reserved for the callers that waited: a newcomer queues behind them for
-- the few ms the reservation lasts, and marks nothing (the reservation and
-- the grant a waiter takes from it are marked already).
if owner and waited == 1 and not waiter then
  return { 0, lg_wait(redis.call('PTTL', KEYS[1]), lease) }
end

-- Free, or only a tombstone remembering the last fence. The clock is needed
-- only here, for the fence.
local _, now_us = lg_now()
fence = lg_next_fence(fence, now_us)
redis.call('SET', KEYS[1], lg_lock_encode(holder, 1, fence, waiter and 1 or 0), 'PX', lease)
return { 1, fence }
