module github.com/lockgen/lockgen/bench

go 1.26.0

require (
	github.com/bsm/redislock v0.9.4
	github.com/go-redsync/redsync/v4 v4.18.1
	github.com/lockgen/lockgen v0.0.0-00010101000000-000000000000
	github.com/lockgen/lockgen/rueidisbackend v0.0.0-00010101000000-000000000000
	github.com/redis/go-redis/v9 v9.23.0
	github.com/redis/rueidis v1.0.79
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
)

// lockgen is measured as it is in this working tree.
replace github.com/lockgen/lockgen => ../

replace github.com/lockgen/lockgen/rueidisbackend => ../rueidisbackend
