-- read_renew: restart the lease of this holder's read hold.
--
-- KEYS[1] B, KEYS[2] B:readers, KEYS[3] B:wake (unused)
-- ARGV[1] holder id, ARGV[2] lease ms, ARGV[3] PUBLISH | SPUBLISH
--
-- Reply: 1 the lease now ends ARGV[2] ms from now; 0 not a reader (or its
-- lease already ended).
local holder, lease, _, err = lg_args(3, 3)
if err then return err end
return lg_shared_renew(KEYS[1], KEYS[2], 'r:', holder, lease)
