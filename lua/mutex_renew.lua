-- mutex_renew: restart the lease of a lock this holder holds.
--
-- KEYS[1] B, KEYS[2] B:waiters and KEYS[3] B:wake (used by a claim only)
-- ARGV[1] holder id, ARGV[2] lease ms, ARGV[3] PUBLISH | SPUBLISH
-- ARGV[4] (optional) present when this renewal claims an offer: the holder
--         id of the next waiter of the caller's process to register, as
--         mutex_acquire's ARGV[5], or "" for none. A claimed offer to a
--         marked lock publishes "taken:<fence>", as mutex_acquire's claim.
--
-- Reply: 1 the lease now ends ARGV[2] ms from now; 0 not held by this holder
-- (nothing changed).
--
-- A claim sent as a renewal (the runtime's claim of an offer it learnt from
-- its own release reply, which it counts held from that release's send
-- time) can never take the lock anew: an offer taken by another, or a lock
-- given back before the claim ran, is "not held" (0), and the holder hears
-- of a loss. mutex_acquire would grant a free lock again to a caller that
-- may have returned.
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

local after = ARGV[4]
if after and (#after > 64 or string.find(after, ' ', 1, true) or after == LG_TOMB or after == holder) then
  return redis.error_reply('ERR lockgen: next waiter must be a holder id other than the caller\'s')
end
local value = redis.call('GET', KEYS[1])
local owner, fence, waiters
if value then
  owner, fence, waiters = string.match(value, '^(%S+) (%d+) ([-+])$')
  if not owner then
    if string.find(value, ' [01]$') then return redis.error_reply(LG_PROTOCOL_ERR) end
    return redis.error_reply('ERR lockgen: unexpected lock value')
  end
end
-- A lease that ended (only the fence floor left of the key's PTTL) is
-- lost, even if nobody took the lock since: the holder's runtime has given
-- it up by its own clock, or will hear it now.
-- A claim needs no PTTL: a lock still in the claimant's name after its
-- offer lapsed was nobody else's since (any grant renames it), so it may
-- have its full lease, as a claim by mutex_acquire would; the runtime,
-- which gave it up by its own clock first, gives it back.
if owner ~= holder or not after and redis.call('PTTL', KEYS[1]) < LG_FLOOR_MS then return 0 end

redis.call('PEXPIRE', KEYS[1], lease + LG_FLOOR_MS)
if after then
  if #after > 0 then
    redis.call('ZADD', KEYS[2], 'NX', string.format('%d', fence - LG_SCORE_BASE), after)
    redis.call('PEXPIRE', KEYS[2], 2 * lease + LG_FLOOR_MS)
    if waiters == '-' then
      waiters = '+'
      redis.call('SET', KEYS[1], holder .. ' ' .. fence .. ' +', 'KEEPTTL')
    end
  end
  if waiters == '+' then redis.call(ARGV[3], KEYS[3], 'taken:' .. fence) end
end
return 1
