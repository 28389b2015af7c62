-- mutex_acquire: take the exclusive, reentrant lock, or say how long to wait.
--
-- KEYS[1] B       the lock: string "<holder> <count> <fence> <waited>
--                 [<heir> <until>]", PX lease
-- KEYS[2] B:wake  wake channel (only mutex_release and mutex_leave publish)
-- ARGV[1] holder id, ARGV[2] lease ms, ARGV[3] PUBLISH | SPUBLISH
-- ARGV[4] optional, what kind of attempt this is:
--         "once"   the caller tries once and will not wait (wait=0,
--                  onbusy=skip): its busy reply marks nothing, so the
--                  holder's release neither publishes nor hands the lock to
--                  a caller that is gone.
--         "retry"  the caller got busy before: a lock it finds its own was
--                  handed to it (lg_hand_over) and it has not heard yet, so
--                  it claims that grant (one hold) instead of re-entering.
--         "waited" as "retry", and the attempt follows a wake-up or a retry
--                  timer: only such a caller may take a lock that
--                  mutex_release reserved for the woken waiters
--                  ("! 0 <fence> 1"), and its grant stays marked contended,
--                  so that its release wakes the next waiter (the others
--                  may be asleep on their timers: a wake reaches one waiter
--                  per process, and none of them would mark the new grant).
--
-- Reply: {1, fence}   acquired; a re-entry adds one hold, keeps the fence and
--                     restarts the lease (so does a claim, without a hold)
--        {2, wait_ms} held by another holder, and the caller is its heir:
--                     the release hands the lock to the caller
--                     ("grant:<fence>:<caller>") as long as the caller's
--                     lease, counted from now, has not run out. Retry within
--                     wait_ms (the lock's PTTL, at most the caller's lease;
--                     the runtime retries sooner, within 3/4 of its lease,
--                     so that the retry renews the heirship before it
--                     lapses); call mutex_leave on giving up.
--        {0, wait_ms} held by another holder and the caller tried "once", or
--                     it has a live heir; or reserved for the waiters and
--                     the caller did not wait. Retry within wait_ms (its
--                     PTTL).
local holder, lease, _, err = lg_args(2, 3)
if err then return err end
local retry = ARGV[4]
if retry ~= nil and retry ~= 'waited' and retry ~= 'retry' and retry ~= 'once' then
  return lg_error('ARGV[4] must be absent, "once", "retry" or "waited"')
end
local waiter = retry == 'waited'

local owner, count, fence, waited, bad, heir, heir_until = lg_lock_decode(redis.call('GET', KEYS[1]))
if bad then return bad end

if owner == holder then
  if retry == 'retry' or waiter then count = count - 1 end -- a claim is not a re-entry
  redis.call('SET', KEYS[1], lg_lock_encode(holder, count + 1, fence, waited, heir, heir_until), 'PX', lease)
  return { 1, fence }
end

if owner and owner ~= LG_TOMB then
  local pttl = redis.call('PTTL', KEYS[1])
  if retry == 'once' then return { 0, lg_wait(pttl, lease) } end
  -- The first busy caller becomes the heir, and so does anyone once the
  -- heir's lease would have run out. Either way the lock is now marked
  -- contended, so that its release wakes a waiter; an uncontended release
  -- publishes nothing.
  local now_ms = lg_now()
  if heir and heir ~= holder and heir_until > now_ms then return { 0, lg_wait(pttl, lease) } end
  redis.call('SET', KEYS[1], lg_lock_encode(owner, count, fence, 1, holder, now_ms + lease), 'KEEPTTL')
  return { 2, lg_wait(pttl, lease) }
end

-- Reserved for the callers that waited: a newcomer queues behind them for
-- the few ms the reservation lasts, and marks nothing (the reservation and
-- the grant a waiter takes from it are marked already).
if owner and waited == 1 and not waiter then
  return { 0, lg_wait(redis.call('PTTL', KEYS[1]), lease) }
end

-- Free, or only a tombstone remembering the last fence. The clock is needed
-- here for the fence.
local _, now_us = lg_now()
fence = lg_next_fence(fence, now_us)
redis.call('SET', KEYS[1], lg_lock_encode(holder, 1, fence, waiter and 1 or 0), 'PX', lease)
return { 1, fence }
