-- fair_leave: a waiter gives up and leaves the queue at once.
--
-- KEYS[1] B, KEYS[2] B:queue, KEYS[3] B:alive, KEYS[4] B:wake
-- ARGV[1] holder id, ARGV[2] lease ms (checked, unused), ARGV[3] PUBLISH | SPUBLISH
--
-- Reply: 1 left the queue; 0 was not queued.
-- Wake: "id:<head>" when the lock is free and the head changed (the leaver
-- was first, or dead waiters were evicted).
local queue, alive = KEYS[2], KEYS[3]
local holder, _, pub, err = lg_args(4, 3)
if err then return err end

local owner, _, _, _, bad = lg_lock_decode(redis.call('GET', KEYS[1]))
if bad then return bad end
local now_ms = lg_now()
local old_head = lg_fair_first(queue)
if old_head then lg_fair_evict(queue, alive, now_ms) end

local left = redis.call('ZREM', queue, holder)
redis.call('ZREM', alive, holder)
if not owner or owner == LG_TOMB then
  lg_fair_wake_new_head(queue, alive, old_head, nil, pub, KEYS[4])
end
return left
