package main

import (
	"testing"

	"github.com/lockgen/lockgen/internal/family"
	"github.com/lockgen/lockgen/runtime"
)

// A scan reads every lock family's base key back as the lock a LOCK name
// gives, whatever kind took it; the lock's other keys are not base keys.
func TestBaseKeysOfEveryFamily(t *testing.T) {
	const prefix = "lockgen:"
	for _, f := range family.All {
		base := prefix + f.Family + ":{order:1}"
		got, ok := parseBaseKey(prefix, base)
		if !ok {
			t.Errorf("%s: base key %q not read", f.Name, base)
			continue
		}
		if got.name != f.LockName()+":order:1" || got.lock.Key != "order:1" {
			t.Errorf("%s: %q read as %q (%+v)", f.Name, base, got.name, got.lock)
		}
		named, err := parseLockName(got.name)
		if err != nil || named != got.lock {
			t.Errorf("%s: LOCK %q parses as %+v, %v; the scan found %+v", f.Name, got.name, named, err, got.lock)
		}
		for _, s := range f.Suffixes {
			if _, ok := parseBaseKey(prefix, base+s); ok {
				t.Errorf("%s: %q taken for a base key", f.Name, base+s)
			}
		}
	}
	for _, other := range []string{"lockgen:latch:{order:1}", "lockgen:semaphore:{order:1}", "lockgen:read:{order:1}"} {
		if got, ok := parseBaseKey(prefix, other); ok {
			t.Errorf("%q read as the lock %q", other, got.name)
		}
	}
}

// lockName names read and write as the one read/write lock.
func TestLockNameOfEachKind(t *testing.T) {
	want := map[runtime.Kind]string{runtime.Mutex: "mutex:k", runtime.Fair: "fair:k", runtime.Read: "rw:k", runtime.Write: "rw:k", runtime.Semaphore: "semaphore:k"}
	for k, w := range want {
		if got := lockName(k, "k"); got != w {
			t.Errorf("lockName(%s) = %q, want %q", k, got, w)
		}
	}
}
