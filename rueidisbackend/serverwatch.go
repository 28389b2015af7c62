package rueidisbackend

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/redis/rueidis"

	"github.com/lockgen/lockgen/runtime"
)

// Pacing of the server watch's subscription while it cannot subscribe.
const (
	watchPauseMin = 100 * time.Millisecond
	watchPauseMax = 2 * time.Second
)

// Caps states that the backend's calls end at their contexts' deadlines
// (rueidis's do), and that it watches its masters (watchMasters).
func (b *Backend) Caps() backend.Caps {
	return backend.Caps{HonorsDeadline: true, WatchMasters: b.watchMasters}
}

// watchMasters is the backend's Caps.WatchMasters on a single server or a
// Sentinel client: the backend keeps a channel of its own subscribed,
// prefix + "watch", on the connection it shares with commands. A restart or
// a failover drops that connection; when rueidis has subscribed again on a
// new one, the server behind it may be another (or the same one, without
// its data), so the Locker verifies every lock it holds at once. On a
// Cluster it watches nothing yet: a lock lost there is found at its next
// renewal.
func (b *Backend) watchMasters(prefix string, changed func(affects func(key string) bool)) {
	if b.cluster {
		return
	}
	go b.watchServer(prefix+"watch", func() { changed(everyKey) })
}

func everyKey(string) bool { return true }

// refused reports whether err is the server refusing the subscription (an
// ACL without the channel or SUBSCRIBE), which trying again would not
// change: the Locker then finds lost locks at their renewals, as without
// the watch.
func refused(err error) bool {
	var re *rueidis.RedisError
	return errors.As(err, &re) && finalRefusal(re.Error())
}

// finalRefusal reports whether an error reply refuses for good: a missing
// permission, credentials the server does not take, a command it does not
// know. Any other ERR passes ("max number of clients reached", a server
// shutting down): the watch tries again rather than stop for the life of
// the process.
func finalRefusal(msg string) bool {
	for _, prefix := range []string{"NOPERM", "NOAUTH", "WRONGPASS", "ERR unknown command"} {
		if strings.HasPrefix(msg, prefix) {
			return true
		}
	}
	return false
}

// watchServer keeps channel subscribed until Close, and calls changed
// whenever it is subscribed again after a lost connection: by rueidis
// itself (Subscribe delivers "all"), or here, after the subscription ended.
func (b *Backend) watchServer(channel string, changed func()) {
	ended := make(chan struct{}, 1)
	deliver := func(payload string) {
		switch payload {
		case "all":
			changed()
		case backend.PayloadUnsubscribed:
			select {
			case ended <- struct{}{}:
			default:
			}
		}
	}
	pause := watchPauseMin
	for again := false; ; {
		_, err := b.Subscribe(context.Background(), channel, deliver)
		if errors.Is(err, runtime.ErrClosed) || refused(err) {
			return
		}
		if err == nil {
			if again {
				changed()
			}
			again, pause = true, watchPauseMin
			select {
			case <-ended:
				continue
			case <-b.done:
				return
			}
		}
		select {
		case <-time.After(pause):
		case <-b.done:
			return
		}
		pause = min(2*pause, watchPauseMax)
	}
}
