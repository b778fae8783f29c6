// The workloads: their counts (overridable with `--n`) and, for each, the implementations that
// run it side by side.

/// Counts, overridable with `--n` (for profiling under valgrind, say): every workload then uses that n.
struct Counts {
    var postN = 1_000_000
    var batch = 1_000
    var invokeN = 5_000
    var timerCounts = [1_000, 10_000, 100_000, 1_000_000]
    /// timer_reschedule: how many times each pending timer is moved per run.
    var rescheduleRounds = 2
    var chunkedN = 10_000_000
    var chunkBudgetNs: UInt64 = 2_000_000
    var lateTimerPeriodNs: UInt64 = 5_000_000
    var operationsN = 100_000
    var hopN = 20_000
    var timerMemoryN = 1_000_000
    var boundAppendN = 100_000
    var latenessTicks = 100
    var latenessPeriodNs: UInt64 = 10_000_000
    /// tcp_ping_pong: round trips of one 64-byte message over one connection.
    var pingPongN = 20_000
    var pingPongBytes = 64
    /// tcp_echo_throughput: echoed 1 KiB messages in all, over 10 connections (n / 10 each).
    var echoN = 50_000
    var echoConnections = 10
    var echoBytes = 1_024
    /// udp_ping_pong: round trips of one 64-byte datagram.
    var udpPingPongN = 20_000
    /// udp_throughput: 1 KiB datagrams delivered, one sender under a window of 64.
    var udpThroughputN = 200_000
    /// group_scaling: zero-delay timers fired per loop, in this many loop-local chains per loop.
    var groupUnitsPerLoop = 1_000_000
    var groupChains = 100
    /// process_spawn_wait: children started and waited for, one at a time.
    var spawnN = 1_000
    /// file_read_sequential: 64 KiB chunks read, one at a time (4,096: a 256 MiB file).
    var fileReadChunks = 4_096
    /// file_stat_small: small files stat'ed, one at a time.
    var fileStatN = 10_000

    init(override n: Int? = nil) {
        guard let n else { return }
        postN = n; invokeN = n; timerCounts = [n]; chunkedN = n; operationsN = n; hopN = n; timerMemoryN = n
        boundAppendN = n; pingPongN = n; echoN = n; groupUnitsPerLoop = n; spawnN = n; udpPingPongN = n
        udpThroughputN = n; fileReadChunks = n; fileStatN = n
    }
}

func allCases(_ k: Counts) -> [BenchCase] {
    let (postN, batch, invokeN, timerCounts) = (k.postN, k.batch, k.invokeN, k.timerCounts)
    let (chunkedN, chunkBudgetNs, lateTimerPeriodNs) = (k.chunkedN, k.chunkBudgetNs, k.lateTimerPeriodNs)
    let (operationsN, hopN, timerMemoryN) = (k.operationsN, k.hopN, k.timerMemoryN)
    var cases: [BenchCase] = []
    cases.append(BenchCase(workload: "post_cross_thread", n: postN, unit: "ns/op", impls: [
        ImplSpec(impl: "uvloop", make: UVLoopSide.postCrossThread(n: postN, producers: 1)),
        ImplSpec(impl: "nio", make: NIOSide.postCrossThread(n: postN, producers: 1)),
        ImplSpec(impl: "dispatch", make: DispatchSide.postCrossThread(n: postN, producers: 1)),
        ImplSpec(impl: "libuv_c", make: CSide.postCrossThread(n: postN, producers: 1)),
    ]))
    cases.append(BenchCase(workload: "post_cross_thread_4", n: postN, unit: "ns/op", impls: [
        ImplSpec(impl: "uvloop", make: UVLoopSide.postCrossThread(n: postN, producers: 4)),
        ImplSpec(impl: "nio", make: NIOSide.postCrossThread(n: postN, producers: 4)),
        ImplSpec(impl: "dispatch", make: DispatchSide.postCrossThread(n: postN, producers: 4)),
        ImplSpec(impl: "libuv_c", make: CSide.postCrossThread(n: postN, producers: 4)),
    ]))
    cases.append(BenchCase(workload: "post_cross_thread_noalloc", n: postN, unit: "ns/op", impls: [
        ImplSpec(impl: "uvloop", make: UVLoopSide.postCrossThreadNoAlloc(n: postN)),
        ImplSpec(impl: "nio", make: NIOSide.postCrossThread(n: postN, producers: 1)),
        ImplSpec(impl: "libuv_c", make: CSide.postCrossThread(n: postN, producers: 1)),
        ImplSpec(impl: "libuv_c_lockfree", make: CSide.lockFreeCrossThread(n: postN, producers: 1)),
    ]))
    // UVLoop's C API: a C pthread calls uvloop_post(l, fn, ctx); "uvloop" is a loop made in Swift
    // (makeCHandle), "uvloop_attached" a uv_loop_t a C thread owns and runs (uvloop_attach, keep-alive).
    cases.append(BenchCase(workload: "c_post_cross_thread", n: postN, unit: "ns/op", impls: [
        ImplSpec(impl: "uvloop", make: CAPISide.postCrossThread(n: postN, producers: 1)),
        ImplSpec(impl: "uvloop_attached", make: CAPISide.postCrossThreadAttached(n: postN, producers: 1)),
        ImplSpec(impl: "libuv_c_lockfree", make: CSide.lockFreeCrossThread(n: postN, producers: 1)),
        ImplSpec(impl: "libuv_c", make: CSide.postCrossThread(n: postN, producers: 1)),
    ]))
    cases.append(BenchCase(workload: "post_on_loop", n: postN, unit: "ns/op", impls: [
        ImplSpec(impl: "uvloop", make: UVLoopSide.postOnLoop(n: postN, batch: batch)),
        ImplSpec(impl: "nio", make: NIOSide.postOnLoop(n: postN, batch: batch)),
        ImplSpec(impl: "dispatch", make: DispatchSide.postOnLoop(n: postN, batch: batch)),
        ImplSpec(impl: "libuv_c", make: CSide.postOnLoop(n: postN, batch: batch)),
        ImplSpec(impl: "swift_floor", make: ClosureFloor.postOnLoop(n: postN, batch: batch)),
    ]))
    cases.append(BenchCase(workload: "post_next_iteration", n: postN, unit: "ns/op", impls: [
        ImplSpec(impl: "uvloop", make: UVLoopSide.postNextIteration(n: postN, batch: batch)),
        // No next-iteration verb in NIO or Dispatch: execute/async from the loop is the nearest.
        ImplSpec(impl: "nio", make: NIOSide.postOnLoop(n: postN, batch: batch)),
        ImplSpec(impl: "dispatch", make: DispatchSide.postOnLoop(n: postN, batch: batch)),
        ImplSpec(impl: "libuv_c", make: CSide.postNextIteration(n: postN, batch: batch)),
    ]))
    cases.append(BenchCase(workload: "invoke_roundtrip", n: invokeN, unit: "ns/op", impls: [
        ImplSpec(impl: "uvloop", make: UVLoopSide.invokeRoundtrip(n: invokeN)),
        ImplSpec(impl: "nio", make: NIOSide.invokeRoundtrip(n: invokeN)),
        ImplSpec(impl: "dispatch", make: DispatchSide.invokeRoundtrip(n: invokeN)),
        ImplSpec(impl: "libuv_c", make: CSide.invokeRoundtrip(n: invokeN)),
    ]))
    // The same round trip with every thread on one CPU (Placement.swift): the unpinned row's
    // threads land on one CPU or on two, by the scheduler's choice, and the two shapes differ
    // 3-5x on a VM; here every implementation runs in the same shape.
    cases.append(BenchCase(workload: "invoke_roundtrip_one_cpu", n: invokeN, unit: "ns/op", impls: [
        ImplSpec(impl: "uvloop", make: onOneCPU(UVLoopSide.invokeRoundtrip(n: invokeN))),
        ImplSpec(impl: "nio", make: onOneCPU(NIOSide.invokeRoundtrip(n: invokeN))),
        ImplSpec(impl: "libuv_c", make: onOneCPU(CSide.invokeRoundtrip(n: invokeN))),
    ]))
    // The same round trip with busy polling on both sides (opt-in): UVLoop's `setBusyPoll`, which a
    // blocked invoke caller honours too; C's caller polls its node for 50 us before sleeping.
    cases.append(BenchCase(workload: "invoke_roundtrip_busy_poll", n: invokeN, unit: "ns/op", impls: [
        ImplSpec(impl: "uvloop", make: UVLoopSide.invokeRoundtrip(n: invokeN, busyPoll: .microseconds(50))),
        ImplSpec(impl: "nio", make: NIOSide.invokeRoundtrip(n: invokeN)),
        ImplSpec(impl: "libuv_c_spin", make: CSide.invokeRoundtrip(n: invokeN, spinNanoseconds: 50_000)),
    ]))
    // Filling an array held by a loop-bound box: in place, each append is O(1).
    cases.append(BenchCase(workload: "loop_bound_append", n: k.boundAppendN, unit: "ns/op", impls: [
        ImplSpec(impl: "uvloop", make: UVLoopSide.loopBoundAppend(n: k.boundAppendN)),
        ImplSpec(impl: "nio", make: NIOSide.loopBoundAppend(n: k.boundAppendN)),
    ]))
    for n in timerCounts {
        // n timers scheduled (so n pending), then all n cancelled; ns per schedule+cancel.
        var impls = [ImplSpec(impl: "uvloop", make: UVLoopSide.timerCancel(n: n))]
        // NIO's cancel is a linear scan: at 1,000,000 pending it would take over ten minutes.
        if n <= 100_000 { impls.append(ImplSpec(impl: "nio", make: NIOSide.timerCancel(n: n))) }
        impls.append(ImplSpec(impl: "dispatch", make: DispatchSide.timerCancel(n: n)))
        impls.append(ImplSpec(impl: "libuv_c", make: CSide.timerCancel(n: n)))
        cases.append(BenchCase(workload: "timer_cancel", n: n, unit: "ns/op", impls: impls,
                               quickReps: n >= 100_000 ? 2 : nil))
    }
    for n in timerCounts {
        // UVLoop's C API on the loop thread: uvloop_timer_start, then uvloop_timer_cancel and
        // uvloop_timer_release of each; beside it the Swift API (as timer_cancel) and raw libuv.
        cases.append(BenchCase(workload: "c_timer_start_cancel", n: n, unit: "ns/op", impls: [
            ImplSpec(impl: "uvloop", make: CAPISide.timerStartCancel(n: n)),
            ImplSpec(impl: "uvloop_swift", make: UVLoopSide.timerCancel(n: n)),
            ImplSpec(impl: "libuv_c", make: CSide.timerCancel(n: n)),
        ], quickReps: n >= 100_000 ? 2 : nil))
    }
    for n in timerCounts {
        cases.append(BenchCase(workload: "timer_fire", n: n, unit: "ns/op", impls: [
            ImplSpec(impl: "uvloop", make: UVLoopSide.timerFire(n: n)),
            ImplSpec(impl: "nio", make: NIOSide.timerFire(n: n)),
            ImplSpec(impl: "dispatch", make: DispatchSide.timerFire(n: n)),
            ImplSpec(impl: "libuv_c", make: CSide.timerFire(n: n)),
        ], quickReps: n >= 1_000_000 ? 2 : nil))
    }
    for n in timerCounts {
        // n pending timers (scheduled once per session), each moved `rounds` times per run; ns per move.
        let rounds = k.rescheduleRounds
        var impls = [ImplSpec(impl: "uvloop", make: UVLoopSide.timerReschedule(n: n, rounds: rounds))]
        // NIO has no move: cancel (a linear scan) and schedule anew. At 100,000 pending that is about
        // 60 µs a move, 12 s a run: left out, as timer_cancel leaves out 1,000,000.
        if n <= 10_000 { impls.append(ImplSpec(impl: "nio", make: NIOSide.timerReschedule(n: n, rounds: rounds))) }
        impls.append(ImplSpec(impl: "dispatch", make: DispatchSide.timerReschedule(n: n, rounds: rounds)))
        impls.append(ImplSpec(impl: "libuv_c", make: CSide.timerReschedule(n: n, rounds: rounds)))
        cases.append(BenchCase(workload: "timer_reschedule", n: n, unit: "ns/op", impls: impls,
                               quickReps: n >= 100_000 ? 2 : nil))
    }
    cases.append(BenchCase(workload: "chunked_overhead", n: chunkedN, unit: "ns/item", impls: [
        ImplSpec(impl: "uvloop", make: UVLoopSide.chunkedOverhead(n: chunkedN, budgetNs: chunkBudgetNs)),
        ImplSpec(impl: "plain_loop", make: PlainLoop.chunkedOverhead(n: chunkedN)),
        ImplSpec(impl: "libuv_c", make: CSide.chunkedOverhead(n: chunkedN, budgetNs: chunkBudgetNs)),
    ]))
    cases.append(BenchCase(workload: "chunked_timer_lateness", n: chunkedN, unit: "ns p99", impls: [
        ImplSpec(impl: "uvloop", make: UVLoopSide.chunkedTimerLateness(n: chunkedN, budgetNs: chunkBudgetNs,
                                                                        periodNs: lateTimerPeriodNs)),
        ImplSpec(impl: "libuv_c", make: CSide.chunkedTimerLateness(n: chunkedN, budgetNs: chunkBudgetNs,
                                                                    periodNs: lateTimerPeriodNs)),
    ]))
    // A 10 ms timer chain, idle and while 4 threads post continuously: p50, p99 and max lateness.
    for (load, posters) in [("idle", 0), ("loaded", 4)] {
        for (name, p) in [("p50", 0.5), ("p99", 0.99), ("max", 1.0)] {
            let (ticks, period) = (k.latenessTicks, k.latenessPeriodNs)
            cases.append(BenchCase(workload: "timer_lateness_\(load)_\(name)", n: ticks, unit: "ns late", impls: [
                ImplSpec(impl: "uvloop", make: UVLoopSide.timerLateness(ticks: ticks, periodNs: period, posters: posters, percentile: p)),
                ImplSpec(impl: "nio", make: NIOSide.timerLateness(ticks: ticks, periodNs: period, posters: posters, percentile: p)),
            ]))
        }
    }
    cases.append(BenchCase(workload: "operations", n: operationsN, unit: "ns/op", impls: [
        ImplSpec(impl: "uvloop", make: UVLoopSide.operations(n: operationsN)),
        ImplSpec(impl: "nio", make: NIOSide.operations(n: operationsN)),
        ImplSpec(impl: "dispatch", make: DispatchSide.operations(n: operationsN)),
        ImplSpec(impl: "libuv_c", make: CSide.operations(n: operationsN)),
    ]))
    cases.append(BenchCase(workload: "actor_hop", n: hopN, unit: "ns/op", impls: [
        ImplSpec(impl: "uvloop", make: UVLoopSide.actorHop(n: hopN)),
        ImplSpec(impl: "nio", make: NIOSide.actorHop(n: hopN)),
        ImplSpec(impl: "dispatch", make: DispatchSide.actorHop(n: hopN)),
    ]))
    // The same hop with every thread of the process (the loop, NIO's, Dispatch's workers) on one CPU.
    cases.append(BenchCase(workload: "actor_hop_one_cpu", n: hopN, unit: "ns/op", impls: [
        ImplSpec(impl: "uvloop", make: onOneCPU(UVLoopSide.actorHop(n: hopN))),
        ImplSpec(impl: "nio", make: onOneCPU(NIOSide.actorHop(n: hopN))),
    ]))
    // The same hop with UVLoop's opt-in busy polling: after a drain with work the loop polls
    // without blocking for 200 µs, so the hop back finds it awake (no kernel wake-up per trip).
    cases.append(BenchCase(workload: "actor_hop_busy_poll", n: hopN, unit: "ns/op", impls: [
        ImplSpec(impl: "uvloop", make: UVLoopSide.actorHop(n: hopN, busyPoll: .microseconds(200))),
        ImplSpec(impl: "nio", make: NIOSide.actorHop(n: hopN)),
    ]))
    // TCP over 127.0.0.1: a server loop thread echoing, a client loop thread ping-ponging one message
    // per connection (write it, wait for the whole echo, repeat). UVLoop: UVLoopSide+TCP.swift.
    let (pingPongN, pingPongBytes) = (k.pingPongN, k.pingPongBytes)
    cases.append(BenchCase(workload: "tcp_ping_pong", n: pingPongN, unit: "ns/op", impls: [
        ImplSpec(impl: "uvloop", make: UVLoopSide.tcpEcho(connections: 1, messageBytes: pingPongBytes, n: pingPongN)),
        ImplSpec(impl: "nio", make: NIOSide.tcpEcho(connections: 1, messageBytes: pingPongBytes, n: pingPongN)),
        ImplSpec(impl: "libuv_c", make: CSide.tcpEcho(connections: 1, messageBytes: pingPongBytes, n: pingPongN)),
    ]))
    let (echoN, echoConnections, echoBytes) = (k.echoN, k.echoConnections, k.echoBytes)
    cases.append(BenchCase(workload: "tcp_echo_throughput", n: echoN, unit: "ns/op", impls: [
        ImplSpec(impl: "uvloop", make: UVLoopSide.tcpEcho(connections: echoConnections, messageBytes: echoBytes, n: echoN)),
        ImplSpec(impl: "uvloop_async", make: UVLoopSide.tcpEchoAsync(connections: echoConnections, messageBytes: echoBytes, n: echoN)),
        ImplSpec(impl: "nio", make: NIOSide.tcpEcho(connections: echoConnections, messageBytes: echoBytes, n: echoN)),
        ImplSpec(impl: "nio_async", make: NIOSide.tcpEchoAsync(connections: echoConnections, messageBytes: echoBytes, n: echoN)),
        ImplSpec(impl: "libuv_c", make: CSide.tcpEcho(connections: echoConnections, messageBytes: echoBytes, n: echoN)),
    ]))
    // UDP over 127.0.0.1: a server loop thread answering, a client loop thread sending under a
    // window (see UDPExchangeShape). UVLoop: UVLoopSide+UDP.swift.
    cases.append(BenchCase(workload: "udp_ping_pong", n: k.udpPingPongN, unit: "ns/op", impls: [
        ImplSpec(impl: "uvloop", make: UVLoopSide.udpExchange(.pingPong, n: k.udpPingPongN)),
        ImplSpec(impl: "nio", make: NIOSide.udpExchange(.pingPong, n: k.udpPingPongN)),
        ImplSpec(impl: "libuv_c", make: CSide.udpExchange(.pingPong, n: k.udpPingPongN)),
    ]))
    cases.append(BenchCase(workload: "udp_throughput", n: k.udpThroughputN, unit: "ns/op", impls: [
        ImplSpec(impl: "uvloop", make: UVLoopSide.udpExchange(.throughput, n: k.udpThroughputN)),
        ImplSpec(impl: "nio", make: NIOSide.udpExchange(.throughput, n: k.udpThroughputN)),
        ImplSpec(impl: "libuv_c", make: CSide.udpExchange(.throughput, n: k.udpThroughputN)),
    ]))
    // Loop-local work (zero-delay timer chains) on a group of 1 loop and of 2 loops, each loop doing
    // the same work; ns per unit over all loops, so 1loop/2loops is the speed-up.
    let (groupUnits, groupChains) = (k.groupUnitsPerLoop, k.groupChains)
    cases.append(BenchCase(workload: "group_scaling", n: groupUnits, unit: "ns/unit", impls: [
        ImplSpec(impl: "uvloop_1loop", make: UVLoopSide.groupScaling(loops: 1, perLoop: groupUnits, chains: groupChains)),
        ImplSpec(impl: "uvloop_2loops", make: UVLoopSide.groupScaling(loops: 2, perLoop: groupUnits, chains: groupChains)),
    ]))
    // The same runs in CPU time of the whole process: equal per unit when the loops do not contend.
    cases.append(BenchCase(workload: "group_scaling_cpu", n: groupUnits, unit: "cpu ns/unit", impls: [
        ImplSpec(impl: "uvloop_1loop", make: UVLoopSide.groupScaling(loops: 1, perLoop: groupUnits, chains: groupChains, cpuTime: true)),
        ImplSpec(impl: "uvloop_2loops", make: UVLoopSide.groupScaling(loops: 2, perLoop: groupUnits, chains: groupChains, cpuTime: true)),
    ]))
    cases.append(BenchCase(workload: "idle_cpu", n: 1, unit: "cpu ns/s", impls: [
        ImplSpec(impl: "uvloop", make: UVLoopSide.idle()),
        ImplSpec(impl: "nio", make: NIOSide.idle()),
        ImplSpec(impl: "dispatch", make: DispatchSide.idle()),
        ImplSpec(impl: "libuv_c", make: CSide.idle()),
    ], freshSessionPerRun: true, quickReps: 1))
    cases.append(BenchCase(workload: "timer_memory", n: timerMemoryN, unit: "bytes/timer", impls: [
        ImplSpec(impl: "uvloop", make: UVLoopSide.timerMemory(n: timerMemoryN)),
        ImplSpec(impl: "nio", make: NIOSide.timerMemory(n: timerMemoryN)),
        ImplSpec(impl: "dispatch", make: DispatchSide.timerMemory(n: timerMemoryN)),
        ImplSpec(impl: "libuv_c", make: CSide.timerMemory(n: timerMemoryN)),
    ], freshSessionPerRun: true, quickReps: 1, warmUp: false))
    cases.append(BenchCase(workload: "process_spawn_wait", n: k.spawnN, unit: "ns/op", impls: [
        ImplSpec(impl: "uvloop", make: UVLoopSide.processSpawnWait(n: k.spawnN)),
        ImplSpec(impl: "posix_spawn_c", make: CSide.processSpawnWait(n: k.spawnN)),
        ImplSpec(impl: "subprocess", make: SubprocessSide.processSpawnWait(n: k.spawnN)),
    ], quickReps: 3))
    cases.append(BenchCase(workload: "file_read_sequential", n: k.fileReadChunks, unit: "ns/op", impls: [
        ImplSpec(impl: "uvloop", make: UVLoopSide.fileReadSequential(k)),
        ImplSpec(impl: "libuv_c", make: CSide.fileReadSequential(k, onLibUV: true)),
        ImplSpec(impl: "pread_c", make: CSide.fileReadSequential(k, onLibUV: false)),
        ImplSpec(impl: "nio_fs", make: NIOFileSystemSide.fileReadSequential(k)),
    ], quickReps: 3))
    cases.append(BenchCase(workload: "file_stat_small", n: k.fileStatN, unit: "ns/op", impls: [
        ImplSpec(impl: "uvloop", make: UVLoopSide.fileStatSmall(k)),
        ImplSpec(impl: "libuv_c", make: CSide.fileStatSmall(k, onLibUV: true)),
        ImplSpec(impl: "stat_c", make: CSide.fileStatSmall(k, onLibUV: false)),
        ImplSpec(impl: "nio_fs", make: NIOFileSystemSide.fileStatSmall(k)),
    ], quickReps: 3))
    cases.append(BenchCase(workload: "file_read_ahead", n: k.fileReadChunks, unit: "ns/op", impls: [
        ImplSpec(impl: "uvloop", make: UVLoopSide.fileReadAhead(k)),
        ImplSpec(impl: "uvloop_ra2", make: UVLoopSide.fileReadAhead(k, readAhead: 2)),
        ImplSpec(impl: "uvloop_ra4", make: UVLoopSide.fileReadAhead(k, readAhead: 4)),
        ImplSpec(impl: "uvloop_async", make: UVLoopSide.fileReadAheadAsync(k)),
        ImplSpec(impl: "libuv_c", make: CSide.fileReadAhead(k, depth: FileConcurrency.reads)),
        ImplSpec(impl: "pread_c", make: CSide.fileReadSequential(k, onLibUV: false)),
        ImplSpec(impl: "nio_fs", make: NIOFileSystemSide.fileReadSequential(k)),
    ], quickReps: 3))
    cases.append(BenchCase(workload: "file_stat_concurrent", n: k.fileStatN, unit: "ns/op", impls: [
        ImplSpec(impl: "uvloop", make: UVLoopSide.fileStatConcurrent(k)),
        ImplSpec(impl: "uvloop_k4", make: UVLoopSide.fileStatConcurrent(k, concurrency: 4)),
        ImplSpec(impl: "uvloop_k64", make: UVLoopSide.fileStatConcurrent(k, concurrency: 64)),
        ImplSpec(impl: "uvloop_async", make: UVLoopSide.fileStatConcurrentAsync(k)),
        ImplSpec(impl: "libuv_c", make: CSide.fileStatConcurrent(k, depth: FileConcurrency.stats)),
        ImplSpec(impl: "stat_c", make: CSide.fileStatSmall(k, onLibUV: false)),
        ImplSpec(impl: "nio_fs", make: NIOFileSystemSide.fileStatConcurrent(k, depth: FileConcurrency.stats)),
    ], quickReps: 3))
    return cases
}
