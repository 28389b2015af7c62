package templates

import "github.com/dave/jennifer/jen"

// lockedMethod emits an annotated method:
//
//	func (w *TLocked) M(ctx context.Context, id string) (r0 int, err error) {
//		held, err := w.locker.Acquire(ctx, runtime.Lock{...})
//		if err != nil {
//			return r0, err
//		}
//		defer held.ReleaseInto(&err)
//		return w.inner.M(held.Context(), id)
//	}
//
// Results are named so that the release error can be joined into err, and so
// that failure paths return zero values without spelling out their types.
func lockedMethod(wr *Wrapper, m *Method) jen.Code {
	c := &chainEval{m: m}
	errName := m.Results[len(m.Results)-1].Name
	ctx := m.Params[0].Name
	held := "held"
	method := wr.TypeName + "." + m.Name

	hasSlice := false
	for i := range m.Locked.Locks {
		if sliceValue(&m.Locked.Locks[i]) != nil {
			hasSlice = true
		}
	}

	var acquireArgs []jen.Code
	if !hasSlice {
		acquireArgs = append(acquireArgs, jen.Id(ctx))
		for i := range m.Locked.Locks {
			l := &m.Locked.Locks[i]
			acquireArgs = append(acquireArgs, lockLiteral(l, method, c.keyExpr(l, c.scalarParts(l, false), nil)))
		}
	} else {
		locks := "locks"
		c.stmts = append(c.stmts, jen.Var().Id(locks).Index().Qual(runtimePath, "Lock"))
		for i := range m.Locked.Locks {
			l := &m.Locked.Locks[i]
			sv := sliceValue(l)
			if sv == nil {
				lit := lockLiteral(l, method, c.keyExpr(l, c.scalarParts(l, false), nil))
				c.stmts = append(c.stmts, jen.Id(locks).Op("=").Append(jen.Id(locks), lit))
				continue
			}
			c.appendSliceLocks(l, sv, method, locks)
		}
		acquireArgs = append(acquireArgs, jen.Id(ctx), jen.Id(locks).Op("..."))
	}

	body := c.stmts
	body = append(body, jen.List(jen.Id(held), jen.Id(errName)).Op(":=").
		Add(recvField(m, "locker")).Dot("Acquire").Call(acquireArgs...))
	onErr := []jen.Code{}
	if m.Locked.OnBusySkip {
		// SkipBusy reports the skip (EventSkipped, TrackSkips), so that a
		// call that did not run is visible though it returns nil.
		onErr = append(onErr, jen.If(recvField(m, "locker").Dot("SkipBusy").Call(jen.Id(ctx), jen.Lit(method), jen.Id(errName))).Block(
			c.fail(jen.Nil())))
	}
	onErr = append(onErr, c.fail(jen.Id(errName)))
	body = append(body,
		jen.If(jen.Id(errName).Op("!=").Nil()).Block(onErr...),
		jen.Defer().Id(held).Dot("ReleaseInto").Call(jen.Op("&").Id(errName)),
		jen.Return(innerCall(wr, m, jen.Id(held).Dot("Context").Call())),
	)
	return methodDecl(wr, m, true).Block(body...)
}

// appendSliceLocks adds the Locks of l, whose key template expands along
// the slice sv, to locks: one per element, in a loop of the generated
// code, after a check that refuses an empty slice.
func (c *chainEval) appendSliceLocks(l *Lock, sv *Value, method, locks string) {
	scalars := c.scalarParts(l, true)
	slice := c.materialize(c.value(sv, l.Template), "v")
	// An empty slice would lock nothing and run the method
	// unprotected; refuse instead.
	c.stmts = append(c.stmts, jen.If(jen.Len(slice.code()).Op("==").Lit(0)).Block(
		c.fail(invalidKey(l.Template, sv.Source+" is empty"))))
	elem := c.m.Names.Fresh("e")
	outer := c.stmts
	c.stmts = nil
	eo := operand{ident: elem}
	if sv.NilCheck {
		eo = c.nilCheck(eo, l.Template, "an element of "+sv.Source)
	}
	text := c.formatted(sv, eo, l.Template)
	c.stmts = append(c.stmts, jen.Id(locks).Op("=").Append(jen.Id(locks), lockLiteral(l, method, c.keyExpr(l, scalars, text))))
	loop := jen.For(jen.List(jen.Id("_"), jen.Id(elem)).Op(":=").Range().Add(slice.code())).Block(c.stmts...)
	c.stmts = append(outer, loop)
}
