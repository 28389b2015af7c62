-- semaphore_inspect: what Redis holds for a semaphore right now. Read-only.
--
-- KEYS[1] B, KEYS[2] B:holds, KEYS[3] B:wake (unused)
-- ARGV[1] holder id of the caller (checked, unused), ARGV[2] lease ms
-- (checked, unused), ARGV[3] PUBLISH | SPUBLISH (checked, unused)
--
-- Reply: { now_ms, last_fence, holders, {}, {} } (see the prelude's
-- inspection helpers): holders is every live permit, <holder, "semaphore",
-- fence, lease deadline>, the lease that ends first first. The number of
-- permits is not stored: each acquire says it. Busy callers do not
-- register, so there are no waiters.
local _, _, _, err = lg_args(3, 3)
if err then return err end

local now_ms = lg_now()
local fields = lg_hash_table(KEYS[1])
local holders = lg_inspect_shared({}, fields, KEYS[2], 'h:', 'semaphore', now_ms)
return { now_ms, tonumber(fields.f) or 0, holders, {}, {} }
