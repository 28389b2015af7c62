package templates

import (
	"github.com/dave/jennifer/jen"
	"github.com/lockgen/lockgen/internal/family"
)

// semaphore: at most Permits holders of the key; the only kind that carries
// an extra field.
func init() {
	registerKind(family.Semaphore, kindEmitter{
		extraFields: func(l *Lock) []jen.Code {
			return []jen.Code{jen.Id("Permits").Op(":").Lit(l.Permits)}
		},
	})
}
