package luashim

import (
	"math"
	"strconv"

	lua "github.com/yuin/gopher-lua"
)

// Status is a Redis status reply, such as "OK". It is distinct from a bulk
// string reply, which the shim returns as a Go string.
type Status string

// ReplyError is a Redis error reply, returned as a Go error by Eval, EvalSha
// and Do, and found inside arrays when a script returns a nested error table.
// Msg is the message exactly as a Redis client would see it, error code
// included ("ERR ...", "WRONGTYPE ...", "NOSCRIPT ...").
type ReplyError struct {
	Msg string
	// Script is the name given to Load for the script that failed, when
	// the error came out of a named script; empty otherwise. Redis reports
	// the script only by its SHA1, so the name is kept out of Msg.
	Script string
}

func (e *ReplyError) Error() string { return e.Msg }

// replyErr builds a reply error from a fixed message.
func replyErr(msg string) *ReplyError { return &ReplyError{Msg: msg} }

// Messages Redis uses, shared by several commands.
var (
	errWrongType   = replyErr("WRONGTYPE Operation against a key holding the wrong kind of value")
	errNotInteger  = replyErr("ERR value is not an integer or out of range")
	errNotFloat    = replyErr("ERR value is not a valid float")
	errMinMaxFloat = replyErr("ERR min or max is not a float")
)

func wrongArgs(cmd string) *ReplyError {
	return replyErr("ERR wrong number of arguments for '" + cmd + "' command")
}

// luaToReply converts the value a script returns into a reply, as Redis
// does: numbers become integers truncated toward zero, true becomes 1,
// false and nil become a null bulk, a table with an "err" or "ok" string
// field becomes an error or status reply, any other table an array of its
// elements up to the first nil.
func luaToReply(v lua.LValue) any {
	switch v := v.(type) {
	case lua.LNumber:
		return luaNumberToInt(float64(v))
	case lua.LString:
		return string(v)
	case lua.LBool:
		if v {
			return int64(1)
		}
		return nil
	case *lua.LTable:
		if msg, ok := errField(v); ok {
			return replyErr(msg)
		}
		if s, ok := v.RawGetString("ok").(lua.LString); ok {
			return Status(s)
		}
		arr := []any{}
		for i := 1; v.RawGetInt(i) != lua.LNil; i++ {
			arr = append(arr, luaToReply(v.RawGetInt(i)))
		}
		return arr
	default:
		return nil
	}
}

// luaNumberToInt truncates toward zero like C's (long long) cast; values
// outside the int64 range saturate instead of being undefined.
func luaNumberToInt(f float64) int64 {
	switch {
	case math.IsNaN(f):
		return math.MinInt64 // what the x86-64 conversion gives Redis
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// replyToLua converts a command reply into the value redis.call returns:
// integers become numbers, bulk strings strings, a null bulk or null array
// false, arrays tables, a status a table {ok=...} and an error a table
// {err=...}.
func replyToLua(L *lua.LState, r any) lua.LValue {
	switch r := r.(type) {
	case int64:
		return lua.LNumber(r)
	case string:
		return lua.LString(r)
	case Status:
		return fieldTable(L, "ok", string(r))
	case *ReplyError:
		return fieldTable(L, "err", r.Msg)
	case []any:
		t := L.CreateTable(len(r), 0)
		for i, el := range r {
			t.RawSetInt(i+1, replyToLua(L, el))
		}
		return t
	default: // nil: null bulk or null array
		return lua.LFalse
	}
}

// fieldTable builds {name=s}: a status reply is {ok=...} in Lua, an error
// reply {err=...}.
func fieldTable(L *lua.LState, name, s string) *lua.LTable {
	t := L.CreateTable(0, 1)
	t.RawSetString(name, lua.LString(s))
	return t
}

// formatNumber renders a Lua number passed to redis.call as the command
// argument Redis would build, and a sorted-set score as Redis 7.0 replies
// it: "%.17g", so integers carry no ".0".
func formatNumber(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	return strconv.FormatFloat(f, 'g', 17, 64)
}
