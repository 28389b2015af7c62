package luashim

import (
	"strconv"
	"strings"
	"time"
)

// command is one entry of the allow-list.
type command struct {
	// arity counts the command name, as in COMMAND INFO: n > 0 exactly n
	// arguments, n < 0 at least -n.
	arity int
	keys  keyArgs
	run   func(c *call, args []string) any
}

// keyArgs says which arguments of a command name keys, for the check that
// a script touches only its KEYS. PUBLISH's channel counts as a key.
type keyArgs int

const (
	firstKey keyArgs = iota // the first argument
	allKeys                 // every argument (DEL)
	noKeys                  // none (TIME)
)

// commands is the allow-list, the commands the scripts call (kept so by
// TestShimEmulatesExactlyWhatScriptsCall), by their lower-case names.
// The shim has no cluster, so SPUBLISH is PUBLISH; its channel counts as a
// key because Redis Cluster 7 requires a shard channel SPUBLISHed from a
// script to be declared (and in the script's slot).
var commands = map[string]*command{
	"time": {1, noKeys, cmdTime}, "del": {-2, allKeys, cmdDel}, "pttl": {2, firstKey, cmdPTTL},
	"pexpire": {-3, firstKey, expireCommand(false)}, "pexpireat": {-3, firstKey, expireCommand(true)},
	"get": {2, firstKey, cmdGet}, "set": {-3, firstKey, cmdSet},
	"hget": {3, firstKey, cmdHGet}, "hset": {-4, firstKey, cmdHSet}, "hsetnx": {4, firstKey, cmdHSetNX},
	"hmget": {-3, firstKey, cmdHMGet}, "hdel": {-3, firstKey, cmdHDel}, "hgetall": {2, firstKey, cmdHGetAll},
	"zadd": {-4, firstKey, cmdZAdd}, "zrem": {-3, firstKey, cmdZRem}, "zscore": {3, firstKey, cmdZScore},
	"zcard": {2, firstKey, cmdZCard}, "zcount": {4, firstKey, cmdZCount}, "zrange": {-4, firstKey, cmdZRange},
	"zrangebyscore": {-4, firstKey, cmdZRangeByScore}, "zpopmin": {-2, firstKey, cmdZPopMin},
	"publish": {3, firstKey, cmdPublish}, "spublish": {3, firstKey, cmdPublish},
}

// touchedKeys returns the arguments of args (args[0] is the command) that name
// keys or channels.
func (cmd *command) touchedKeys(args []string) []string {
	switch {
	case cmd.keys == noKeys || len(args) < 2:
		return nil
	case cmd.keys == allKeys:
		return args[1:]
	}
	return args[1:2]
}

// unsupported refuses an option or form of a kept command that no script
// uses: the shim emulates only what the scripts call.
func unsupported(cmd, what string) *ReplyError {
	return replyErr("ERR lockgen-shim: " + strings.ToUpper(cmd) + " " + what + " is not supported")
}

// call is the context of one command or script run: the server, the time
// frozen at its start (Redis also freezes key expiry during a script), and
// the running script, if any, with its KEYS.
type call struct {
	s      *Server
	now    time.Time
	nowMs  int64
	script *script // nil for Do
	keys   []string
	// violation is the script's first strictness violation. It sticks:
	// the script fails with it even if the Lua code caught the raised
	// error with pcall.
	violation *ReplyError
}

// lookupCommand finds name case-insensitively without allocating for
// names already in lower case.
func lookupCommand(name string) *command {
	if cmd, ok := commands[name]; ok {
		return cmd
	}
	return commands[strings.ToLower(name)]
}

// dispatch runs one command and returns its reply; an error reply is a
// *ReplyError value.
func (c *call) dispatch(args []string) any {
	if len(args) == 0 {
		return replyErr("ERR lockgen-shim: empty command")
	}
	cmd := lookupCommand(args[0])
	if cmd == nil {
		return replyErr("ERR lockgen-shim: command " + strings.ToUpper(args[0]) + " is not allowed")
	}
	if (cmd.arity > 0 && len(args) != cmd.arity) || (cmd.arity < 0 && len(args) < -cmd.arity) {
		if c.script != nil {
			return replyErr("ERR Wrong number of args calling Redis command from script")
		}
		return wrongArgs(strings.ToLower(args[0]))
	}
	return cmd.run(c, args)
}

// lookup returns key's live entry, deleting it first if it has expired.
func (c *call) lookup(key string) *entry {
	e, ok := c.s.data[key]
	if !ok {
		return nil
	}
	if e.expired(c.nowMs) {
		delete(c.s.data, key)
		return nil
	}
	return e
}

// typedAt returns key's entry and its value as a T, or WRONGTYPE. An
// absent key gives a nil entry and empty(): a read sees what Redis sees
// for a missing key, an empty value, and a write stores it with setValue.
func typedAt[T value](c *call, key string, empty func() T) (*entry, T, *ReplyError) {
	e := c.lookup(key)
	if e == nil {
		return nil, empty(), nil
	}
	v, ok := e.val.(T)
	if !ok {
		return nil, v, errWrongType
	}
	return e, v, nil
}

// writableAt is typedAt for a write: an absent key gets empty() stored.
func writableAt[T value](c *call, key string, empty func() T) (T, *ReplyError) {
	e, v, err := typedAt(c, key, empty)
	if e == nil && err == nil {
		c.setValue(key, v)
	}
	return v, err
}

// removeEach is HDEL and ZREM: it removes each of names from the
// collection at key, replies how many were there, and deletes the key if
// nothing is left.
func removeEach[T value](c *call, key string, empty func() T, names []string, remove func(T, string) bool) any {
	_, v, err := typedAt(c, key, empty)
	if err != nil {
		return err
	}
	var n int64
	for _, name := range names {
		if remove(v, name) {
			n++
		}
	}
	c.dropIfEmpty(key, v)
	return n
}

// setValue stores v under key with no TTL, replacing whatever was there.
func (c *call) setValue(key string, v value) *entry {
	e := &entry{val: v}
	c.s.data[key] = e
	return e
}

// dropIfEmpty deletes key when its collection v has become empty, as
// Redis does.
func (c *call) dropIfEmpty(key string, v value) {
	switch v := v.(type) {
	case *hashValue:
		if len(v.fields) > 0 {
			return
		}
	case *zsetValue:
		if len(v.sorted) > 0 {
			return
		}
	}
	delete(c.s.data, key)
}

// intArg parses a 64-bit integer as Redis's string2ll does (optional '-',
// digits, no '+', no spaces, no leading zeros) or gives Redis's error.
func intArg(s string) (int64, *ReplyError) {
	digits := strings.TrimPrefix(s, "-")
	if len(s) > 20 || digits == "" || (digits[0] == '0' && len(s) > 1) {
		return 0, errNotInteger
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, errNotInteger
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, errNotInteger
	}
	return n, nil
}
