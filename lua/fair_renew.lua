-- fair_renew: restart the lease of a fair lock this holder holds.
--
-- KEYS[1] B, KEYS[2] B:queue, KEYS[3] B:alive, KEYS[4] B:wake
-- ARGV[1] holder id, ARGV[2] lease ms, ARGV[3] PUBLISH | SPUBLISH
--
-- Reply: 1 the lease now ends ARGV[2] ms from now; 0 not held by this holder.
-- Wake: "grant:<fence>:<head>" when the lock is free while someone waits.
local queue, alive = KEYS[2], KEYS[3]

-- The usual renewal, of a lease that runs, is written out above the mark
-- where the helpers are made (their closures and calls would cost Redis
-- more than its commands). Anything else, a call that fails LG_ARGS_OK
-- included, goes on below with what this part read.
local holder = ARGV[1]
local read, value = false, nil
if #KEYS >= 4 and LG_ARGS_OK then
  read, value = true, redis.call('GET', KEYS[1])
  if value and string.match(value, '^(%S+) %d+ [-+]$') == holder then
    if redis.call('PTTL', KEYS[1]) - LG_FLOOR_MS >= 0 then
      redis.call('PEXPIRE', KEYS[1], LG_LEASE + LG_FLOOR_MS)
      return 1
    end
  end
end

-- lg:helpers
local _, pub, owner, fence, err
holder, _, pub, owner, fence, err = lg_fair_begin(read, value)
if err then return err end
-- Not renewed above: the lock is someone else's, or the holder's lease
-- ended, and a lease that ended is lost, even if nobody took the lock
-- since (see mutex_renew). (Had LG_ARGS_OK refused a call that lg_args
-- takes, the renewal would be refused too: a lost lock, never a second
-- holder.) The first waiter gets a free lock below.
local head = lg_fair_first(queue)
if head and lg_lock_free(KEYS[1], owner) then
  local now_ms = lg_now()
  lg_fair_grant_head(KEYS[1], queue, alive, fence, now_ms, pub, KEYS[4], head)
end
return 0
