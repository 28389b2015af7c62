package fencing_test

import (
	"context"
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lockgen/lockgen/fencing"
	"github.com/lockgen/lockgen/goredisbackend"
	"github.com/lockgen/lockgen/redistest"
	"github.com/lockgen/lockgen/runtime"
	"github.com/redis/go-redis/v9"
)

// aclLine returns the rules of the `ACL SETUSER user <rules>` line of
// docs/acl.md whose rules start with first, without "on" and the password:
// the test runs what the documentation says.
func aclLine(t *testing.T, user, first string) []string {
	t.Helper()
	doc, err := os.ReadFile("../docs/acl.md")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^ACL SETUSER ` + user + ` (` + regexp.QuoteMeta(first) + `.*)$`)
	m := re.FindSubmatch(doc)
	if m == nil {
		t.Fatalf("docs/acl.md has no line ACL SETUSER %s %s...", user, first)
	}
	var rules []string
	for _, r := range strings.Fields(string(m[1])) {
		if r != "on" && !strings.HasPrefix(r, ">") {
			rules = append(rules, r)
		}
	}
	return rules
}

// The lock user of docs/acl.md cannot write fenced data outside its prefix;
// with the documented additions it can, under its lock's token, and so can
// the documented data-only user.
func TestACLFencedWrites(t *testing.T) {
	srv := redistest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lockRules := aclLine(t, "lockgen", "on >secret ~lockgen:*")
	client := func(user string, rules []string) *redis.Client {
		o, err := srv.AddUser(ctx, user, "pw", rules...)
		if err != nil {
			t.Fatalf("ACL SETUSER %s %v: %v", user, rules, err)
		}
		c := redis.NewClient(o)
		t.Cleanup(func() { c.Close() })
		return c
	}

	locksOnly := runtime.New(client("lockgen", lockRules))
	defer locksOnly.Close()
	h, err := locksOnly.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: "order:42", Wait: runtime.NoWait})
	if err != nil {
		t.Fatalf("the lock user cannot take a lock: %v", err)
	}
	token, _ := runtime.Fence(h.Context())
	h.Release()
	err = fencing.Set(ctx, locksOnly.Backend(), "order:42:status", "shipped", token)
	if err == nil || !strings.Contains(err.Error(), "NOPERM") {
		t.Errorf("fenced write by the lock user alone: %v, want NOPERM (the doc says it is refused)", err)
	}

	added := append(lockRules[:len(lockRules):len(lockRules)], aclLine(t, "lockgen", "~order:*")...)
	withData := runtime.New(client("lockgen", added))
	defer withData.Close()
	writeAndRead(t, ctx, withData, "order:42")

	dataOnly := client("orders", aclLine(t, "orders", "on "))
	b := goredisbackend.New(dataOnly)
	if err := fencing.Set(ctx, b, "order:7:status", "paid", token); err != nil {
		t.Errorf("fenced write by the data user: %v", err)
	}
	if v, _, err := fencing.Get(ctx, b, "order:7:status"); err != nil || v != "paid" {
		t.Errorf("fenced read by the data user: %q, %v", v, err)
	}
	if err := fencing.Set(ctx, b, "invoice:7", "x", token); err == nil || !strings.Contains(err.Error(), "NOPERM") {
		t.Errorf("data user writing outside its pattern: %v, want NOPERM", err)
	}
}

// writeAndRead takes a lock on key with l, writes its status fenced with the
// grant's token, refuses a stale write and reads the value back.
func writeAndRead(t *testing.T, ctx context.Context, l *runtime.Locker, key string) {
	t.Helper()
	h, err := l.Acquire(ctx, runtime.Lock{Kind: runtime.Mutex, Key: key, Wait: runtime.NoWait})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Release()
	token, _ := runtime.Fence(h.Context())
	if err := fencing.Set(ctx, l.Backend(), key+":status", "shipped", token); err != nil {
		t.Fatalf("fenced write with the documented additions: %v", err)
	}
	if err := fencing.Set(ctx, l.Backend(), key+":status", "late", token-1); !errors.Is(err, fencing.ErrStaleFence) {
		t.Errorf("stale write: %v, want ErrStaleFence", err)
	}
	if v, f, err := fencing.Get(ctx, l.Backend(), key+":status"); err != nil || v != "shipped" || f != token {
		t.Errorf("Get: %q %d %v, want shipped %d", v, f, err, token)
	}
}
