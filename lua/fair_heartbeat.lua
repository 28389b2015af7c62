-- fair_heartbeat: keep a waiter's place in the queue for another lease.
--
-- KEYS[1] B, KEYS[2] B:queue, KEYS[3] B:alive, KEYS[4] B:wake
-- ARGV[1] holder id, ARGV[2] lease ms (the place lives this long), ARGV[3]
-- PUBLISH | SPUBLISH
--
-- Reply: 1 place kept; 0 not queued (evicted or never there: acquire again).
-- Wake: "id:<head>" when the lock is free and evicting dead waiters made a
-- new head (possibly the caller, whose waiting goroutine must hear it).
local queue, alive = KEYS[2], KEYS[3]
local holder, lease, pub, err = lg_args(4, 3)
if err then return err end

local owner, _, _, _, bad = lg_lock_decode(redis.call('GET', KEYS[1]))
if bad then return bad end
local now_ms = lg_now()
local old_head = lg_fair_first(queue)
if old_head then lg_fair_evict(queue, alive, now_ms) end

local kept = 0
if redis.call('ZSCORE', queue, holder) then
  lg_fair_keep_alive(queue, alive, holder, now_ms + lease)
  kept = 1
end
if not owner or owner == LG_TOMB then
  lg_fair_wake_new_head(queue, alive, old_head, nil, pub, KEYS[4])
end
return kept
