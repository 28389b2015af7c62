package gopherlua_test

import (
	"strconv"
	"time"

	"github.com/lockgen/lockgen/lua"
)

// heartbeatArgs is fair_heartbeat's ARGV after the publish command: the
// deadline of the place, at after the start on the server's clock, and
// whether to refresh the sets' TTLs.
func heartbeatArgs(start time.Time, at time.Duration, refresh bool) []string {
	flag := "0"
	if refresh {
		flag = "1"
	}
	return []string{strconv.FormatInt(start.Add(at).UnixMilli(), 10), flag}
}

// beatAt is a step's extraAt: a heartbeat that sets the deadline to at.
func beatAt(at time.Duration, refresh bool) func(time.Time) []string {
	return func(start time.Time) []string { return heartbeatArgs(start, at, refresh) }
}

// fairHeartbeatScenarios: the common path of fair_heartbeat (a holder's
// lease runs) keeps a place at the deadline the caller sends, without
// TIME; it refreshes the sets' TTLs only when asked.
func fairHeartbeatScenarios() []*scenario {
	acq, hb := lua.FairAcquire, lua.FairHeartbeat
	queue := func(ttl time.Duration, members ...string) keyWant {
		return keyWant{suffix: ":queue", members: members, ttl: ttl}
	}
	return []*scenario{
		{
			// A refresh sets both sets to the deadline + 3 leases; a
			// heartbeat without one moves the deadline only.
			name: "fair-beat-refresh", fam: fairFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 3000 * ms, want: granted()},
				{at: 10 * ms, script: acq, holder: "B", lease: 500 * ms, want: busy(500),
					expect: []keyWant{queue(500*ms, "B")}},
				{at: 300 * ms, script: hb, holder: "B", lease: 500 * ms, extraAt: beatAt(800*ms, true), want: kept(),
					expect: []keyWant{queue(2000*ms, "B"), {suffix: ":alive", members: []string{"B"}, deadlines: []time.Duration{800 * ms}, ttl: 2000 * ms}}},
				{at: 600 * ms, script: hb, holder: "B", lease: 500 * ms, extraAt: beatAt(1100*ms, false), want: kept(),
					expect: []keyWant{queue(1700*ms, "B"), {suffix: ":alive", members: []string{"B"}, deadlines: []time.Duration{1100 * ms}, ttl: 1700 * ms}}},
				// A deadline of 0 (unknown to the caller): a lease from the
				// server's clock.
				{at: 700 * ms, script: hb, lease: 500 * ms, args: []string{"B", "500", "PUBLISH", "0", "0"}, want: kept(),
					expect: []keyWant{{suffix: ":alive", members: []string{"B"}, deadlines: []time.Duration{1200 * ms}}}},
			},
		},
		{
			// Someone not queued: 0, nothing created or changed.
			name: "fair-beat-gone", fam: fairFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 3000 * ms, want: granted()},
				{at: 10 * ms, script: acq, holder: "B", lease: 500 * ms, want: busy(500)},
				{at: 100 * ms, script: hb, holder: "C", lease: 500 * ms, extraAt: beatAt(600*ms, true), want: integer(0), unchanged: true},
				// A malformed deadline or flag is refused, nothing changes.
				{at: 200 * ms, script: hb, args: []string{"B", "500", "PUBLISH", "soon", "1"}, want: fails("ERR lockgen:"), unchanged: true},
				{at: 200 * ms, script: hb, args: []string{"B", "500", "PUBLISH", "-5", "1"}, want: fails("ERR lockgen:"), unchanged: true},
				{at: 200 * ms, script: hb, args: []string{"B", "500", "PUBLISH", "100", "yes"}, want: fails("ERR lockgen:"), unchanged: true},
			},
		},
		{
			// A place that ran out but that nobody removed is kept, in its
			// place in line; a deadline that does not grow (an acquire
			// gave a later one) keeps the place and its deadline.
			name: "fair-beat-revived", fam: fairFamily,
			steps: []step{
				{at: 0, script: acq, holder: "A", lease: 3000 * ms, want: granted()},
				{at: 10 * ms, script: acq, holder: "B", lease: 300 * ms, want: busy(300)},
				{at: 20 * ms, script: acq, holder: "C", lease: 2000 * ms, want: busy(2000)},
				// B's place ran out at 310 ms.
				{at: 500 * ms, script: hb, holder: "B", lease: 300 * ms, extraAt: beatAt(800*ms, false), want: kept(),
					expect: []keyWant{{suffix: ":queue", members: []string{"B", "C"}},
						{suffix: ":alive", members: []string{"B", "C"}, deadlines: []time.Duration{800 * ms, 2020 * ms}}}},
				{at: 600 * ms, script: hb, holder: "B", lease: 300 * ms, extraAt: beatAt(700*ms, false), want: kept(),
					expect: []keyWant{{suffix: ":alive", members: []string{"B", "C"}, deadlines: []time.Duration{800 * ms, 2020 * ms}}}},
			},
		},
	}
}
