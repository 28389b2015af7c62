-- fair_leave: a waiter gives up and leaves the queue at once.
--
-- KEYS[1] B, KEYS[2] B:queue, KEYS[3] B:alive, KEYS[4] B:wake
-- ARGV[1] holder id, ARGV[2] lease ms (checked, unused), ARGV[3] PUBLISH | SPUBLISH
--
-- Reply: 1 left the queue; 0 was not queued; 2 had been handed the lock
-- (lg_fair_hand_over) and gives it back unused.
-- Wake: "grant:<fence>:<head>" when the lock is free (or given back) while
-- someone waits.
local queue, alive = KEYS[2], KEYS[3]
local holder, _, pub, err = lg_args(4, 3)
if err then return err end

local owner, _, fence, _, bad = lg_lock_decode(redis.call('GET', KEYS[1]))
if bad then return bad end
local now_ms, now_us = lg_now()
local old_head = lg_fair_first(queue)
if old_head then lg_fair_evict(queue, alive, now_ms) end

local left = redis.call('ZREM', queue, holder)
redis.call('ZREM', alive, holder)
-- Only a waiter calls this, so a lock it finds its own is a grant it never
-- used: every hold of it ends with the give-up.
local given_back = owner == holder
if given_back then left = 2 end
if given_back or not owner or owner == LG_TOMB then
  local handed = old_head and lg_fair_grant_head(KEYS[1], queue, alive, fence, now_ms, now_us, pub, KEYS[4])
  if given_back and not handed then lg_retire_string(KEYS[1], fence, now_us) end
end
return left
