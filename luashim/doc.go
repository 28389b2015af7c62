// Package luashim emulates, in process on gopher-lua, the part of a Redis 7
// server that lockgen's Lua scripts use, and no more. The scenario tests in
// gopherlua_test run every lock script here under a virtual clock (with
// line coverage from internal/luacover, which plugs in as a Transform), and
// the embedded backend runs the same scripts here on the real clock, so
// users can test without a Redis server.
//
//	clock := luashim.NewVirtualClock(time.Unix(1_700_000_000, 0))
//	srv := luashim.New(clock)
//	sha, err := srv.Load("mutex_acquire", src)   // SCRIPT LOAD
//	reply, err := srv.EvalSha(sha, keys, args...) // EVALSHA
//	clock.Advance(10 * time.Second)               // leases run out
//	keys := srv.Snapshot()                        // what is left, with PTTLs
//
// Replies are Go values: int64, string (bulk), Status, nil, []any, and a
// *ReplyError as the error. Lua and Redis values convert as in Redis,
// including the truncation of Lua numbers to integers and the "%.17g"
// rendering of numbers passed to redis.call. Errors carry Redis 7's text:
// a command error raised by redis.call, or a Lua runtime error, ends with
// " script: <sha1>, on @user_script:<line>.", so shim and server can be
// compared message for message. As in Redis 7, pcall catches an error
// raised by redis.call as its message string, and redis.pcall returns it
// as a table {err=...}.
//
// # What it emulates
//
// Exactly the commands lockgen's scripts call (lua/*.lua, fencing/*.lua and
// the protocol-1 scripts gopherlua_test replays), each only in the forms
// the scripts use (SET with PX, KEEPTTL or KEEPTTL GET XX; ZADD of one
// member, with NX or not); of the redis table, call, pcall and error_reply.
// TestShimEmulatesExactlyWhatScriptsCall scans the scripts and fails if
// one calls a command the shim lacks or the shim has one no script calls,
// so a script that starts or stops calling a command changes the shim too
// (and a new command belongs in the differential test against
// redis-server). Do runs the same commands from Go.
//
// # Stricter than Redis
//
// The shim refuses, with an error starting "ERR lockgen-shim:", what Redis
// would let pass or only Redis Cluster would catch: a command, option or
// form of a command outside what the scripts use (where Redis would accept
// it or give another error); a key, or a published channel, that is not
// in the script's KEYS; KEYS of one call in different Cluster slots;
// reading or writing an undeclared global, or writing to a
// library table (Redis 7 forbids these too, with other messages). A
// violation sticks: a script that catches it with pcall still fails.
//
// # Less faithful than Redis
//
// Not modelled: replication, persistence, eviction and memory limits,
// multiple databases, Cluster itself (SPUBLISH reaches the same
// subscribers as PUBLISH), script timeouts (a script that loops forever
// hangs its caller), keyspace notifications, RESP3, the cjson, cmsgpack,
// bit and struct libraries, redis.sha1hex, redis.status_reply, redis.log,
// getmetatable, setmetatable, rawget, rawset and _G. Hashes keep insertion
// order at any size (a real one's order becomes unspecified once it
// outgrows its listpack encoding). Lua runtime error texts are gopher-lua's ("attempt to
// index a non-table object(nil)" where Redis says "attempt to index a nil
// value"). Key expiry is lazy and uses the time frozen at the start of
// each command or script, as Redis does within a script.
package luashim
