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
