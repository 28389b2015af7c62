package rueidisbackend

import (
	"context"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/lockgen/lockgen/redistest"
)

// The server watch stops on a refusal that trying again would not change
// (an ACL that does not allow its channel), and only then.
func TestWatchRefusal(t *testing.T) {
	s := redistest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	opts, err := s.AddUser(ctx, "nochannels", "pw", "~lockgen:*", "resetchannels", "+@all")
	if err != nil {
		t.Fatal(err)
	}
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{s.Addr}, Username: opts.Username, Password: opts.Password})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	b := New(c)
	defer b.Close()
	_, err = b.Subscribe(ctx, "lockgen:watch", func(string) {})
	if err == nil || !refused(err) {
		t.Fatalf("subscribing without the channel in the ACL: %v, want a refusal", err)
	}

	s.Kill()
	down, cancelDown := context.WithTimeout(ctx, time.Second)
	defer cancelDown()
	_, err = b.Subscribe(down, "lockgen:watch", func(string) {})
	if err == nil || refused(err) {
		t.Fatalf("subscribing to a server that is down: %v, want an error that passes", err)
	}
}
