package wakeup

import (
	"strconv"
	"strings"
	"time"

	"github.com/lockgen/lockgen/backend"
	"github.com/lockgen/lockgen/internal/protocol"
)

// What the wake messages tell the waiters (lines.go): delivery of each
// message, fair grants and mutex offers addressed to a waiter, the places
// its requests kept, and the releases of this Locker that date a grant or
// offer.

// deliver hands one message of subscription s to the waiters of wc it
// concerns. Unknown payloads wake everyone: a spurious wake costs one
// attempt, a missed one costs a whole wait.
func (m *Lines) deliver(wc *wakeChannel, s *subscription, payload string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case payload == backend.PayloadUnsubscribed:
		// The server ended the subscription: the next busy reply of a
		// waiter subscribes again, wherever the channel lives now.
		s.ended = true
		wakeAll(wc)
	case strings.HasPrefix(payload, protocol.GrantPrefix):
		switch fence, mine, ok := wc.grant(payload); {
		case !ok:
			wakeAll(wc)
		case !mine:
			m.foreignOffer(wc, fence)
		}
	case strings.HasPrefix(payload, "taken:"):
		if !wc.taken(payload) {
			wakeAll(wc)
		}
	case strings.HasPrefix(payload, "n:"):
		n, err := strconv.Atoi(payload[len("n:"):])
		if err != nil {
			n = len(wc.waiters)
		}
		// A waiter already holding a wake-up is about to retry anyway; the
		// wake goes to the next one.
		for _, w := range wc.waiters {
			if n <= 0 {
				break
			}
			if trySignal(w) {
				n--
			}
		}
	default:
		wakeAll(wc)
	}
}

// nearHandOvers bounds the mutex hand-overs in a row that stay in one
// process while the waiters of other processes wait: a release names a
// waiter of its own process (mutex_release's ARGV[5]) until this many in a
// row went to one, then lets the first registration have the lock. A
// hand-over in the process is dated by the release's reply and needs no
// claim before the waiter returns; one to another process needs the
// message and a claim. A waiter of another process waits at most this many
// holds more per turn of the processes.
const nearHandOvers = 3

// placeKept records that a request sent at sent kept w's place for
// keptFor. One sent when the previous one's place may have lapsed starts a
// new registration, and a grant message that comes later may answer the
// lapsed one (published while the waiter was frozen or cut off, and
// delivered since): from then on w's grants are only hints (see grant).
func (m *Lines) PlaceKept(w *Waiter, sent time.Time, keptFor time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !w.placeKept.IsZero() && sent.Sub(w.placeKept) >= keptFor {
		w.lapsed = true
	}
	if sent.After(w.placeKept) {
		w.placeKept = sent
	}
}

// Named records that a request naming w's holder id is sent at sent:
// one that may register it in Redis (its own attempt, or the call of the
// waiter ahead of it that names it, whatever that call's outcome). Redis
// can offer the lock to a holder id only once the first such request has
// reached it, so the earliest of them dates every offer to that id, even
// one whose message comes late (Grant.Since). Record it before the
// request goes out, or at least before the waiter takes a grant.
func (m *Lines) Named(w *Waiter, holder string, sent time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if w.holder == holder && (w.since.IsZero() || sent.Before(w.since)) {
		w.since = sent
	}
}

// TakeGrant reports whether a message (or a release reply, ReleaseEnds)
// handed the lock to w since the last call, and what w knows of that
// grant; the grant is w's to act on once.
func (m *Lines) TakeGrant(w *Waiter) (g Grant, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ok, w.granted = w.granted, false
	sent := w.grantSent
	w.grantSent = time.Time{}
	return Grant{w.grantFence, w.placeKept, w.lapsed, sent, w.since}, ok
}

// Grant is what a waiter knows of a grant addressed to it.
type Grant struct {
	Fence int64
	// PlaceKept is when the latest request that kept the waiter's place
	// was sent: a grant lives in Redis at least until that place would
	// have run out.
	PlaceKept time.Time
	// Lapsed: the waiter's place may have lapsed since it first
	// registered, so the grant may answer the lapsed registration and be
	// stale: the caller must claim it before counting it held.
	Lapsed bool
	// ReleaseSent: the grant was learnt from the reply of a release of
	// this Locker sent then; zero if from a message, which may be late.
	ReleaseSent time.Time
	// Since is when the first request that could register the waiter's
	// holder id in Redis was sent (Named); zero if none was recorded.
	// Every offer to that id, late message or not, was made after it.
	Since time.Time
}

// Release is a release of this Locker's hold, recorded by ReleaseStarts
// for ReleaseEnds. The zero Release concerns no waiter.
type Release struct{ wc *wakeChannel }

// ReleaseStarts records a release of this Locker's hold on the lock of
// channel, about to be sent, and returns what ReleaseEnds takes (the zero
// Release if no waiter of this Locker is on that channel). For a mutex (near set) it
// also returns the holder id of the first waiter in this process's line,
// for the release to offer the lock to if it is registered, unless
// nearHandOvers in a row went to this process already ("" then).
func (m *Lines) ReleaseStarts(channel string, near bool) (Release, string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	wc := m.channels[channel]
	if wc == nil {
		return Release{}, ""
	}
	wc.releasing++
	if !near || wc.nearRun >= nearHandOvers {
		return Release{wc}, ""
	}
	if w := wc.firstInLine(); w != nil {
		return Release{wc}, w.holder
	}
	return Release{wc}, ""
}

// ReleaseEnds ends a release that ReleaseStarts recorded. grant is what
// its reply said (the wake message it published, "" if none or no
// reply), sent when it was sent. A waiter of this Locker that the grant
// names hears of it as soon as the releaser does, rather than after the
// message, which comes later to the same effect (or came first, and was
// held back for this reply); and it knows the grant was current when the
// release was sent (a mutex waiter may count the offer held from then:
// Grant.ReleaseSent). It reports whether the grant went to a waiter of
// this Locker (woken now, or already by the message).
func (m *Lines) ReleaseEnds(r Release, grant string, sent time.Time) (handedHere bool) {
	wc := r.wc
	if wc == nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	wc.releasing--
	if grant != "" {
		if _, mine, _ := wc.grantAt(grant, sent); mine {
			wc.nearRun++
			handedHere = true
		} else {
			wc.nearRun = 0
		}
	}
	if wc.releasing > 0 {
		return handedHere
	}
	for _, w := range wc.waiters {
		if w.heldBack {
			w.heldBack = false
			trySignal(w)
		}
	}
	return handedHere
}

// grant marks and wakes the waiter that payload, "grant:<fence>:<holder>",
// handed the lock to, if it waits here. It reports whether payload was
// well formed. A grant comes twice to a waiter of the releaser's Locker
// (the release's reply, then the message): the second is ignored, since a
// second wake-up that the waiter does not use would go on to another
// waiter when it leaves, for an attempt that is bound to be busy.
func (wc *wakeChannel) grant(payload string) (fence int64, mine, ok bool) {
	return wc.grantAt(payload, time.Time{})
}

// grantAt is grant for a grant learnt from a release reply sent at sent
// (zero: from a message). The reply dates the grant even if the message
// came first, as long as the waiter has not taken the grant yet.
func (wc *wakeChannel) grantAt(payload string, sent time.Time) (fence int64, mine, ok bool) {
	fs, holder, _ := strings.Cut(payload[len(protocol.GrantPrefix):], ":")
	f, err := strconv.ParseInt(fs, 10, 64)
	if err != nil || holder == "" {
		return 0, false, false
	}
	for _, w := range wc.waiters {
		if w.holder == holder {
			mine = true
			switch {
			case w.grantFence != f:
				w.granted, w.grantFence, w.grantSent = true, f, sent
				// A mutex waiter offered the lock claims it now, even
				// if others of its process are ahead of it in line:
				// they wait for offers of their own, and an offer
				// left unclaimed would lapse with nobody to try.
				w.open()
				if sent.IsZero() && wc.releasing > 0 {
					// Most likely that release's offer: its reply,
					// due about now, dates it (releaseEnds wakes w).
					w.heldBack = true
				} else {
					trySignal(w)
				}
			case w.granted && !sent.IsZero():
				// The reply, after the message: it dates the grant
				// the waiter has not taken yet.
				w.grantSent = sent
				if w.heldBack {
					w.heldBack = false
					trySignal(w)
				}
			}
		}
	}
	return f, mine, true
}

func wakeAll(wc *wakeChannel) {
	for _, w := range wc.waiters {
		trySignal(w)
	}
}

// offerLapse is how long after a mutex offer to another process's waiter
// this process's first waiter tries, unless "taken:<fence>" came first:
// the offer's lease in Redis (LG_OFFER_MS) and a margin for the clocks.
const offerLapse = 600 * time.Millisecond

// foreignOffer starts (or moves) wc's offer timer for an offer of fence to
// a waiter of another process.
func (m *Lines) foreignOffer(wc *wakeChannel, fence int64) {
	if wc.firstInLine() == nil {
		return
	}
	wc.offerFence = fence
	if wc.offer != nil {
		wc.offer.Reset(offerLapse)
		return
	}
	wc.offer = time.AfterFunc(offerLapse, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if w := wc.firstInLine(); w != nil {
			trySignal(w)
		}
	})
}

// taken stops wc's offer timer: the offer of fence was claimed.
func (wc *wakeChannel) taken(payload string) bool {
	f, err := strconv.ParseInt(payload[len("taken:"):], 10, 64)
	if err != nil {
		return false
	}
	if wc.offer != nil && f >= wc.offerFence {
		wc.offer.Stop()
	}
	return true
}
