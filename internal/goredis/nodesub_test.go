package goredis

import (
	"context"
	"testing"
	"time"

	"github.com/lockgen/lockgen/redistest"
)

// An unsubscribe that a forgotten subscription owes (forget sends it after
// dropping the channel from subs) must not reach the server once the
// channel has been subscribed again: sent after the new SUBSCRIBE, it would
// end the new subscription on the server while this side counts it live.
// Seen under load on a Cluster: go-redis's resubscription after a
// reconnection got CROSSSLOT, the pending subscription was refused and
// retried, and the retry's SSUBSCRIBE went out before the refusal's
// SUNSUBSCRIBE.
func TestUnsubscribeSparesAChannelSubscribedAgain(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ns := newNodeSubscriber(rdb, false, func() {}, func() {})
	t.Cleanup(func() { ns.close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	const channel = "nodesub:again"
	if _, err := ns.subscribe(ctx, channel, func(string) {}); err != nil {
		t.Fatal(err)
	}
	// What forget leaves behind, with the new subscription already in subs:
	// an unsubscribe counted and not yet sent.
	ns.mu.Lock()
	ns.unsubscribing[channel]++
	ns.mu.Unlock()
	ns.unsubscribe(channel, time.Second)

	ns.mu.Lock()
	owed := ns.unsubscribing[channel]
	ns.mu.Unlock()
	if owed != 0 {
		t.Errorf("%d unsubscribe confirmations still counted for an unsubscribe not sent", owed)
	}
	n, err := rdb.Publish(ctx, channel, "x").Result()
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("PUBLISH reached %d subscribers, want 1: the unsubscribe ended the subscription made again", n)
	}
}
