package luacover

import (
	"sort"
	"strconv"

	"github.com/yuin/gopher-lua/ast"
)

// recorderName is the local that holds a script's hit table. It is not a
// valid Lua identifier, so script code cannot name it.
const recorderName = "#coverage"

// instrument returns chunk with a recorder statement
//
//	#coverage[line] = true
//
// before every statement, in every block, nested functions included, and
// the sorted set of lines where statements start. Because the recorder
// goes before a statement, never after, return and break stay last in
// their blocks and the program's meaning does not change.
//
// usesVararg reports whether the chunk's own code (not a nested function)
// uses `...`.
func instrument(chunk []ast.Stmt) (body []ast.Stmt, lines []int, usesVararg bool) {
	in := &instrumenter{lines: map[int]bool{}}
	body = in.block(chunk)
	lines = make([]int, 0, len(in.lines))
	for l := range in.lines {
		lines = append(lines, l)
	}
	sort.Ints(lines)
	return body, lines, in.chunkVararg
}

type instrumenter struct {
	lines       map[int]bool
	depth       int  // function nesting: 0 is the chunk itself
	chunkVararg bool // the chunk itself uses `...`
}

func (in *instrumenter) block(stmts []ast.Stmt) []ast.Stmt {
	out := make([]ast.Stmt, 0, 2*len(stmts))
	for _, st := range stmts {
		line := st.Line()
		in.lines[line] = true
		out = append(out, recordStmt(line), st)
		in.stmt(st)
	}
	return out
}

// recordStmt builds `#coverage[line] = true`, positioned on line so that a
// (theoretical) error in it would point at the statement it records.
func recordStmt(line int) ast.Stmt {
	target := &ast.AttrGetExpr{Object: &ast.IdentExpr{Value: recorderName}, Key: &ast.NumberExpr{Value: strconv.Itoa(line)}}
	target.SetLine(line)
	target.Object.SetLine(line)
	target.Key.SetLine(line)
	val := &ast.TrueExpr{}
	val.SetLine(line)
	st := &ast.AssignStmt{Lhs: []ast.Expr{target}, Rhs: []ast.Expr{val}}
	st.SetLine(line)
	st.SetLastLine(line)
	return st
}

// stmt instruments the blocks and function bodies inside one statement.
func (in *instrumenter) stmt(st ast.Stmt) {
	switch st := st.(type) {
	case *ast.AssignStmt:
		in.exprs(st.Lhs)
		in.exprs(st.Rhs)
	case *ast.LocalAssignStmt:
		in.exprs(st.Exprs)
	case *ast.FuncCallStmt:
		in.expr(st.Expr)
	case *ast.DoBlockStmt:
		st.Stmts = in.block(st.Stmts)
	case *ast.WhileStmt:
		in.expr(st.Condition)
		st.Stmts = in.block(st.Stmts)
	case *ast.RepeatStmt:
		in.expr(st.Condition)
		st.Stmts = in.block(st.Stmts)
	case *ast.IfStmt:
		in.expr(st.Condition)
		st.Then = in.block(st.Then)
		st.Else = in.block(st.Else)
	case *ast.NumberForStmt:
		in.exprs([]ast.Expr{st.Init, st.Limit, st.Step})
		st.Stmts = in.block(st.Stmts)
	case *ast.GenericForStmt:
		in.exprs(st.Exprs)
		st.Stmts = in.block(st.Stmts)
	case *ast.FuncDefStmt:
		in.expr(st.Func)
	case *ast.ReturnStmt:
		in.exprs(st.Exprs)
	}
}

func (in *instrumenter) exprs(es []ast.Expr) {
	for _, e := range es {
		in.expr(e)
	}
}

// expr finds function literals inside an expression.
func (in *instrumenter) expr(e ast.Expr) {
	switch e := e.(type) {
	case *ast.FunctionExpr:
		in.depth++
		e.Stmts = in.block(e.Stmts)
		in.depth--
	case *ast.Comma3Expr:
		if in.depth == 0 {
			in.chunkVararg = true
		}
	case *ast.AttrGetExpr:
		in.expr(e.Object)
		in.expr(e.Key)
	case *ast.TableExpr:
		for _, f := range e.Fields {
			in.expr(f.Key)
			in.expr(f.Value)
		}
	case *ast.FuncCallExpr:
		in.expr(e.Func)
		in.expr(e.Receiver)
		in.exprs(e.Args)
	case *ast.LogicalOpExpr:
		in.expr(e.Lhs)
		in.expr(e.Rhs)
	case *ast.RelationalOpExpr:
		in.expr(e.Lhs)
		in.expr(e.Rhs)
	case *ast.StringConcatOpExpr:
		in.expr(e.Lhs)
		in.expr(e.Rhs)
	case *ast.ArithmeticOpExpr:
		in.expr(e.Lhs)
		in.expr(e.Rhs)
	case *ast.UnaryMinusOpExpr:
		in.expr(e.Expr)
	case *ast.UnaryNotOpExpr:
		in.expr(e.Expr)
	case *ast.UnaryLenOpExpr:
		in.expr(e.Expr)
	}
}

// wrapChunk turns the instrumented body into
//
//	local #coverage = ...
//	return (function(...) <body> end)()
//
// so the hit table arrives as the chunk's argument, is visible to the body
// only through the unnameable local, and the body's own `...` stays empty,
// as it is for a Redis script. The inner function is made vararg only when
// the body uses `...`: gopher-lua builds a Lua 5.0 `arg` table on every
// call of a vararg function that does not, which would cost an allocation
// of a few kilobytes per run.
func wrapChunk(body []ast.Stmt, vararg bool) []ast.Stmt {
	decl := &ast.LocalAssignStmt{Names: []string{recorderName}, Exprs: []ast.Expr{&ast.Comma3Expr{}}}
	fn := &ast.FunctionExpr{ParList: &ast.ParList{HasVargs: vararg}, Stmts: body}
	call := &ast.FuncCallExpr{Func: fn, AdjustRet: false}
	ret := &ast.ReturnStmt{Exprs: []ast.Expr{call}}
	return []ast.Stmt{decl, ret}
}
