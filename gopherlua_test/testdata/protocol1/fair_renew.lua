-- fair_renew: restart the lease of a fair lock this holder holds.
--
-- KEYS[1] B, KEYS[2] B:queue, KEYS[3] B:alive, KEYS[4] B:wake
-- ARGV[1] holder id, ARGV[2] lease ms, ARGV[3] PUBLISH | SPUBLISH
--
-- Reply: 1 the lease now ends ARGV[2] ms from now; 0 not held by this holder.
-- Wake: "grant:<fence>:<head>" when the lock is free while someone waits.
local queue, alive = KEYS[2], KEYS[3]
local holder, lease, pub, err = lg_args(4, 3)
if err then return err end

local owner, fence, _, bad = lg_lock_decode(redis.call('GET', KEYS[1]))
if bad then return bad end
-- A lease that ended is lost, even if nobody took the lock since (see
-- mutex_renew); the first waiter gets it below.
if owner == holder and lg_lease_left(KEYS[1]) >= 0 then
  redis.call('PEXPIRE', KEYS[1], lg_lease_ttl(lease))
  return 1
end

local head = lg_fair_first(queue)
if head and lg_lock_free(KEYS[1], owner) then
  local now_ms = lg_now()
  lg_fair_grant_head(KEYS[1], queue, alive, fence, now_ms, pub, KEYS[4], head)
end
return 0
