package generator

import (
	"go/token"
	"go/types"
	"strings"

	"github.com/lockgen/lockgen/internal/annotation"
	"github.com/lockgen/lockgen/templates"
)

// locks parses every annotation of a method and resolves its templates.
func (a *analysis) locks(am *annotatedMethod, sig *types.Signature, params []templates.Var) (*templates.Locked, bool) {
	ok := true
	lk := &templates.Locked{}
	var skipAt, errorAt token.Pos = token.NoPos, token.NoPos
	for _, c := range am.comments {
		at := func(offset int) token.Pos { return c.Slash + token.Pos(offset) }
		ann, errs := annotation.Parse(c.Text)
		for _, e := range errs {
			a.errorf(at(e.Offset), e.Msg)
		}
		if len(errs) > 0 {
			ok = false
			continue
		}
		if !templates.KnownKind(string(ann.Kind)) {
			a.errorf(at(ann.KindOffset), "kind "+string(ann.Kind)+" has no emitter in package templates")
			ok = false
			continue
		}
		if ann.OnBusy == annotation.OnBusySkip {
			skipAt = at(ann.OnBusyOffset)
		} else if errorAt == token.NoPos {
			errorAt = at(ann.KindOffset)
			if ann.OnBusyOffset >= 0 {
				errorAt = at(ann.OnBusyOffset)
			}
		}
		for _, tmpl := range ann.Keys {
			a.recordKey(keyUse{kind: ann.Kind, permits: ann.Permits, template: tmpl, pos: at(tmpl.Offset), method: methodName(am)})
			l := templates.Lock{
				Kind:     string(ann.Kind),
				Template: tmpl.Source,
				Lease:    ann.Lease,
				NoRenew:  !ann.Renew,
				Wait:     ann.Wait,
				HasWait:  ann.HasWait || ann.OnBusy == annotation.OnBusySkip, // skip without wait= tries once
				Permits:  ann.Permits,
			}
			var partsOK bool
			if l.Parts, partsOK = a.keyParts(tmpl, sig, params, at); !partsOK {
				ok = false
			}
			lk.Locks = append(lk.Locks, l)
		}
	}
	if skipAt != token.NoPos && errorAt != token.NoPos {
		a.errorf(skipAt, "onbusy=skip must be on every //lock: line of method "+am.name.Name+" or on none: a busy lock fails the whole acquisition")
		ok = false
	}
	lk.OnBusySkip = skipAt != token.NoPos
	return lk, ok
}

func paramList(params []templates.Var, sig *types.Signature) string {
	var names []string
	for i := range sig.Params().Len() {
		if n := sig.Params().At(i).Name(); n != "" && n != "_" {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return "it has no named parameters"
	}
	return "parameters: " + strings.Join(names, ", ")
}

// methodName is Type.Method for messages.
func methodName(am *annotatedMethod) string {
	if tn := receiverTypeName(am.fn); tn != nil {
		return tn.Name() + "." + am.name.Name
	}
	return am.name.Name
}

// keyParts resolves the parts of one key template: literals as they are,
// placeholders to the values the wrapper reads (placeholder). It reports
// each bad placeholder, and a second slice placeholder: a template may
// expand into several keys along one slice only.
func (a *analysis) keyParts(tmpl annotation.Template, sig *types.Signature, params []templates.Var, at func(int) token.Pos) ([]templates.KeyPart, bool) {
	ok := true
	var parts []templates.KeyPart
	var firstSlice *annotation.Placeholder
	for _, part := range tmpl.Parts {
		if part.Placeholder == nil {
			parts = append(parts, templates.KeyPart{Literal: part.Literal})
			continue
		}
		v, vOK := a.placeholder(part.Placeholder, sig, params, at)
		if !vOK {
			ok = false
			continue
		}
		if v.Slice {
			if firstSlice != nil {
				a.errorf(at(part.Offset), "key template "+tmpl.Source+" has two slice placeholders, <"+firstSlice.Source+"> and <"+part.Placeholder.Source+">; at most one may expand into several keys")
				ok = false
				continue
			}
			firstSlice = part.Placeholder
		}
		parts = append(parts, templates.KeyPart{Value: v})
	}
	return parts, ok
}
