-- fair_release: give the fair lock back (the first live waiter gets it), or
-- leave the queue. Also the clean-up after an acquire whose outcome is
-- unknown, and what a waiter that gives up calls: whatever the holder id
-- may have taken or queued is given back.
--
-- KEYS[1] B, KEYS[2] B:queue, KEYS[3] B:alive, KEYS[4] B:wake
-- ARGV[1] holder id, ARGV[2] lease ms (checked, unused), ARGV[3] PUBLISH | SPUBLISH
--
-- Reply: 1 released (the lock was the caller's: held, or handed to it
-- before it heard); "grant:<fence>:<head>" released and handed to the
-- first live waiter (the wake message, so that a waiter of the caller's
-- own process hears of it from this reply); 0 not held by this holder (its
-- place in the queue, if any, is gone).
-- Wake: "grant:<fence>:<head>" when the lock goes to the first live waiter
-- (lg_fair_hand_over), or, when not held, if the lock is free while someone
-- waits.
local queue, alive = KEYS[2], KEYS[3]

-- The usual release, the caller's lock with nobody queued, is written out
-- above the helpers, as fair_acquire's usual acquire is. It reads no
-- clock: only a waiter's place has a deadline to check.
local holder = ARGV[1]
local read, value, first = false, nil, nil
if #KEYS >= 4 and LG_ARGS_OK then
  read, value = true, redis.call('GET', KEYS[1])
  local owner, fence = string.match(value or '', '^(%S+) (%d+) [-+]$')
  if owner == holder then
    first = redis.call('ZPOPMIN', queue)[1]
    if not first then
      redis.call('SET', KEYS[1], LG_TOMB .. ' ' .. fence .. ' -', 'PX', LG_FLOOR_MS)
      return 1
    end
  end
end

-- lg:helpers
local _, pub, owner, fence, err
holder, _, pub, owner, fence, err = lg_fair_begin(read, value)
if err then return err end

if owner ~= holder then
  redis.call('ZREM', queue, holder)
  redis.call('ZREM', alive, holder)
  if lg_lock_free(KEYS[1], owner) then
    local now_ms = lg_now()
    lg_fair_grant_head(KEYS[1], queue, alive, fence, now_ms, pub, KEYS[4], nil)
  end
  return 0
end

-- The caller's lock, and the part above popped the first waiter.
local grant = lg_fair_pass_on(KEYS[1], queue, alive, first, fence, lg_now(), pub, KEYS[4])
if grant then return grant end
lg_retire_string(KEYS[1], fence)
return 1
