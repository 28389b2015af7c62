package luashim

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Scripts from many goroutines run one at a time: no increment is lost,
// and every publish is delivered exactly once.
func TestConcurrentScriptsAreAtomic(t *testing.T) {
	s, clock := newTestServer(t)
	var delivered atomic.Int64
	unsub := s.Subscribe("{c}:wake", func(string, string) { delivered.Add(1) })
	defer unsub()
	sha, err := s.Load("bump", `local v = redis.call('get', KEYS[1]) or '0'
redis.call('set', KEYS[1], tonumber(v) + 1, 'PX', 60000)
redis.call('publish', KEYS[2], v)
return tonumber(v) + 1`)
	if err != nil {
		t.Fatal(err)
	}
	const workers, perWorker = 4, 200
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range perWorker {
				if _, err := s.EvalSha(sha, []string{"{c}", "{c}:wake"}); err != nil {
					t.Error(err)
					return
				}
				clock.Advance(time.Microsecond)
				s.Snapshot()
			}
		}()
	}
	wg.Wait()
	if got, _ := s.Do("GET", "{c}"); got != strconv.Itoa(workers*perWorker) {
		t.Errorf("counter = %v, want %d", got, workers*perWorker)
	}
	if got := delivered.Load(); got != workers*perWorker {
		t.Errorf("delivered %d messages, want %d", got, workers*perWorker)
	}
}

// A callback that panics must not leave the server stuck delivering: once
// the caller has recovered, later messages still arrive.
func TestPanickingCallbackDoesNotStopDelivery(t *testing.T) {
	s, _ := newTestServer(t)
	var got []string
	unsub := s.Subscribe("ch", func(_, payload string) {
		if payload == "boom" {
			panic("callback failed")
		}
		got = append(got, payload)
	})
	defer unsub()
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the callback's panic did not reach the publisher")
			}
		}()
		s.Do("PUBLISH", "ch", "boom")
	}()
	if n, err := s.Do("PUBLISH", "ch", "after"); err != nil || n != int64(1) {
		t.Fatalf("PUBLISH after the panic: %v, %v", n, err)
	}
	if len(got) != 1 || got[0] != "after" {
		t.Errorf("delivered %q after the panic, want [after]", got)
	}
}
