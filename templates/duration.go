package templates

import (
	"time"

	"github.com/dave/jennifer/jen"
)

// durationCode writes d as the largest whole unit that divides it, e.g.
// 90 * time.Second or time.Minute, so generated options read like the
// annotation.
func durationCode(d time.Duration) jen.Code {
	units := []struct {
		unit time.Duration
		name string
	}{
		{time.Hour, "Hour"}, {time.Minute, "Minute"}, {time.Second, "Second"},
		{time.Millisecond, "Millisecond"}, {time.Microsecond, "Microsecond"}, {time.Nanosecond, "Nanosecond"},
	}
	for _, u := range units {
		if d%u.unit != 0 {
			continue
		}
		if d == u.unit {
			return jen.Qual("time", u.name)
		}
		return jen.Lit(int(d/u.unit)).Op("*").Qual("time", u.name)
	}
	return jen.Qual("time", "Duration").Call(jen.Lit(int64(d))) // unreachable: Nanosecond divides everything
}
