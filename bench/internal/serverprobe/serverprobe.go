// Package serverprobe holds what bench's measuring commands (cpufloor,
// cpuprobe) and the harness share about the redis-server they measure:
// starting one when the caller names none, stopping it on a fatal error,
// and reading its INFO sections.
package serverprobe

import (
	"bufio"
	"context"
	"flag"
	"log"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/lockgen/lockgen/redistest"
)

// AddrFlag registers the -addr flag both commands take.
func AddrFlag() *string {
	return flag.String("addr", "", "redis-server to measure, on loopback (default: one this command starts on a free loopback port)")
}

// stop stops the server Start started, if it started one.
var stop = func() {}

// Start returns addr or, when it is "", the address of a redis-server it
// starts on a free loopback port. The caller defers Stop; Fatalf stops that
// server too, since log.Fatal skips deferred calls and would leave it
// running.
func Start(addr string) string {
	if addr != "" {
		return addr
	}
	srv, err := redistest.Launch()
	if err != nil {
		log.Fatal(err)
	}
	stop = srv.Close
	return srv.Addr
}

// Stop stops the server Start started, if any.
func Stop() { stop() }

// Fatalf stops the server Start started, then logs and exits.
func Fatalf(format string, args ...any) {
	stop()
	log.Fatalf(format, args...)
}

// Info reads one INFO section as field -> value.
func Info(ctx context.Context, rdb *redis.Client, section string) (map[string]string, error) {
	s, err := rdb.Info(ctx, section).Result()
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		if k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":"); ok {
			m[k] = v
		}
	}
	return m, nil
}

// Num reads field k of an INFO section as a number; 0 when absent or not
// a number.
func Num(m map[string]string, k string) float64 {
	f, _ := strconv.ParseFloat(m[k], 64)
	return f
}

// CPU is the CPU time redis-server has used (INFO cpu, user + sys of the
// main thread and its helpers), in seconds.
func CPU(ctx context.Context, rdb *redis.Client) (float64, error) {
	m, err := Info(ctx, rdb, "cpu")
	if err != nil {
		return 0, err
	}
	return Num(m, "used_cpu_user") + Num(m, "used_cpu_sys"), nil
}
