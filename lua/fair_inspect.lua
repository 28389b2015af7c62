-- fair_inspect: what Redis holds for a fair lock right now. Read-only.
--
-- KEYS[1] B, KEYS[2] B:queue, KEYS[3] B:alive, KEYS[4] B:wake (unused)
-- ARGV[1] holder id of the caller (checked, unused), ARGV[2] lease ms
-- (checked, unused), ARGV[3] PUBLISH | SPUBLISH (checked, unused)
--
-- Reply: { now_ms, last_fence, holders, waiters, {} } (see the prelude's
-- inspection helpers): holders is <holder, "fair", fence, lease deadline>
-- or empty; waiters the queue in order, <waiter, deadline of its place>,
-- leaving out places that have run out.
local _, _, _, err = lg_args(4, 3)
if err then return err end

local now_ms = lg_now()
local holders, fence, bad = lg_inspect_string(KEYS[1], 'fair', now_ms)
if bad then return bad end

local deadlines = {}
local live = lg_live_scored(KEYS[3], now_ms)
for i = 1, #live, 2 do deadlines[live[i]] = live[i + 1] end
local waiters = {}
for _, w in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  if deadlines[w] then
    waiters[#waiters + 1] = w
    waiters[#waiters + 1] = deadlines[w]
  end
end
return { now_ms, fence, holders, waiters, {} }
