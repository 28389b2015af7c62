package serverprobe

import (
	"strconv"
	"strings"
	"testing"

	"github.com/lockgen/lockgen/redistest"
)

// Info splits a section into its fields (the port the server listens on
// reads back as a number), and CPU adds up a server's CPU, which only grows.
func TestInfoAndCPUReadTheServer(t *testing.T) {
	srv := redistest.Start(t)
	ctx, rdb := t.Context(), srv.Client(t)
	m, err := Info(ctx, rdb, "server")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(int(Num(m, "tcp_port")))
	if m["redis_version"] == "" || !strings.HasSuffix(srv.Addr, ":"+port) {
		t.Errorf("INFO server read as version %q, port %s; server at %s", m["redis_version"], port, srv.Addr)
	}
	before, err := CPU(ctx, rdb)
	if err != nil {
		t.Fatal(err)
	}
	for range 1000 {
		rdb.Ping(ctx)
	}
	after, err := CPU(ctx, rdb)
	if err != nil || after < before || after == 0 {
		t.Errorf("CPU %v then %v (%v): want a growing, non-zero total", before, after, err)
	}
}
