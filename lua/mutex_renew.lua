-- mutex_renew: restart the lease of a lock this holder holds.
--
-- KEYS[1] B, KEYS[2] B:waiters (unused), KEYS[3] B:wake (unused)
-- ARGV[1] holder id, ARGV[2] lease ms, ARGV[3] PUBLISH | SPUBLISH
--
-- Reply: 1 the lease now ends ARGV[2] ms from now; 0 not held by this holder
-- (nothing changed).
--
-- Written out whole, with no prelude helper, like mutex_acquire: the
-- watchdog runs it for every held lock.
if #KEYS < 3 then return redis.error_reply('ERR lockgen: want 3 KEYS, got ' .. #KEYS) end
if #ARGV < 3 then return redis.error_reply('ERR lockgen: want 3 ARGV, got ' .. #ARGV) end
local holder, lease = ARGV[1], tonumber(ARGV[2])
if #holder == 0 or #holder > 64 or string.find(holder, ' ', 1, true) or holder == LG_TOMB then
  return redis.error_reply('ERR lockgen: holder id must be 1..64 bytes without a space, and not "!"')
end
if not lease or lease < 1 or lease > 2147483648 or lease % 1 ~= 0 then
  return redis.error_reply('ERR lockgen: lease must be an integer number of ms in 1..2^31')
end
if ARGV[3] ~= 'PUBLISH' and ARGV[3] ~= 'SPUBLISH' then
  return redis.error_reply('ERR lockgen: publish command must be PUBLISH or SPUBLISH')
end

local value = redis.call('GET', KEYS[1])
local owner
if value then
  owner = string.match(value, '^(%S+) %d+ [-+]$')
  if not owner then
    if string.find(value, ' [01]$') then return redis.error_reply(LG_PROTOCOL_ERR) end
    return redis.error_reply('ERR lockgen: unexpected lock value')
  end
end
-- A lease that ended (only the fence floor left of the key's PTTL) is
-- lost, even if nobody took the lock since: the holder's runtime has given
-- it up by its own clock, or will hear it now.
if owner ~= holder or redis.call('PTTL', KEYS[1]) < LG_FLOOR_MS then return 0 end

redis.call('PEXPIRE', KEYS[1], lease + LG_FLOOR_MS)
return 1
