// Package luashim emulates the part of a Redis 7 server that lockgen's Lua
// scripts use, and no more, in process, on gopher-lua. It exists for two
// jobs: the scenario tests in gopherlua_test run every lock script here
// under a virtual clock, with line coverage; and the embedded backend runs
// the same scripts here with the real clock, so users can test without a
// Redis server.
//
// # Using it
//
//	clock := luashim.NewVirtualClock(time.Unix(1_700_000_000, 0))
//	srv := luashim.New(clock)
//	sha, err := srv.Load("mutex_acquire", src)   // SCRIPT LOAD, named for coverage
//	reply, err := srv.EvalSha(sha, keys, args...) // EVALSHA
//	clock.Advance(10 * time.Second)               // leases run out
//	keys := srv.Snapshot()                        // what is left, with PTTLs
//
// Replies come back as Go values: int64 (integer), string (bulk),
// Status (status such as "OK"), nil (null), []any (array), and a
// *ReplyError as the error for an error reply. Conversions between Lua and
// Redis values follow Redis exactly, including the truncation of Lua
// numbers to integers and the "%.17g" rendering of numbers passed to
// redis.call.
//
// Errors carry Redis 7's text: a command error raised by redis.call, or a
// Lua runtime error, ends with " script: <sha1>, on @user_script:<line>.",
// so shim and server can be compared message for message.
// ReplyError.Script holds the name the script was loaded under. As in
// Redis 7, pcall catches an error raised by redis.call as its message
// string, and redis.pcall returns it as a table {err=...}.
//
// Scripts run one at a time under the server's mutex, in one reused Lua
// state with compiled code cached per SHA1; BenchmarkEvalSha gives the cost
// of a typical lock script call. Messages published by a script reach
// Subscribe callbacks after the script has finished, outside the mutex, in
// publish order.
//
// # What it emulates
//
// Exactly the commands the scripts call: DEL, PEXPIRE, PEXPIREAT, PTTL,
// TIME; GET, SET; HDEL, HGET, HGETALL, HMGET, HSET, HSETNX; ZADD, ZCARD,
// ZCOUNT, ZPOPMIN, ZRANGE, ZRANGEBYSCORE, ZREM, ZSCORE; PUBLISH and
// SPUBLISH. "The scripts" are lua/*.lua (prelude included), fencing/*.lua
// and the protocol-1 scripts gopherlua_test replays. Of those commands'
// options, only the ones the scripts pass are emulated (SET XX, GET,
// KEEPTTL, PX; ZADD NX; WITHSCORES; PEXPIRE and PEXPIREAT NX and GT);
// the others Redis knows are refused with "ERR lockgen-shim: ... is not
// supported". Of the redis table, scripts get call, pcall and error_reply.
// Do runs the same commands from Go, for tests and locktest.
//
// TestShimEmulatesExactlyWhatScriptsCall keeps this true: it scans the
// scripts for redis.call and redis.pcall (a command computed from ARGV[3]
// counts as PUBLISH and SPUBLISH, which the scripts check it is) and fails
// if a script calls a command the shim lacks, or the shim has one no
// script calls. So a change that makes a script call a new command, or
// stop calling one, must change the shim too (and a new command belongs in
// the differential test against redis-server).
//
// # Coverage
//
// gopher-lua has no debug hooks, so Load instruments the parsed script:
// before every statement it inserts a store of the statement's line into a
// hit table held in a local that script code cannot name. Coverage then
// reports, per named script, the lines where statements start and those
// that ran.
//
// # Stricter than Redis
//
// The shim refuses, with an error whose message starts
// "ERR lockgen-shim:", what Redis would let pass or only Redis Cluster
// would catch:
//
//   - a command that touches a key, or publishes to a channel, that is not
//     in the script's KEYS;
//   - KEYS of one call that hash to different Cluster slots (see KeySlot);
//   - a command, or an option, outside what the scripts use (see above);
//   - reading or writing an undeclared global, and writing to a library
//     table (Redis 7 also forbids these, with other messages).
//
// A violation sticks: a script that catches it with pcall still fails.
//
// # Less faithful than Redis
//
// Not modelled: replication, persistence, eviction and memory limits,
// multiple databases (there is one), Cluster itself (SPUBLISH reaches the
// same subscribers as PUBLISH), script timeouts (a script that loops forever
// hangs its caller), keyspace notifications, RESP3, the cjson, cmsgpack,
// bit and struct Lua libraries, redis.sha1hex, redis.status_reply and
// redis.log, and getmetatable, setmetatable, rawget, rawset and _G. Large
// hashes keep insertion order, where Redis switches to a hash table with an
// unspecified order. Lua runtime error texts are gopher-lua's, not PUC
// Lua's ("attempt to index a non-table object(nil)" where Redis says
// "attempt to index a nil value").
// Key expiry is lazy and uses the time frozen at the start of each command
// or script, as Redis does within a script.
package luashim
