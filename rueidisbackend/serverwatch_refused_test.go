package rueidisbackend

import (
	"context"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/lockgen/lockgen/redistest"
)

// The server watch ends on a refusal that trying again would not change
// (an ACL that does not allow its channel); an error that passes, such as
// a server that is down, keeps it trying until Close.
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
	if ended := watching(b); !endsWithin(ended, 10*time.Second) {
		t.Fatal("the watch kept trying a channel the ACL refuses")
	}

	s.Kill()
	down, cancelDown := context.WithTimeout(ctx, time.Second)
	defer cancelDown()
	if _, err := b.Subscribe(down, "lockgen:watch", func(string) {}); err == nil || refused(err) {
		t.Fatalf("subscribing to a server that is down: %v, want an error that passes", err)
	}
	b2 := New(c)
	ended := watching(b2)
	b2.Close()
	if !endsWithin(ended, 10*time.Second) {
		t.Fatal("the watch of a closed backend did not end")
	}
}

// watching runs b's server watch; the channel it returns is closed when
// the watch ends.
func watching(b *Backend) <-chan struct{} {
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		b.watchServer("lockgen:watch", func() {})
	}()
	return ended
}

func endsWithin(ended <-chan struct{}, d time.Duration) bool {
	select {
	case <-ended:
		return true
	case <-time.After(d):
		return false
	}
}

// Only refusals that another try would meet again end the watch: the
// server's other ERR replies pass.
func TestFinalRefusal(t *testing.T) {
	for msg, want := range map[string]bool{
		"NOPERM User nochannels has no permissions to access the 'lockgen:watch' channel": true,
		"NOAUTH Authentication required.":                                                 true,
		"WRONGPASS invalid username-password pair or user is disabled.":                   true,
		"ERR unknown command 'ssubscribe', with args beginning with: ":                    true,
		"ERR max number of clients reached":                                               false,
		"ERR Errors trying to SHUTDOWN. Check logs.":                                      false,
		"LOADING Redis is loading the dataset in memory":                                  false,
	} {
		if got := finalRefusal(msg); got != want {
			t.Errorf("finalRefusal(%q) = %v, want %v", msg, got, want)
		}
	}
}
