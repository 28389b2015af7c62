-- semaphore_renew: restart the lease of this holder's permit.
--
-- KEYS[1] B, KEYS[2] B:holds, KEYS[3] B:wake (unused)
-- ARGV[1] holder id, ARGV[2] lease ms, ARGV[3] PUBLISH | SPUBLISH
--
-- Reply: 1 the lease now ends ARGV[2] ms from now; 0 no permit held (or its
-- lease already ended).
local holder, lease, _, err = lg_args(3, 3)
if err then return err end
return lg_shared_renew(KEYS[1], KEYS[2], 'h:', holder, lease)
