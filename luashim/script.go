package luashim

import (
	"fmt"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
	"github.com/yuin/gopher-lua/parse"

	"github.com/lockgen/lockgen/internal/keyslot"
)

// chunkName is what Redis 7 calls every script in error messages
// ("user_script:12: ..."); the shim uses it too so that messages match.
const chunkName = "user_script"

// Transform rewrites a script's parsed chunk before it is compiled, for a
// test tool such as a coverage recorder (internal/luacover). arg, unless
// nil, is passed to the compiled chunk, as its `...`, on every run.
type Transform func(name string, chunk []ast.Stmt) (body []ast.Stmt, arg lua.LValue)

// script is one loaded script: its compiled code and the argument its
// transform asked for.
type script struct {
	name  string
	sha   string
	proto *lua.FunctionProto
	arg   lua.LValue
}

// compileScript parses src, transforms it if asked and compiles it.
func compileScript(name, src, sha string, transform Transform) (*script, error) {
	chunk, err := parse.Parse(strings.NewReader(src), chunkName)
	var arg lua.LValue
	var proto *lua.FunctionProto
	if err == nil {
		if transform != nil {
			chunk, arg = transform(name, chunk)
		}
		proto, err = lua.Compile(chunk, chunkName)
	}
	if err != nil {
		return nil, &ReplyError{Msg: "ERR Error compiling script (new function): " + compileMessage(err), Script: name}
	}
	// A chunk is a vararg function, and gopher-lua gives one that does not
	// use `...` a Lua 5.0 `arg` table, built on every run (a few kilobytes).
	// A chunk has no local to hold it (nested functions do), so skip it.
	proto.IsVarArg &^= lua.VarArgNeedsArg
	return &script{name: name, sha: sha, proto: proto, arg: arg}, nil
}

// compileMessage flattens a gopher-lua parse or compile error to one line.
func compileMessage(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// runLocked executes sc with mu held.
func (s *Server) runLocked(sc *script, keys, args []string) (any, error) {
	if err := checkSameSlot(keys); err != nil {
		err.Script = sc.name
		return nil, err
	}
	if s.engine == nil {
		s.engine = newEngine()
	}
	return s.engine.run(s.newCall(sc, keys), args)
}

// checkSameSlot enforces that all KEYS of one call map to one Cluster slot.
func checkSameSlot(keys []string) *ReplyError {
	if len(keys) < 2 {
		return nil
	}
	first := keyslot.Of(keys[0])
	for _, k := range keys[1:] {
		if slot := keyslot.Of(k); slot != first {
			return replyErr(fmt.Sprintf("ERR lockgen-shim: KEYS hash to different cluster slots: %q is in slot %d, %q in slot %d", keys[0], first, k, slot))
		}
	}
	return nil
}

// lineOf extracts N from a gopher-lua position prefix "user_script:N:".
func lineOf(where string) int {
	rest, isScript := strings.CutPrefix(where, chunkName+":")
	num, _, found := strings.Cut(rest, ":")
	if !isScript || !found {
		return 0
	}
	n, _ := strconv.Atoi(num)
	return n
}
