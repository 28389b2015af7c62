-- fenced_set: write a value only for a writer whose fencing token is not
-- older than the token of the last write, so a holder that lost its lock
-- (and was overtaken by a newer holder) cannot overwrite newer data.
--
-- KEYS[1]  the value's key: a hash with fields "value" and "fence"
-- ARGV[1]  the value
-- ARGV[2]  the writer's fencing token: a decimal integer 1..2^53
--
-- Reply: {1, token}   written; the key now holds the value and the token
--        {0, stored}  refused: the key holds a newer token, stored
-- An equal token is the same grant writing again, and is written.
local token = ARGV[2]
-- Compared as text: above 2^53 a double cannot tell the numbers apart.
if not string.match(token, '^[1-9]%d*$') or #token > 16 or (#token == 16 and token > '9007199254740992') then
  return redis.error_reply('ERR fencing: token must be an integer from 1 to 2^53')
end
local stored = tonumber(redis.call('HGET', KEYS[1], 'fence') or '0')
if not stored then
  return redis.error_reply('ERR fencing: the key holds a fence that is not a number')
end
if stored > tonumber(token) then
  return {0, stored}
end
redis.call('HSET', KEYS[1], 'value', ARGV[1], 'fence', token)
return {1, tonumber(token)}
