// Package harness measures lock libraries side by side against one
// redis-server it starts on loopback, and writes the results as Markdown and
// an SVG chart. Command lockbench (`make bench`) is its front end.
//
// # Workloads
//
//  1. Uncontended: one goroutine takes a free lock and releases it, over
//     and over: p50/p99 of the cycle and heap allocations per cycle, next
//     to two PING round trips measured in the same repetition (the physical
//     floor of acquire + release).
//  2. One hot key: 8 and 64 goroutines split over two processes (the
//     harness binary re-executed; see RunChildIfAsked) take turns on one
//     key, holding it about 1 ms. Throughput, handoff latency, and what
//     each grant costs Redis: commands the clients sent (counted in the
//     clients, Pub/Sub subscriptions on the server) and commands Redis
//     executed (INFO commandstats, including those scripts run).
//  3. Fairness, from the same grants: the spread of waiting times and the
//     share of grants given out of arrival order.
//  4. 10,000 locks held at once with renewal: goroutines added, round trips
//     and commands per second while holding.
//  5. One hot key over more processes: 4 goroutines in each of 2 and of 8
//     processes, for lockgen's mutex and fair kinds and the other libraries'
//     low-latency settings. What a grant costs Redis (commands executed,
//     CPU) as the number of waiting processes grows, and the handoff in
//     PING round trips; its chart is processes.svg.
//  6. Many keys: 1, 16, 64 and 256 goroutines in this process, each
//     locking a random key of 100,000, running one INCR through the
//     library's client and releasing: cycles per second, p50/p99, and per
//     cycle the CPU of redis-server (INFO cpu), of this process
//     (getrusage) and the commands Redis executed. Here the pipelining
//     configurations run too (lockgen on its rueidis backend and on
//     go-redis's AutoPipeline, redislock on AutoPipeline); its chart is
//     manykeys.svg.
//  7. Memory: 10,000 locks held at once on distinct keys, and what they
//     take in Redis, by MEMORY USAGE of every key and by used_memory.
//
// # Measuring across processes
//
// Grants are stamped with time.Now().UnixNano(): monotonic clock readings
// cannot be compared between processes, the wall clock of one machine can.
// The handoff of a release ends when the lock goes to a request that was
// already waiting at that release; a releaser asking again and barging in
// first does not end it, because for the waiters the lock has not moved.
// Consecutive grants that overlap are counted as well: a non-zero count
// would mean a broken lock (or a broken clock).
//
// # Repetitions and ratios
//
// Every workload runs Opts.Reps times. Ratios (to the PING floor, to the
// best other library) are taken inside one repetition and then aggregated:
// the report gives the median and the range. lockgen's targets are computed
// from those medians; nothing in the report is typed in.
package harness
