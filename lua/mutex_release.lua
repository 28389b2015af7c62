-- mutex_release: give the lock back, or withdraw the caller's registration
-- as a waiter. Also the clean-up after an acquire whose outcome is unknown:
-- whatever the holder id may have taken or registered is given back.
--
-- KEYS[1] B, KEYS[2] B:waiters, KEYS[3] B:wake
-- ARGV[1] holder id, ARGV[2] lease ms (checked, unused), ARGV[3] PUBLISH | SPUBLISH
--
-- Reply: 1 released; 0 not held by this holder (its registration, if any,
-- is gone).
-- Wake: "grant:<fence>:<waiter>" when the lock goes to the registered
-- waiter whose registration runs out first among the live ones (lapsed
-- registrations met on the way are dropped); "all" when the set held
-- registrations but none is live any more.
local holder, _, pub, err = lg_args(3, 3)
if err then return err end

local owner, fence, waiters, bad = lg_lock_decode(redis.call('GET', KEYS[1]))
if bad then return bad end
if owner ~= holder then
  -- A clear flag says the set holds no registration; an absent key does
  -- not know.
  if waiters ~= 0 then redis.call('ZREM', KEYS[2], holder) end
  return 0
end

if waiters == 1 then
  local now_ms = lg_now()
  -- Each pop removes a registration, so this ends with the set.
  while true do
    local next = redis.call('ZPOPMIN', KEYS[2])
    if not next[1] then break end
    local until_ms = tonumber(next[2])
    if until_ms > now_ms then
      -- Others may still be registered: the new grant stays marked.
      lg_hand_over(KEYS[1], next[1], fence, 1, until_ms - now_ms, pub, KEYS[3])
      return 1
    end
  end
  -- Someone registered, but no registration is live now (lapsed,
  -- withdrawn, or cut short by a shorter window): the first waiter of each
  -- process tries at once rather than at its next renewal.
  redis.call(pub, KEYS[3], 'all')
end
lg_retire_string(KEYS[1], fence)
return 1
