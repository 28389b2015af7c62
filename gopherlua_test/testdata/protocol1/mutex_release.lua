-- mutex_release: give the lock back, or withdraw the caller's registration
-- as a waiter. Also the clean-up after an acquire whose outcome is unknown:
-- whatever the holder id may have taken or registered is given back.
--
-- KEYS[1] B, KEYS[2] B:waiters, KEYS[3] B:wake
-- ARGV[1] holder id, ARGV[2] lease ms (checked, unused), ARGV[3] PUBLISH | SPUBLISH
-- ARGV[4] (optional) the fence of the caller's grant, sent by a holder
--         that believes it holds the lock: the usual release is then one
--         write. A wrong guess costs a write more and changes nothing else.
--         A caller that does not know (a clean-up, a waiter withdrawing)
--         sends none, and B is only read unless the lock is the caller's.
--
-- Reply: 1 released; "grant:<fence>:<waiter>" released and handed to that
-- waiter (the wake message, so that a waiter of the caller's own process
-- hears of it from this reply); 0 not held by this holder (its
-- registration, if any, is gone).
-- Wake: "grant:<fence>:<waiter>" when the lock goes to the registered
-- waiter whose registration runs out first among the live ones (lapsed
-- registrations met on the way are dropped); "all" when the set held
-- registrations but none is live any more.
--
-- The tombstone keeps B's TTL: it lives until the lease would have ended,
-- plus the floor, which is at least the floor after the release.
--
-- Written out whole, with no prelude helper, like mutex_acquire.
if #KEYS < 3 then return redis.error_reply('ERR lockgen: want 3 KEYS, got ' .. #KEYS) end
if #ARGV < 3 then return redis.error_reply('ERR lockgen: want 3 ARGV, got ' .. #ARGV) end
local holder, lease, pub, guess = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
if #holder == 0 or #holder > 64 or string.find(holder, ' ', 1, true) or holder == LG_TOMB then
  return redis.error_reply('ERR lockgen: holder id must be 1..64 bytes without a space, and not "!"')
end
if not lease or lease < 1 or lease > 2147483648 or lease % 1 ~= 0 then
  return redis.error_reply('ERR lockgen: lease must be an integer number of ms in 1..2^31')
end
if pub ~= 'PUBLISH' and pub ~= 'SPUBLISH' then
  return redis.error_reply('ERR lockgen: publish command must be PUBLISH or SPUBLISH')
end

-- The usual release, the caller's own lock with no waiter, is one write:
-- the tombstone goes in on the guess, and the value it replaced says
-- whether the guess was right. If not, it is put right below, in this same
-- script, before anyone can see it: B back as it was (KEEPTTL kept its
-- TTL), or the tombstone rewritten with the fence B held. XX: an absent B
-- stays absent.
local value
if guess then
  value = redis.call('SET', KEYS[1], LG_TOMB .. ' ' .. guess .. ' 0', 'KEEPTTL', 'GET', 'XX')
  if value == holder .. ' ' .. guess .. ' 0' then return 1 end
else
  value = redis.call('GET', KEYS[1])
end
local owner, fence, waiters
if value then
  owner, fence, waiters = string.match(value, '^(%S+) (%d+) ([01])$')
  if guess and owner ~= holder then redis.call('SET', KEYS[1], value, 'KEEPTTL') end
  if not fence then return redis.error_reply('ERR lockgen: unexpected lock value') end
end
if owner ~= holder then
  -- A clear flag says the set holds no registration; an absent key does
  -- not know.
  if waiters ~= '0' then redis.call('ZREM', KEYS[2], holder) end
  return 0
end

if waiters == '1' then
  local t = redis.call('TIME')
  local now_ms = t[1] * 1000 + math.floor(t[2] / 1000)
  -- Each pop removes a registration, so this ends with the set.
  while true do
    local next = redis.call('ZPOPMIN', KEYS[2])
    if not next[1] then break end
    local until_ms = tonumber(next[2])
    if until_ms > now_ms then
      -- The lock goes straight to the waiter, with the next fence, until
      -- its registration would have run out: it needs no acquire of its
      -- own, and the handoff costs this round trip and one message. The
      -- waiter counted its lease from when it registered, so its own
      -- deadline falls first; its first renewal (or, had it missed the
      -- message, its next acquire, which finds the lock its own) gives
      -- the full lease. Others may still be registered: the flag stays.
      fence = string.format('%d', fence + 1)
      redis.call('SET', KEYS[1], next[1] .. ' ' .. fence .. ' 1', 'PX', until_ms - now_ms + LG_FLOOR_MS)
      local grant = 'grant:' .. fence .. ':' .. next[1]
      redis.call(pub, KEYS[3], grant)
      return grant
    end
  end
  -- Someone registered, but no registration is live now (lapsed,
  -- withdrawn, or cut short by a shorter window): the first waiter of each
  -- process tries at once rather than at its next renewal.
  redis.call(pub, KEYS[3], 'all')
end
-- The tombstone keeps the fence, as written. No clock is read: fences stay
-- below the clock of the master that counts them.
if fence ~= guess then redis.call('SET', KEYS[1], LG_TOMB .. ' ' .. fence .. ' 0', 'KEEPTTL') end
return 1
