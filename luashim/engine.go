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
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
	} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	e := &engine{L: L}
	loaded := L.G.Global
	e.globals = L.NewTable()
	for _, name := range allowedBase {
		e.globals.RawSetString(name, loaded.RawGetString(name))
	}
	for _, lib := range []string{"string", "table", "math"} {
		e.globals.RawSetString(lib, e.readOnly(loaded.RawGetString(lib).(*lua.LTable)))
	}
	e.globals.RawSetString("redis", e.readOnly(e.redisLib()))
	e.globals.RawSetString("pcall", L.NewFunction(redisStylePcall))
	globalsMeta := L.NewTable()
	globalsMeta.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		e.violation(L, "Script attempted to access nonexistent global variable '"+L.ToString(2)+"'")
		return 0
	}))
	L.SetMetatable(e.globals, globalsMeta)

	e.env = L.NewTable()
	envMeta := L.NewTable()
	envMeta.RawSetString("__index", e.globals)
	envMeta.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		e.violation(L, "Script attempted to create or modify global variable '"+L.ToString(2)+"'")
		return 0
	}))
	envMeta.RawSetString("__metatable", lua.LFalse)
	L.SetMetatable(e.env, envMeta)

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
	if t, ok := obj.(*lua.LTable); ok {
		if msg, ok := t.RawGetString("err").(lua.LString); ok {
			obj = msg
		}
	}
	L.Push(obj)
	return 2
}

// readOnly returns an empty proxy that reads through to t and refuses
// writes, as Redis 7 makes its library tables read-only.
func (e *engine) readOnly(t *lua.LTable) *lua.LTable {
	proxy := e.L.NewTable()
	meta := e.L.NewTable()
	meta.RawSetString("__index", t)
	meta.RawSetString("__newindex", e.L.NewFunction(func(L *lua.LState) int {
		e.violation(L, "Attempt to modify a readonly table")
		return 0
	}))
	meta.RawSetString("__metatable", lua.LFalse)
	e.L.SetMetatable(proxy, meta)
	return proxy
}

// violation records a strictness violation (the first one sticks) and
// raises it, aborting the script.
func (e *engine) violation(L *lua.LState, msg string) {
	where := L.Where(1)
	full := replyErr("ERR lockgen-shim: " + where + " " + msg)
	if where == "" {
		full = replyErr("ERR lockgen-shim: " + msg)
	}
	e.recordViolation(full)
	e.raise(L, full.Msg)
}

func (e *engine) recordViolation(err *ReplyError) {
	if run := e.cur.run; run != nil && run.violation == nil {
		err.Script = run.script.name
		run.violation = err
	}
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
	for _, k := range cmd.keys(args) {
		if !slices.Contains(c.run.keys, k) {
			e.violation(L, cmd.name+" touches "+strconv.Quote(k)+", which is not in KEYS")
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
func (e *engine) run(c *call, sc *script, keys, args []string) (any, error) {
	L := e.L
	e.cur = c
	e.errLine = 0
	defer func() { e.cur = nil }()

	keyTable := L.CreateTable(len(keys), 0)
	for i, k := range keys {
		keyTable.RawSetInt(i+1, lua.LString(k))
	}
	argTable := L.CreateTable(len(args), 0)
	for i, a := range args {
		argTable.RawSetInt(i+1, lua.LString(a))
	}
	e.globals.RawSetString("KEYS", keyTable)
	e.globals.RawSetString("ARGV", argTable)

	fn := L.NewFunctionFromProto(sc.proto)
	fn.Env = e.env
	L.Push(fn)
	nargs := 0
	if sc.arg != nil {
		L.Push(sc.arg)
		nargs = 1
	}
	err := L.PCall(nargs, 1, e.onError)
	if v := c.run.violation; v != nil {
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
	var msg string
	apiErr, ok := err.(*lua.ApiError)
	switch {
	case !ok:
		msg = "ERR " + err.Error()
	default:
		if t, isTable := apiErr.Object.(*lua.LTable); isTable {
			if s, isString := t.RawGetString("err").(lua.LString); isString {
				msg = string(s)
				break
			}
		}
		msg = "ERR " + apiErr.Object.String()
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
