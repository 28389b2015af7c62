-- fenced_get: read a value written by fenced_set, with its token.
--
-- KEYS[1]  the value's key
--
-- Reply: {value, token} as written last; {} if the key holds no token.
local f = redis.call('HGET', KEYS[1], 'fence')
if not f then
  return {}
end
return {redis.call('HGET', KEYS[1], 'value') or '', tonumber(f)}
