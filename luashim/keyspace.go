package luashim

import (
	"cmp"
	"slices"
	"strings"
)

// value is what a key holds: one of *stringValue, *hashValue, *zsetValue.
type value any

type stringValue struct{ s string }

// hashValue keeps fields in insertion order, as Redis's listpack encoding
// of small hashes does, so HGETALL replies in the same order
// as a real server for the small hashes locks use.
type hashValue struct {
	fields []string
	values map[string]string
}

func newHash() *hashValue { return &hashValue{values: map[string]string{}} }

// set stores field=val and reports whether the field is new.
func (h *hashValue) set(field, val string) bool {
	_, exists := h.values[field]
	h.values[field] = val
	if !exists {
		h.fields = append(h.fields, field)
	}
	return !exists
}

// del removes field and reports whether it was there.
func (h *hashValue) del(field string) bool {
	if _, ok := h.values[field]; !ok {
		return false
	}
	delete(h.values, field)
	i := slices.Index(h.fields, field)
	h.fields = slices.Delete(h.fields, i, i+1)
	return true
}

// zsetValue is a sorted set: members ordered by (score, member), kept as a
// sorted slice plus an index by member. Lock data sets are small, so the
// O(n) insert is cheaper than a skip list's constant factors.
type zsetValue struct {
	sorted []ZMember
	scores map[string]float64
}

func newZSet() *zsetValue { return &zsetValue{scores: map[string]float64{}} }

// position returns where m sits (or would sit) in the sorted slice,
// ordered by score, then member.
func (z *zsetValue) position(m ZMember) int {
	i, _ := slices.BinarySearchFunc(z.sorted, m, func(a, b ZMember) int {
		return cmp.Or(cmp.Compare(a.Score, b.Score), strings.Compare(a.Member, b.Member))
	})
	return i
}

// add sets member's score and reports whether the member is new.
func (z *zsetValue) add(member string, score float64) bool {
	old, exists := z.scores[member]
	if exists {
		if old == score {
			return false
		}
		z.remove(member)
	}
	z.scores[member] = score
	m := ZMember{Member: member, Score: score}
	z.sorted = slices.Insert(z.sorted, z.position(m), m)
	return !exists
}

// remove deletes member and reports whether it was there.
func (z *zsetValue) remove(member string) bool {
	score, ok := z.scores[member]
	if !ok {
		return false
	}
	delete(z.scores, member)
	i := z.position(ZMember{Member: member, Score: score})
	z.sorted = slices.Delete(z.sorted, i, i+1)
	return true
}

// entry is one key: its value and its expiry in Unix milliseconds
// (0 = no TTL).
type entry struct {
	val      value
	expireAt int64
}

// keyspace is the single database of a Server. Expiry is lazy: a key whose
// deadline has passed is deleted when something looks it up.
type keyspace map[string]*entry

// expired tells whether an entry is gone at nowMs. Redis keeps a key alive
// through the millisecond of its deadline (PTTL 0) and drops it after.
func (e *entry) expired(nowMs int64) bool {
	return e.expireAt != 0 && nowMs > e.expireAt
}
