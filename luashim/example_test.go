package luashim_test

import (
	"fmt"
	"time"

	"github.com/lockgen/lockgen/luashim"
)

// A script takes a lease; when the virtual clock passes it, the key is gone.
func Example() {
	clock := luashim.NewVirtualClock(time.Unix(1_700_000_000, 0))
	srv := luashim.New(clock)
	sha, err := srv.Load("take", `
if redis.call('get', KEYS[1]) then
  return 0
end
redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`)
	if err != nil {
		panic(err)
	}
	keys := []string{"lockgen:mutex:{job}"}
	first, _ := srv.EvalSha(sha, keys, "a", "1000")
	second, _ := srv.EvalSha(sha, keys, "b", "1000")
	fmt.Println(first, second, srv.Snapshot()[0].PTTL)
	clock.Advance(1001 * time.Millisecond)
	third, _ := srv.EvalSha(sha, keys, "b", "1000")
	fmt.Println(third, srv.Snapshot()[0].String)
	// Output:
	// 1 0 1000
	// 1 b
}

// The shim refuses a script that touches a key it was not given.
func Example_strictKeys() {
	srv := luashim.New(luashim.RealClock{})
	_, err := srv.Eval(`return redis.call('get', 'elsewhere')`, []string{"mine"})
	fmt.Println(err)
	// Output:
	// ERR lockgen-shim: user_script:1: get touches "elsewhere", which is not in KEYS
}
