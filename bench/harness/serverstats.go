package harness

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// commandStats is INFO commandstats: calls per command name, counted by the
// server. Commands that scripts run (redis.call) are counted too, next to
// the EVALSHA that ran them.
type commandStats map[string]int64

func readCommandStats(ctx context.Context, rdb *redis.Client) (commandStats, error) {
	info, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		return nil, err
	}
	return parseCommandStats(info), nil
}

// parseCommandStats reads the calls of lines like
// "cmdstat_evalsha:calls=12,usec=40,usec_per_call=3.33,...".
func parseCommandStats(info string) commandStats {
	return parseCommandField(info, "calls")
}

// parseCommandField reads one integer field (calls, usec) of every
// cmdstat_ line of INFO commandstats, per command name ("evalsha",
// "config|resetstat").
func parseCommandField(info, field string) map[string]int64 {
	stats := map[string]int64{}
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		name, fields, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		for _, kv := range strings.Split(fields, ",") {
			if v, ok := strings.CutPrefix(kv, field+"="); ok {
				if n, err := strconv.ParseInt(v, 10, 64); err == nil {
					stats[strings.TrimPrefix(name, "cmdstat_")] = n
				}
			}
		}
	}
	return stats
}

// harnessCommands are sent by the harness itself, not by a lock library.
var harnessCommands = map[string]bool{"info": true, "config|resetstat": true, "flushall": true, "ping": true}

// total counts every command but the harness's own.
func (s commandStats) total() int64 {
	var n int64
	for name, calls := range s {
		if !harnessCommands[name] {
			n += calls
		}
	}
	return n
}

// pubsub counts subscription commands. They never run inside scripts and go
// around go-redis hooks, so the server is where they are counted.
func (s commandStats) pubsub() int64 {
	var n int64
	for name, calls := range s {
		switch name {
		case "subscribe", "unsubscribe", "ssubscribe", "sunsubscribe", "psubscribe", "punsubscribe":
			n += calls
		}
	}
	return n
}

// resetServer empties the keyspace and the statistics between runs, so that
// one library's leftovers never count against the next.
func resetServer(ctx context.Context, rdb *redis.Client) error {
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		return err
	}
	return rdb.ConfigResetStat(ctx).Err()
}

// topMix lists the four largest of rates (per command name), the largest
// first and ties by name, e.g. "evalsha 2.00, publish 1.00": what the
// reports show of a workload's command mix.
func topMix(rates map[string]float64) string {
	names := slices.Sorted(maps.Keys(rates))
	slices.SortStableFunc(names, func(a, b string) int { return cmp.Compare(rates[b], rates[a]) })
	var parts []string
	for _, name := range names[:min(len(names), 4)] {
		parts = append(parts, fmt.Sprintf("%s %.2f", name, rates[name]))
	}
	return strings.Join(parts, ", ")
}
