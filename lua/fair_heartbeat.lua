-- fair_heartbeat: keep a waiter's place in the queue for another lease.
--
-- KEYS[1] B, KEYS[2] B:queue, KEYS[3] B:alive, KEYS[4] B:wake
-- ARGV[1] holder id, ARGV[2] lease ms (the place lives this long), ARGV[3]
-- PUBLISH | SPUBLISH, ARGV[4] the new deadline of the place in server ms,
-- as the runtime estimates it (0: unknown, the script reads TIME), ARGV[5]
-- "1" to refresh the sets' TTLs (to at least the deadline + 3 leases),
-- else "0"
--
-- Reply: n >= 1  place kept; the lock's lease (whoever holds it now) ends
--                within n ms (at most the lease), when the next heartbeat
--                should look whether it ended without a release. If the
--                lock was free and that made the caller the head, it is
--                handed the lock at once, its lease counted from this
--                heartbeat.
--        0       not queued: evicted or never there (acquire again), or
--                handed the lock already (its next acquire finds the lock
--                its own).
-- Wake: "grant:<fence>:<head>" when the lock is free while someone waits
-- (possibly the caller, whose waiting goroutine must hear it).
--
-- What the common path trusts: ARGV[4], the deadline the caller gives its
-- own place, without reading TIME to check it (a third of this path's
-- commands). The runtime derives it from the server clock it read in its
-- last busy reply (fair_acquire's now_ms) plus its monotonic time since
-- that call was sent, so it errs late by at most that call's one-way delay
-- (docs/design.md, "Fair heartbeats"). It is no new trust: the caller
-- already chooses its lease, and so how long its place lives; and it moves
-- only the caller's own place, only later (GT), and only if the place is
-- still there (XX): no other waiter's place, no order, no lock changes.
local queue, alive = KEYS[2], KEYS[3]

-- The common case, a waiter behind a holder whose lease runs: one PTTL
-- says so, one ZADD XX GT keeps the place (1), or finds it gone (0). A 0
-- may also be a place whose deadline did not grow (an acquire attempt gave
-- it a later one): only then does ZSCORE tell the two apart. A place that
-- ran out but that nobody removed is kept: no script acted on its death
-- (they remove what they find dead). The sets' TTLs are refreshed only
-- when asked, every few heartbeats. It is written out above the mark where
-- the helpers are made (their closures and calls would cost Redis more
-- than its commands); its test is that of the checks below, without the
-- messages, and anything else goes on below.
local holder, deadline, refresh = ARGV[1], tonumber(ARGV[4]), ARGV[5]
if #KEYS >= 4 and #ARGV >= 5 and LG_ARGS_OK and deadline and deadline >= 0 and deadline < 2 ^ 50
    and deadline % 1 == 0 and (refresh == '0' or refresh == '1') then
  local left = redis.call('PTTL', KEYS[1]) - LG_FLOOR_MS
  if left >= 0 then
    if deadline == 0 then
      local t = redis.call('TIME')
      deadline = t[1] * 1000 + math.floor(t[2] / 1000) + LG_LEASE
    end
    if redis.call('ZADD', alive, 'XX', 'GT', 'CH', string.format('%d', deadline), holder) == 0
        and not redis.call('ZSCORE', alive, holder) then
      return 0
    end
    if refresh == '1' then
      -- PEXPIREAT GT never shortens (lg_fair_expire_at_least).
      local at = string.format('%d', deadline + 3 * LG_LEASE)
      redis.call('PEXPIREAT', queue, at, 'GT')
      redis.call('PEXPIREAT', alive, at, 'GT')
    end
    return math.max(math.min(left, LG_LEASE), 1)
  end
end

-- lg:helpers
local lease, pub, err
holder, lease, pub, err = lg_args(4, 5)
if err then return err end
if not deadline or deadline < 0 or deadline >= 2 ^ 50 or deadline % 1 ~= 0
    or (refresh ~= '0' and refresh ~= '1') then
  return lg_error('want a deadline of ms in 0..2^50 and a refresh flag 0 or 1')
end
refresh = refresh == '1'

-- Free (absent, a tombstone, a lease that ended, or a damaged key): keep
-- the place by the server's clock, then hand the lock to the first live
-- waiter.
local owner, fence, _, bad = lg_lock_decode(redis.call('GET', KEYS[1]))
if bad then return bad end
local now_ms = lg_now()
local kept, old = false, redis.call('ZSCORE', alive, holder)
if old and old + 0 > now_ms then
  lg_fair_keep_alive(queue, alive, holder, now_ms + lease, false)
  if refresh then
    lg_fair_expire_at_least(queue, lg_int(now_ms + 4 * lease), false)
    lg_fair_expire_at_least(alive, lg_int(now_ms + 4 * lease), false)
  end
  kept = true
elseif old then
  redis.call('ZREM', queue, holder)
  redis.call('ZREM', alive, holder)
end
if lg_lock_free(KEYS[1], owner) then
  lg_fair_grant_head(KEYS[1], queue, alive, fence, now_ms, pub, KEYS[4], nil)
end
if not kept then return 0 end
-- Whoever was handed the lock (the caller included) holds it for at most
-- a lease; an owner whose key has no TTL counts as a lease that ended.
return lg_wait(lg_lease_left(KEYS[1]), lease)
