package redistest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestAddUserLimitsKeysAndCommands(t *testing.T) {
	s := Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	o, err := s.AddUser(ctx, "limited", "pw", "~app:*", "-@all", "+get", "+set")
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(o)
	defer c.Close()
	if err := c.Set(ctx, "app:x", "1", 0).Err(); err != nil {
		t.Fatalf("SET inside the key pattern: %v", err)
	}
	if err := c.Set(ctx, "other", "1", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "NOPERM") {
		t.Errorf("SET outside the key pattern: %v, want NOPERM", err)
	}
	if err := c.Del(ctx, "app:x").Err(); err == nil || !strings.Contains(err.Error(), "'del'") {
		t.Errorf("DEL not granted: %v, want NOPERM naming del", err)
	}
	if _, err := s.AddUser(ctx, "bad", "pw", "+no-such-command"); err == nil {
		t.Error("an unknown rule was accepted")
	}
}
