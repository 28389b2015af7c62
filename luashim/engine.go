package luashim

import (
	"slices"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// engine is the one Lua state of a Server. Scripts run one at a time (the
// server's mutex), so one state serves them all; what a script could leave
// behind is fenced off instead: globals and library tables are read-only,
// KEYS and ARGV are replaced on every run.
type engine struct {
	L *lua.LState
	// globals holds the allowed globals plus KEYS and ARGV; env is the
	// empty, read-only proxy scripts see as their environment.
	globals, env *lua.LTable
	// onError runs where an error is raised, to note the script line.
	onError *lua.LFunction
	cur     *call // the call being run
	errLine int   // line of the last error raised, from onError
}

// allowedBase lists the base-library functions scripts may use.
var allowedBase = []string{
	"assert", "error", "ipairs", "next", "pairs", "select",
	"tonumber", "tostring", "type", "unpack", "xpcall", "rawequal",
}

func newEngine() *engine {
	L := lua.NewState(lua.Options{SkipOpenLibs: true, CallStackSize: 256})
	for _, open := range []lua.LGFunction{lua.OpenBase, lua.OpenTable, lua.OpenString, lua.OpenMath} {
		L.Push(L.NewFunction(open))
		L.Call(0, 0)
	}
	e := &engine{L: L}
	loaded := L.G.Global
	e.globals = L.NewTable()
	for _, name := range allowedBase {
		e.globals.RawSetString(name, loaded.RawGetString(name))
	}
	readOnly := func(string) string { return "Attempt to modify a readonly table" }
	for _, lib := range []string{"string", "table", "math"} {
		e.globals.RawSetString(lib, e.proxy(loaded.RawGetString(lib), readOnly))
	}
	e.globals.RawSetString("redis", e.proxy(e.redisLib(), readOnly))
	e.globals.RawSetString("pcall", L.NewFunction(redisStylePcall))
	globalsMeta := L.NewTable()
	globalsMeta.RawSetString("__index", e.refuser(func(name string) string {
		return "Script attempted to access nonexistent global variable '" + name + "'"
	}))
	L.SetMetatable(e.globals, globalsMeta)
	e.env = e.proxy(e.globals, func(name string) string {
		return "Script attempted to create or modify global variable '" + name + "'"
	})
	e.onError = L.NewFunction(func(L *lua.LState) int {
		// The frames of the failed call are still on the stack: the
		// innermost Lua frame (Go builtins such as error and redis.call
		// have no line) is where the script failed.
		for level := 1; level <= 8 && e.errLine == 0; level++ {
			e.errLine = lineOf(L.Where(level))
		}
		L.Push(L.Get(1))
		return 1
	})
	return e
}

// redisStylePcall is pcall as Redis 7 redefines it: an error raised as an
// error table, {err=msg} (which is how redis.call fails), is caught as the
// plain string msg.
func redisStylePcall(L *lua.LState) int {
	L.CheckAny(1)
	err := L.PCall(L.GetTop()-1, lua.MultRet, nil)
	if err == nil {
		L.Insert(lua.LTrue, 1)
		return L.GetTop()
	}
	L.Push(lua.LFalse)
	obj := err.(*lua.ApiError).Object
	if msg, ok := errField(obj); ok {
		obj = lua.LString(msg)
	}
	L.Push(obj)
	return 2
}

// errField returns the message of an error table {err=msg}.
func errField(v lua.LValue) (string, bool) {
	if t, ok := v.(*lua.LTable); ok {
		msg, ok := t.RawGetString("err").(lua.LString)
		return string(msg), ok
	}
	return "", false
}

// proxy returns an empty table that reads through to index and refuses
// writes with a violation: Redis 7 makes its library tables and the
// globals read-only.
func (e *engine) proxy(index lua.LValue, refuse func(key string) string) *lua.LTable {
	proxy, meta := e.L.NewTable(), e.L.NewTable()
	meta.RawSetString("__index", index)
	meta.RawSetString("__newindex", e.refuser(refuse))
	meta.RawSetString("__metatable", lua.LFalse)
	e.L.SetMetatable(proxy, meta)
	return proxy
}

// refuser returns a metamethod that raises a violation with the message
// msg gives for the key looked up or assigned.
func (e *engine) refuser(msg func(key string) string) *lua.LFunction {
	return e.L.NewFunction(func(L *lua.LState) int {
		e.violation(L, msg(L.ToString(2)))
		return 0
	})
}

// violation records a strictness violation (the first one sticks) and
// raises it, aborting the script.
func (e *engine) violation(L *lua.LState, msg string) {
	where := L.Where(1)
	full := replyErr("ERR lockgen-shim: " + where + " " + msg)
	if where == "" {
		full = replyErr("ERR lockgen-shim: " + msg)
	}
	if c := e.cur; c.script != nil && c.violation == nil {
		full.Script = c.script.name
		c.violation = full
	}
	e.raise(L, full.Msg)
}

// raise throws an error table {err=msg}, which is how redis.call reports a
// failed command to the script.
func (e *engine) raise(L *lua.LState, msg string) {
	L.Error(fieldTable(L, "err", msg), 1)
}

// redisLib builds the `redis` table: call, pcall and error_reply. The
// scripts use nothing else of it.
func (e *engine) redisLib() *lua.LTable {
	L := e.L
	t := L.NewTable()
	t.RawSetString("call", L.NewFunction(func(L *lua.LState) int { return e.redisCall(L, true) }))
	t.RawSetString("pcall", L.NewFunction(func(L *lua.LState) int { return e.redisCall(L, false) }))
	t.RawSetString("error_reply", L.NewFunction(func(L *lua.LState) int {
		L.Push(fieldTable(L, "err", L.CheckString(1)))
		return 1
	}))
	return t
}

// redisCall implements redis.call (raise = true) and redis.pcall.
func (e *engine) redisCall(L *lua.LState, raise bool) int {
	n := L.GetTop()
	if n == 0 {
		return e.fail(L, raise, "ERR Please specify at least one argument for this redis lib call")
	}
	args := make([]string, n)
	for i := 1; i <= n; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			args[i-1] = string(v)
		case lua.LNumber:
			args[i-1] = formatNumber(float64(v))
		default:
			return e.fail(L, raise, "ERR Lua redis lib command arguments must be strings or integers")
		}
	}
	c := e.cur
	cmd := lookupCommand(args[0])
	if cmd == nil {
		e.violation(L, "command "+strings.ToUpper(args[0])+" is not allowed")
		return 0
	}
	for _, k := range cmd.touchedKeys(args) {
		if !slices.Contains(c.keys, k) {
			e.violation(L, strings.ToLower(args[0])+" touches "+strconv.Quote(k)+", which is not in KEYS")
			return 0
		}
	}
	reply := c.dispatch(args)
	if rerr, ok := reply.(*ReplyError); ok {
		return e.fail(L, raise, rerr.Msg)
	}
	L.Push(replyToLua(L, reply))
	return 1
}

// fail reports a failed command to the script: raised by redis.call,
// returned as {err=msg} by redis.pcall.
func (e *engine) fail(L *lua.LState, raise bool, msg string) int {
	if raise {
		e.raise(L, msg)
		return 0
	}
	L.Push(fieldTable(L, "err", msg))
	return 1
}

// run executes one script call.
func (e *engine) run(c *call, args []string) (any, error) {
	L, sc := e.L, c.script
	e.cur = c
	e.errLine = 0
	defer func() { e.cur = nil }()

	e.globals.RawSetString("KEYS", stringArray(L, c.keys))
	e.globals.RawSetString("ARGV", stringArray(L, args))

	fn := L.NewFunctionFromProto(sc.proto)
	fn.Env = e.env
	L.Push(fn)
	nargs := 0
	if sc.arg != nil {
		L.Push(sc.arg)
		nargs = 1
	}
	err := L.PCall(nargs, 1, e.onError)
	if v := c.violation; v != nil {
		if err == nil {
			L.Pop(1)
		}
		return nil, v
	}
	if err != nil {
		return nil, e.scriptError(sc, err)
	}
	ret := L.Get(-1)
	L.Pop(1)
	reply := luaToReply(ret)
	if rerr, ok := reply.(*ReplyError); ok {
		rerr.Script = sc.name
		return nil, rerr
	}
	return reply, nil
}

// scriptError turns an error raised in a script into the reply Redis 7
// gives: the message (a raised {err=...} table's text, or "ERR " and the
// Lua error), then " script: <sha>, on @user_script:<line>.".
func (e *engine) scriptError(sc *script, err error) *ReplyError {
	msg := "ERR " + err.Error()
	if apiErr, ok := err.(*lua.ApiError); ok {
		msg = "ERR " + apiErr.Object.String()
		if m, ok := errField(apiErr.Object); ok {
			msg = m
		}
	}
	line := e.errLine
	if line == 0 {
		line = lineOf(strings.TrimPrefix(msg, "ERR "))
	}
	return &ReplyError{
		Msg:    msg + " script: " + sc.sha + ", on @" + chunkName + ":" + strconv.Itoa(line) + ".",
		Script: sc.name,
	}
}

// stringArray builds a Lua array of ss, as KEYS and ARGV are.
func stringArray(L *lua.LState, ss []string) *lua.LTable {
	t := L.CreateTable(len(ss), 0)
	for i, s := range ss {
		t.RawSetInt(i+1, lua.LString(s))
	}
	return t
}
