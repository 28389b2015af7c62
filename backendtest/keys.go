package backendtest

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/internal/family"
	"github.com/lockgen/lockgen/lua"
	"github.com/lockgen/lockgen/runtime"
)

// lockKeys are the keys a lock of kind on key may write, from the family
// table the runtime reads too: the base key, then its family's others (the
// last suffix is the wake channel, no key). They share the hash tag {key},
// so one script call reaches all of them on a Cluster. types says what
// each holds: the base key of a mutex or fair lock is a string, of a
// read/write lock or semaphore a hash; the others are sorted sets.
func lockKeys(prefix string, kind runtime.Kind, key string) (keys, types []string) {
	fam, ok := family.Named(kind.String())
	if !ok {
		panic(fmt.Sprintf("backendtest: kind %v has no family row", kind))
	}
	keys = fam.RenderKeys(prefix, key, nil)
	keys = keys[:len(keys)-1] // the wake channel
	types = []string{"string"}
	if fam.Family == family.Read.Family || fam.Family == family.Semaphore.Family {
		types[0] = "hash"
	}
	for range keys[1:] {
		types = append(types, "zset")
	}
	return keys, types
}

func script(name, src string) *lua.Script {
	sum := sha1.Sum([]byte(src))
	return &lua.Script{Name: name, Source: src, SHA1: hex.EncodeToString(sum[:])}
}

// describe replies, per KEY (whose type ARGV gives, in lockKeys's words),
// "<type> <what>|<pttl>": a string's value, a hash's field names (sorted),
// a set's size; "none |-2" for no key. It reads with the commands the
// lock scripts use, which are all the embedded shim emulates.
var describe = script("backendtest_describe", `
local out = {}
for i, k in ipairs(KEYS) do
  local t, what, pttl = ARGV[i], '', redis.call('PTTL', k)
  if pttl == -2 then
    t = 'none'
  elseif t == 'string' then
    what = redis.call('GET', k)
  elseif t == 'hash' then
    local all, f = redis.call('HGETALL', k), {}
    for j = 1, #all, 2 do f[#f + 1] = all[j] end
    table.sort(f)
    what = table.concat(f, ',')
  else
    what = tostring(redis.call('ZCARD', k))
  end
  out[i] = t .. ' ' .. what .. '|' .. tostring(pttl)
end
return out`)

var deleteKeys = script("backendtest_delete", `return redis.call('DEL', unpack(KEYS))`)

// leftovers lists what a released lock of kind on key keeps, on any
// server, beyond its fence floor: a tombstone string "! <fence> <waiters>"
// or a hash with only "f", either with a TTL, is the floor; anything else
// (a holder, a waiter registration, a queue, a reader or permit set, a key
// without a TTL) is left behind.
func (e *env) leftovers(kind runtime.Kind, key string) []string {
	e.t.Helper()
	keys, types := lockKeys(e.prefix, kind, key)
	var out []string
	for i, srv := range e.tg.Servers {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		v, err := srv.Eval(ctx, backend.Call{Script: describe, Keys: keys, Args: types})
		cancel()
		descs, ok := v.([]any)
		if err != nil || !ok || len(descs) != len(keys) {
			e.t.Fatalf("server %d: reading %v: %#v, %v", i+1, keys, v, err)
		}
		for j, d := range descs {
			if s, _ := d.(string); !floorOnly(s) {
				out = append(out, fmt.Sprintf("server %d: %s = %s", i+1, keys[j], s))
			}
		}
	}
	return out
}

// floorOnly reports whether a description by describe is no key, or a
// key that only keeps a fence for the floor and will expire.
func floorOnly(desc string) bool {
	what, pttl, _ := strings.Cut(desc, "|")
	if what == "none " {
		return true
	}
	if pttl == "-1" || strings.HasPrefix(pttl, "-") {
		return false
	}
	return strings.HasPrefix(what, "string ! ") || what == "hash f"
}

// checkClean fails the scenario if a released lock left more than its floor.
func (e *env) checkClean(kind runtime.Kind, key string) {
	e.t.Helper()
	if left := e.leftovers(kind, key); len(left) > 0 {
		e.t.Errorf("%v %q: left behind after every holder and waiter is gone:\n  %s", kind, key, strings.Join(left, "\n  "))
	}
}

// deleteLock deletes every key of the lock on every server, behind its
// holders' back.
func (e *env) deleteLock(kind runtime.Kind, key string) {
	e.t.Helper()
	keys, _ := lockKeys(e.prefix, kind, key)
	for i, srv := range e.tg.Servers {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := srv.Eval(ctx, backend.Call{Script: deleteKeys, Keys: keys})
		cancel()
		if err != nil {
			e.t.Fatalf("server %d: deleting %v: %v", i+1, keys, err)
		}
	}
}
