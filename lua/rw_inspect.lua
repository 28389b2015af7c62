-- rw_inspect: what Redis holds for a read/write lock right now. Read-only.
--
-- KEYS[1] B, KEYS[2] B:readers, KEYS[3] B:wake (unused) (see read_acquire
-- for the fields of B)
-- ARGV[1] holder id of the caller (checked, unused), ARGV[2] lease ms
-- (checked, unused), ARGV[3] PUBLISH | SPUBLISH (checked, unused)
--
-- Reply: { now_ms, last_fence, holders, {}, claim } (see the prelude's
-- inspection helpers): holders is the live writer, <holder, "write", fence,
-- lease deadline>, then the live readers, <holder, "read", ...>, the lease
-- that ends first first (the writer may be a reader too); claim is a
-- waiting writer that holds new readers back, <writer, until>, or empty.
-- Busy readers do not register, so there are no waiters.
local _, _, _, err = lg_args(3, 3)
if err then return err end

local now_ms = lg_now()
local fields = lg_hash_table(KEYS[1])
local holders = {}
local writer = lg_writer_decode(fields.w, now_ms)
if writer then holders = { writer.holder, 'write', writer.fence, writer.deadline } end
lg_inspect_shared(holders, fields, KEYS[2], 'r:', 'read', now_ms)

local claim = {}
local ww = tonumber(fields.ww)
if ww and ww > now_ms then claim = { fields.wwh or '', ww } end
return { now_ms, tonumber(fields.f) or 0, holders, {}, claim }
