-- mutex_inspect: what Redis holds for a mutex right now. Read-only.
--
-- KEYS[1] B, KEYS[2] B:waiters, KEYS[3] B:wake (unused)
-- ARGV[1] holder id of the caller (checked, unused), ARGV[2] lease ms
-- (checked, unused), ARGV[3] PUBLISH | SPUBLISH (checked, unused)
--
-- Reply: { now_ms, last_fence, holders, waiters, {} } (see the prelude's
-- inspection helpers): holders is <holder, "mutex", fence, lease deadline>
-- or empty; waiters the live registrations, <waiter, registration deadline>,
-- the one a release would hand the lock to first. last_fence is 0 when the
-- lock left nothing behind.
local _, _, _, err = lg_args(3, 3)
if err then return err end

local now_ms = lg_now()
local holders, fence, bad = lg_inspect_string(KEYS[1], 'mutex', now_ms)
if bad then return bad end
-- Registrations have no deadline of their own: each is shown with the
-- set's, the latest moment it can still be there.
local until_ms = now_ms + redis.call('PTTL', KEYS[2])
local waiters = redis.call('ZRANGE', KEYS[2], 0, -1)
local out = {}
for i = 1, #waiters do
  out[2 * i - 1], out[2 * i] = waiters[i], until_ms
end
return { now_ms, fence, holders, out, {} }
