// Package iface wraps an interface with a decorator, including unnamed
// parameters and a variadic one.
package iface

import (
	"context"
	"io"
)

type Repository interface {
	// Update changes a row.
	//
	//lock:write key=row:<table>:<id>
	//lock:read key=schema:<table>
	Update(ctx context.Context, table string, id int, cols ...string) error

	//lock:mutex key=flush onbusy=skip wait=0
	Flush(context.Context) (int, io.Reader, error)

	Name() string
}
