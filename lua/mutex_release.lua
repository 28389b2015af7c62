-- mutex_release: give the lock back, or withdraw the caller's registration
-- as a waiter (or decline an offer made to it). Also the clean-up after an
-- acquire whose outcome is unknown: whatever the holder id may have taken
-- or registered is given back.
--
-- KEYS[1] B, KEYS[2] B:waiters, KEYS[3] B:wake
-- ARGV[1] holder id, ARGV[2] lease ms (checked only: an offer no longer
--         depends on it, and callers keep sending it), ARGV[3] PUBLISH | SPUBLISH
-- ARGV[4] (optional) the fence of the caller's grant, sent by a holder
--         that believes it holds the lock: the usual release is then one
--         write. A wrong guess costs a write more and changes nothing else.
--         A caller that does not know (a clean-up, a waiter withdrawing)
--         sends none (or ""), and B is only read unless the lock is the
--         caller's.
-- ARGV[5] (optional) a waiter of the caller's process: offered the lock
--         ahead of the first registration if it is registered (the runtime
--         sends it for a bounded run of hand-overs, docs/design.md); ""
--         for none.
-- ARGV[6] (optional) "all": offer to nobody; the registrations go and
--         every waiter is woken ("all") to try. A quorum sends it: each
--         server's set orders its waiters by arrival, which differs from
--         server to server, so offers made server by server can name
--         different waiters and none reaches a majority.
--
-- Reply: 1 released; "grant:<fence>:<waiter>" released and offered to that
-- waiter (the wake message, so that a waiter of the caller's own process
-- hears of it from this reply); 0 not held by this holder (its
-- registration, if any, is gone).
-- Wake: "grant:<fence>:<waiter>" when the lock is offered to the waiter
-- registered first (the lowest fence, then the lowest id); "all" when the
-- flag said registrations but the set had none left (it expired).
--
-- An offer is the lock in the waiter's name with the next fence, for
-- LG_OFFER_MS plus the floor, whatever the releaser's lease: the waiter
-- may count it held for LG_OFFER_MS from a moment before it was made (the
-- send of its first registration, or of this release), and its own lease
-- may be longer than the releaser's. It claims the offer (mutex_acquire,
-- or mutex_renew with its ARGV[4]), which finds the lock its own and gives
-- it the full lease. A waiter that died never claims: the offer lapses,
-- and the other processes, which saw the offer go by and no "taken" after
-- it, try then. So a dead waiter holds the lock up for an offer, not for
-- a lease.
--
-- The tombstone keeps B's TTL: it lives until the lease would have ended,
-- plus the floor, which is at least the floor after the release.
--
-- Written out whole, with no prelude helper, like mutex_acquire.
if #KEYS < 3 then return redis.error_reply('ERR lockgen: want 3 KEYS, got ' .. #KEYS) end
if #ARGV < 3 then return redis.error_reply('ERR lockgen: want 3 ARGV, got ' .. #ARGV) end
local holder, lease, pub, guess, near, mode = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4], ARGV[5], ARGV[6]
if guess == '' then guess = nil end
if #holder == 0 or #holder > 64 or string.find(holder, ' ', 1, true) or holder == LG_TOMB then
  return redis.error_reply('ERR lockgen: holder id must be 1..64 bytes without a space, and not "!"')
end
if not lease or lease < 1 or lease > 2147483648 or lease % 1 ~= 0 then
  return redis.error_reply('ERR lockgen: lease must be an integer number of ms in 1..2^31')
end
if pub ~= 'PUBLISH' and pub ~= 'SPUBLISH' then
  return redis.error_reply('ERR lockgen: publish command must be PUBLISH or SPUBLISH')
end
if mode and mode ~= 'all' then
  return redis.error_reply('ERR lockgen: release mode must be "all" or absent')
end

-- The usual release, the caller's own lock with no waiter, is one write:
-- the tombstone goes in on the guess, and the value it replaced says
-- whether the guess was right. If not, it is put right below, in this same
-- script, before anyone can see it: B back as it was (KEEPTTL kept its
-- TTL), or the tombstone rewritten with the fence B held. XX: an absent B
-- stays absent.
local value
if guess then
  value = redis.call('SET', KEYS[1], LG_TOMB .. ' ' .. guess .. ' -', 'KEEPTTL', 'GET', 'XX')
  if value == holder .. ' ' .. guess .. ' -' then return 1 end
else
  value = redis.call('GET', KEYS[1])
end
local owner, fence, waiters
if value then
  owner, fence, waiters = string.match(value, '^(%S+) (%d+) ([-+])$')
  if guess and owner ~= holder then redis.call('SET', KEYS[1], value, 'KEEPTTL') end
  if not fence then
    if string.find(value, ' [01]$') then return redis.error_reply(LG_PROTOCOL_ERR) end
    return redis.error_reply('ERR lockgen: unexpected lock value')
  end
end
if owner ~= holder then
  -- A clear flag says the set holds no registration; an absent key does
  -- not know.
  if waiters ~= '-' then redis.call('ZREM', KEYS[2], holder) end
  return 0
end

if waiters == '+' then
  local first
  if mode then
    -- Offered to nobody: every registration goes, everyone is woken.
    redis.call('DEL', KEYS[2])
  elseif near and #near > 0 and near ~= holder and redis.call('ZREM', KEYS[2], near) == 1 then
    -- The caller's own waiter, if it is registered: ZREM says so (a holder
    -- id is never registered by protocol 1 and 2 both).
    first = near
  else
    local popped = redis.call('ZPOPMIN', KEYS[2])
    first = popped[1]
    -- A score above zero is a registration of protocol 1 (LG_SCORE_BASE),
    -- and so is every one after it: never offered to (its runtime would
    -- take the message for a grant), they go, and everyone is woken.
    if first and popped[2] + 0 >= 0 then
      redis.call('DEL', KEYS[2])
      first = nil
    end
  end
  if first then
    -- Others may still be registered: the flag stays.
    fence = string.format('%d', fence + 1)
    redis.call('SET', KEYS[1], first .. ' ' .. fence .. ' +', 'PX', LG_OFFER_MS + LG_FLOOR_MS)
    local grant = 'grant:' .. fence .. ':' .. first
    redis.call(pub, KEYS[3], grant)
    return grant
  end
  -- The flag said registrations, but the set expired: whoever waits tries
  -- now rather than at the end of the lease it was told.
  redis.call(pub, KEYS[3], 'all')
end
-- The tombstone keeps the fence, as written. No clock is read: fences stay
-- below the clock of the master that counts them.
if fence ~= guess then redis.call('SET', KEYS[1], LG_TOMB .. ' ' .. fence .. ' -', 'KEEPTTL') end
return 1
