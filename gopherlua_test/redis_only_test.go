package gopherlua_test

import (
	"testing"

	"github.com/lockgen/lockgen/redistest"
)

func TestScenariosOnRedis(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	for _, sc := range append(mutexScenarios(), fairScenarios()...) {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			tg := newRedisTarget(t, rdb, []string{sc.wakeChannel()})
			defer tg.close()
			play(t, sc, tg, realTolerance)
		})
	}
}
