// Package harness measures lock libraries side by side against one
// redis-server it starts on loopback, and writes the results as Markdown and
// an SVG chart. Command lockbench (`make bench`) is its front end.
//
// # Workloads
//
//  1. Uncontended: one goroutine takes a free lock and releases it, over
//     and over: p50/p99 of the cycle, next to two PING round trips measured
//     in the same repetition (the physical floor of acquire + release); and,
//     in a pass without the PINGs, heap allocations per cycle and the time
//     Redis spent executing the cycle's commands (see Redis time below).
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
//  8. Idle waiters: 100 holders hold 100 keys (lease 30s, renewed as
//     their library renews), and 100 waiters, one per key, wait on them,
//     in one process and in ten processes of ten. Per waiter, the commands
//     Redis executes per second and its CPU, beyond what the holders cost
//     alone in a window of the same length (two leases, 60s: three fair
//     heartbeats per waiter whatever their phase): what a caller queued
//     behind a long critical section costs while it waits. Every lockgen kind runs
//     (read behind a writer, write behind a reader and behind a writer, a
//     semaphore whose permits are taken), and the other libraries at their
//     defaults.
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
// # Redis time
//
// Workload 1's Redis time per cycle comes from INFO commandstats (usec),
// each command counted once. A script's line (EVALSHA) includes the
// commands the script ran, and Redis 7 counts those again under their own
// names, so the sum of every line would count them twice; a short MONITOR
// pass, before the counted one, tells per command name the share of its
// calls that clients sent ("[0 lua]" marks a script's), and only that share
// counts. The other workloads' Redis CPU is INFO cpu (user + sys): the
// whole server, reading and writing connections included. On a free lock
// that part is about the same per command for every library and would hide
// what the scripts cost, which is what workload 1's target is about.
//
// # Repetitions and ratios
//
// Workloads 1 to 5 and 7 run Opts.Reps times, 6 and 8 their own number
// (Options.ManyReps, Options.IdleReps: see Full for why), and the targets
// table says how many repetitions measured each row. Ratios (to the PING floor, to the
// best other library, to redislock/default in workload 1's targets) are
// taken inside one repetition and then aggregated: the report gives the
// median and the range. lockgen's targets are computed from those medians;
// nothing in the report is typed in. Some rows have a limit for
// lockgen/mutex only (workload 1 against redislock, workload 5's growth,
// memory); lockgen/fair, measured the same way, is "reported" there. Fair
// has a limit of its own on the commands Redis executes per grant at the
// most processes of workload 5. Workload 8's limit holds for every lockgen
// kind.
package harness
