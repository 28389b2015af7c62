package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// ErrStaleFence is what SetStatus returns when the row was written with a
// newer token than the caller's: the caller's lock was lost and someone
// else has held it since.
var ErrStaleFence = errors.New("stale fence: a newer lock holder has written this order")

// ErrNoOrder is what SetStatus returns for an order that does not exist.
var ErrNoOrder = errors.New("no such order")

// schema keeps the token of the last write in the row it protects.
const schema = `CREATE TABLE IF NOT EXISTS orders (
	id     TEXT PRIMARY KEY,
	status TEXT NOT NULL,
	fence  INTEGER NOT NULL DEFAULT 0
)`

// fencedUpdate is the whole pattern: the token is part of the condition,
// so the database itself refuses a write older than the last one, however
// late it arrives. An equal token is the same grant writing again.
const fencedUpdate = `UPDATE orders SET status = $3, fence = $1 WHERE id = $2 AND fence <= $1`

// Orders is a table of orders whose status is written under a lockgen lock.
type Orders struct{ db *sql.DB }

// NewOrders creates the table if needed.
func NewOrders(ctx context.Context, db *sql.DB) (*Orders, error) {
	if _, err := db.ExecContext(ctx, schema); err != nil {
		return nil, fmt.Errorf("creating the orders table: %w", err)
	}
	return &Orders{db: db}, nil
}

// Add inserts an order with no write fenced yet.
func (o *Orders) Add(ctx context.Context, id, status string) error {
	_, err := o.db.ExecContext(ctx, `INSERT INTO orders (id, status) VALUES ($1, $2)`, id, status)
	return err
}

// SetStatus writes status with the caller's fencing token
// (runtime.Fence(ctx)). It returns ErrStaleFence, naming both tokens, if
// the row holds a newer one; nothing is written then.
func (o *Orders) SetStatus(ctx context.Context, id, status string, fence int64) error {
	res, err := o.db.ExecContext(ctx, fencedUpdate, fence, id, status)
	if err != nil {
		return fmt.Errorf("order %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("order %s: %w", id, err)
	}
	if n == 1 {
		return nil
	}
	// No row changed: find out why, for the error (the decision was the
	// UPDATE's).
	_, stored, err := o.Status(ctx, id)
	if err != nil {
		return err
	}
	return fmt.Errorf("order %s: %w (stored %d, this write %d)", id, ErrStaleFence, stored, fence)
}

// Status returns an order's status and the token of its last write.
func (o *Orders) Status(ctx context.Context, id string) (status string, fence int64, err error) {
	err = o.db.QueryRowContext(ctx, `SELECT status, fence FROM orders WHERE id = $1`, id).Scan(&status, &fence)
	if errors.Is(err, sql.ErrNoRows) {
		return "", 0, fmt.Errorf("order %s: %w", id, ErrNoOrder)
	}
	return status, fence, err
}
