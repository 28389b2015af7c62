package harness

import (
	"math"
	"testing"
	"time"
)

const ms1 = int64(time.Millisecond)

// A releaser that asks again and barges in does not end the handoff: the
// waiter that was there at the release gets the lock only later.
func TestHandoffWaitsForAWaiter(t *testing.T) {
	served := []grant{
		{Proc: 0, G: 0, Req: 0, Acq: 1 * ms1, Rel: 2 * ms1},
		{Proc: 0, G: 0, Req: 2*ms1 + 10, Acq: 2*ms1 + 20, Rel: 3 * ms1}, // barging releaser
		{Proc: 1, G: 0, Req: 1 * ms1, Acq: 3*ms1 + 500, Rel: 4 * ms1},   // waited since 1 ms
	}
	d, ok := handoffAfter(served, 0)
	if !ok || d != time.Duration(ms1+500) {
		t.Errorf("handoff after first release = %v, %v; want 1.0005ms, true", d, ok)
	}
	d, ok = handoffAfter(served, 1)
	if !ok || d != 500 {
		t.Errorf("handoff after second release = %v, %v; want 500ns, true", d, ok)
	}
	if _, ok := handoffAfter(served, 2); ok {
		t.Error("handoff after the last release: nobody was waiting")
	}
}

func TestCountOutOfOrder(t *testing.T) {
	all := []grant{
		{Proc: 0, G: 0, Req: 0, Acq: 10, Rel: 20},
		{Proc: 1, G: 0, Req: 1, Acq: 40, Rel: 50}, // arrived second, served third
		{Proc: 0, G: 1, Req: 2, Acq: 25, Rel: 30}, // arrived third, served second: out of order
		{Proc: 1, G: 1, Req: 3},                   // unserved: never makes others out of order by itself
		{Proc: 0, G: 2, Req: 4, Acq: 60, Rel: 70}, // served while Req 3 still waits: out of order
		{Proc: 0, G: 3, Req: 0, Failed: true},     // failed requests are left out
	}
	var served []grant
	for _, g := range all {
		if g.Acq != 0 {
			served = append(served, g)
		}
	}
	sortByAcq(served)
	got := countOutOfOrder(all, served, func(grant) bool { return true })
	if got != 2 {
		t.Errorf("out of order = %d, want 2", got)
	}
}

func sortByAcq(gs []grant) {
	for i := range gs {
		for j := i + 1; j < len(gs); j++ {
			if gs[j].Acq < gs[i].Acq {
				gs[i], gs[j] = gs[j], gs[i]
			}
		}
	}
}

func TestAnalyzeGrantsFindsOverlaps(t *testing.T) {
	grants := []grant{
		{Proc: 0, Req: 0, Acq: 10, Rel: 100},
		{Proc: 1, Req: 5, Acq: 50, Rel: 150}, // acquired while the first still held it
	}
	var res ContendedResult
	analyzeGrants(&res, grants, 0, 1000)
	if res.Overlaps != 1 {
		t.Errorf("overlaps = %d, want 1", res.Overlaps)
	}
	if res.Grants != 2 {
		t.Errorf("grants = %d, want 2", res.Grants)
	}
}

// A run with no grant in its window says why, so that the report's "—"
// has a reason; one with grants has no error of its own.
func TestAnalyzeGrantsNamesAnEmptyWindow(t *testing.T) {
	grants := []grant{{Proc: 0, Req: 0, Acq: 10, Rel: 20}, {Proc: 1, Req: 5}}
	var res ContendedResult
	analyzeGrants(&res, grants, 100, 1000)
	if res.Grants != 0 || res.Err != "no grant in the measured window: 1 granted outside it, 1 requests unserved, 0 failed" {
		t.Errorf("grants %d, err %q", res.Grants, res.Err)
	}
	res = ContendedResult{}
	analyzeGrants(&res, grants, 0, 1000)
	if res.Grants != 1 || res.Err != "" {
		t.Errorf("grants %d, err %q; want 1 and none", res.Grants, res.Err)
	}
}

func TestParseCommandStats(t *testing.T) {
	info := "# Commandstats\r\ncmdstat_evalsha:calls=12,usec=40,usec_per_call=3.33,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_subscribe:calls=3,usec=1\r\ncmdstat_info:calls=7,usec=9\r\ncmdstat_config|resetstat:calls=1,usec=9\r\n"
	s := parseCommandStats(info)
	if s["evalsha"] != 12 || s["subscribe"] != 3 {
		t.Errorf("parsed %v", s)
	}
	if got := s.total(); got != 15 {
		t.Errorf("total without the harness's commands = %d, want 15", got)
	}
	if got := s.pubsub(); got != 3 {
		t.Errorf("pubsub = %d, want 3", got)
	}
}

func TestPercentileAndSpread(t *testing.T) {
	var sample []time.Duration
	for i := 1; i <= 100; i++ {
		sample = append(sample, time.Duration(i))
	}
	l := summarize(sample)
	if l.P50 != 50 || l.P99 != 99 || l.Max != 100 {
		t.Errorf("summary %+v", l)
	}
	s := spreadOf([]float64{3, math.NaN(), 1, 2})
	if s.Median != 2 || s.Min != 1 || s.Max != 3 || s.N != 3 {
		t.Errorf("spread %+v", s)
	}
}

// The hot-key mix is each command per grant, at most the four most
// frequent, ties by name, the harness's own commands left out.
func TestCommandMix(t *testing.T) {
	stats := commandStats{"evalsha": 40, "set": 20, "publish": 20, "get": 20, "pexpire": 10, "info": 90, "zadd": 0}
	if got, want := commandMix(stats, 20), "evalsha 2.00, get 1.00, publish 1.00, set 1.00"; got != want {
		t.Errorf("mix %q, want %q", got, want)
	}
}
