package fencing_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/embedded"
	"github.com/lockgen/lockgen/fencing"
	"github.com/lockgen/lockgen/goredisbackend"
	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/runtime"
)

// Set and Get through both backends: the sentinel errors, the tokens named
// in a stale write's error, and the value a refused write leaves alone.
func TestSetAndGet(t *testing.T) {
	backends := map[string]backend.Backend{
		"embedded":     embedded.NewBackend(nil),
		"redis-server": goredisbackend.New(redistest.Start(t).Client(t)),
	}
	for name, b := range backends {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if _, _, err := fencing.Get(ctx, b, "order:1"); !errors.Is(err, fencing.ErrNotFound) {
				t.Fatalf("Get of a key never written: %v, want ErrNotFound", err)
			}
			if err := fencing.Set(ctx, b, "order:1", "paid", 200); err != nil {
				t.Fatal(err)
			}
			err := fencing.Set(ctx, b, "order:1", "late write", 199)
			if !errors.Is(err, fencing.ErrStaleFence) || !strings.Contains(err.Error(), "holds fence 200, the write had 199") {
				t.Fatalf("write with an older token: %v, want ErrStaleFence naming both tokens", err)
			}
			if err := fencing.Set(ctx, b, "order:1", "shipped", 200); err != nil {
				t.Fatalf("second write of the same grant: %v", err)
			}
			v, f, err := fencing.Get(ctx, b, "order:1")
			if err != nil || v != "shipped" || f != 200 {
				t.Fatalf("Get: %q, %d, %v; want shipped, 200", v, f, err)
			}
			for _, bad := range []int64{0, -1, fencing.MaxFence + 1} {
				if err := fencing.Set(ctx, b, "order:1", "x", bad); !errors.Is(err, fencing.ErrInvalidFence) {
					t.Errorf("token %d: %v, want ErrInvalidFence", bad, err)
				}
			}
			if err := fencing.Set(ctx, b, "order:1", "x", fencing.MaxFence); err != nil {
				t.Errorf("token MaxFence: %v", err)
			}
		})
	}
}

// A holder whose lock was taken over by a newer holder cannot write: the
// tokens runtime.Fence hands out are what Set compares.
func TestLostHolderCannotOverwrite(t *testing.T) {
	b := embedded.NewBackend(nil)
	l := runtime.NewWithBackend(b)
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	lock := runtime.Lock{Kind: runtime.Mutex, Key: "order:7"}

	first, err := l.Acquire(ctx, lock)
	if err != nil {
		t.Fatal(err)
	}
	old, _ := runtime.Fence(first.Context())
	// The first holder "pauses": its lock goes (here by release), and a new
	// holder takes it and writes.
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	second, err := l.Acquire(ctx, lock)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Release()
	newer, _ := runtime.Fence(second.Context())
	if err := fencing.Set(ctx, b, "order:7:status", "refunded", newer); err != nil {
		t.Fatal(err)
	}
	if err := fencing.Set(ctx, b, "order:7:status", "shipped", old); !errors.Is(err, fencing.ErrStaleFence) {
		t.Fatalf("the first holder's late write: %v, want ErrStaleFence", err)
	}
	if v, _, _ := fencing.Get(ctx, b, "order:7:status"); v != "refunded" {
		t.Fatalf("value %q after the stale write, want refunded", v)
	}
}
