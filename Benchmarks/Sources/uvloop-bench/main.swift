// uvloop-bench: UVLoop side by side with SwiftNIO, Dispatch and raw C libuv, in one run.
//
//   uvloop-bench [--quick] [--reps N] [--only NAME[,NAME...]] [--json FILE] [--list]
//
// Every workload runs its implementations interleaved (A B A B ...), reports the median per impl,
// and the ratio of each impl to UVLoop within the same run. See Benchmarks/README.md.
import CMallocCount
#if canImport(Glibc)
import Glibc
#endif

// MARK: - Targets, by area, checked against this run's ratios.

struct Target: Sendable {
    /// What the target is about (posting, timers, TCP, ...), for the report.
    let area: String
    let workload: String
    let text: String
    /// The UVLoop row the target judges ("uvloop", or e.g. "uvloop_async").
    var impl = "uvloop"
    /// nil: cannot be judged (an impl is pending or missing); else (holds, measured figure).
    let check: @Sendable ([BenchResult]) -> (Bool, String)?
}

func value(_ rs: [BenchResult], _ w: String, _ n: Int, _ impl: String) -> Double? {
    rs.first { $0.workload == w && $0.n == n && $0.impl == impl }?.value
}

func allocs(_ rs: [BenchResult], _ w: String, _ n: Int, _ impl: String) -> Double? {
    rs.first { $0.workload == w && $0.n == n && $0.impl == impl }?.allocsPerOp
}

/// peer / impl >= factor (impl: a UVLoop row, "uvloop" unless given). nil while either row is
/// pending or failed.
func faster(_ area: String, _ w: String, _ n: Int, _ peer: String, _ factor: Double, _ text: String,
            impl: String = "uvloop") -> Target {
    Target(area: area, workload: w, text: text, impl: impl) { rs in
        guard let u = value(rs, w, n, impl), let p = value(rs, w, n, peer), u > 0 else { return nil }
        return (p / u >= factor, "\(peer)/\(impl) = \(fixed(p / u, 2))x")
    }
}

/// impl / peer <= factor (impl: a UVLoop row, "uvloop" unless given).
func within(_ area: String, _ w: String, _ n: Int, _ peer: String, _ factor: Double, _ text: String,
            impl: String = "uvloop") -> Target {
    Target(area: area, workload: w, text: text, impl: impl) { rs in
        guard let u = value(rs, w, n, impl), let p = value(rs, w, n, peer), p > 0 else { return nil }
        return (u / p <= factor, "\(impl)/\(peer) = \(fixed(u / p, 2))x")
    }
}

func allocsAtMost(_ area: String, _ w: String, _ n: Int, _ limit: Double, _ text: String,
                  impl: String = "uvloop") -> Target {
    Target(area: area, workload: w, text: text, impl: impl) { rs in
        guard let a = allocs(rs, w, n, impl) else { return nil }
        return (a <= limit + 0.005, "\(impl) allocs/op = \(fixed(a, 2))")
    }
}

func valueAtMost(_ area: String, _ w: String, _ n: Int, _ limit: Double, _ unit: String, _ text: String) -> Target {
    Target(area: area, workload: w, text: text) { rs in
        guard let u = value(rs, w, n, "uvloop") else { return nil }
        return (u <= limit, "uvloop = \(format(u)) \(unit)")
    }
}

let standard = Counts()
let postN = standard.postN, chunkedN = standard.chunkedN, operationsN = standard.operationsN
let hopN = standard.hopN, timerMemoryN = standard.timerMemoryN, invokeN = standard.invokeN
let pingPongN = standard.pingPongN, echoN = standard.echoN, groupUnits = standard.groupUnitsPerLoop
let udpPingPongN = standard.udpPingPongN, udpThroughputN = standard.udpThroughputN

let targets: [Target] = [
    faster("posting", "post_cross_thread", postN, "nio", 2, "post 1M closures from another thread >= 2x faster than NIO execute"),
    faster("posting", "post_cross_thread", postN, "dispatch", 2, "... and >= 2x faster than DispatchQueue.async"),
    within("posting", "post_cross_thread", postN, "libuv_c", 2, "... and within 2x of raw C (mutex queue, malloc per post)"),
    allocsAtMost("posting", "post_cross_thread", postN, 1, "... at most 1 allocation per post"),
    faster("posting", "post_on_loop", postN, "nio", 4, "post from the loop thread >= 4x faster than NIO execute on the loop"),
    allocsAtMost("posting", "post_on_loop", postN, 1, "... at most 1 allocation per post"),
    allocsAtMost("posting", "post_next_iteration", postN, 1, "post for the next iteration: at most 1 allocation per post"),
    faster("posting", "post_next_iteration", postN, "nio", 2, "... >= 2x faster than NIO execute on the loop"),
    faster("posting", "invoke_roundtrip", invokeN, "nio", 1, "invoke round trip from another thread no slower than NIO submit().wait()"),
    faster("posting", "invoke_roundtrip_one_cpu", invokeN, "nio", 1, "... with every thread on one CPU: no slower than NIO"),
    allocsAtMost("posting", "invoke_roundtrip", invokeN, 2, "... at most 2 allocations per round trip (the caller's closure and the job)"),
    allocsAtMost("posting", "post_cross_thread_noalloc", postN, 0, "zero-allocation path: 0 allocations per post"),
    within("posting", "post_cross_thread_noalloc", postN, "libuv_c_lockfree", 1.5, "... within 1.5x of the C lock-free handoff"),
    faster("posting", "post_cross_thread_noalloc", postN, "nio", 10, "... >= 10x faster than NIO execute"),
    within("C API", "c_post_cross_thread", postN, "libuv_c_lockfree", 1.5, "uvloop_post from a C thread within 1.5x of the C lock-free handoff"),
    allocsAtMost("C API", "c_post_cross_thread", postN, 0, "... 0 allocations per uvloop_post"),
    Target(area: "C API", workload: "c_timer_start_cancel", text: "uvloop_timer_start+cancel: same cost at 1,000 and 1,000,000 pending (within 1.5x)") { rs in
        guard let a = value(rs, "c_timer_start_cancel", 1_000, "uvloop"), let b = value(rs, "c_timer_start_cancel", 1_000_000, "uvloop"),
              a > 0 else { return nil }
        return (b / a <= 1.5, "uvloop 1M/1k = \(fixed(b / a, 2))x")
    },
    valueAtMost("posting", "idle_cpu", 1, 1_000_000, "cpu ns/s", "an idle loop uses no CPU (< 1 ms of CPU per second, whole process)"),
    Target(area: "timers", workload: "timer_cancel", text: "schedule+cancel: same cost at 1,000 and 1,000,000 pending (within 1.5x)") { rs in
        guard let a = value(rs, "timer_cancel", 1_000, "uvloop"), let b = value(rs, "timer_cancel", 1_000_000, "uvloop"),
              a > 0 else { return nil }
        return (b / a <= 1.5, "uvloop 1M/1k = \(fixed(b / a, 2))x")
    },
    faster("timers", "timer_cancel", 1_000_000, "libuv_c", 5, "schedule+cancel at 1M pending >= 5x faster than uv_timer_start/stop"),
    faster("timers", "timer_cancel", 100_000, "nio", 100, "schedule+cancel at 100k pending >= 100x faster than NIO"),
    faster("timers", "timer_fire", 1_000_000, "libuv_c", 3, "schedule+fire 1M over 10 ms >= 3x faster than raw libuv timers"),
    faster("timers", "timer_fire", 1_000_000, "nio", 5, "schedule+fire 1M over 10 ms >= 5x faster than NIO"),
    allocsAtMost("timers", "timer_cancel", 1_000_000, 2, "at most 2 allocations per timer (schedule+cancel)"),
    allocsAtMost("timers", "timer_fire", 1_000_000, 2, "at most 2 allocations per timer (schedule+fire)"),
    valueAtMost("timers", "timer_memory", timerMemoryN, 100, "bytes", "at most 100 bytes per pending timer"),
    within("chunked loops", "chunked_overhead", chunkedN, "plain_loop", 1.2, "chunked loop over 10M items <= 1.2x a plain for loop"),
    valueAtMost("chunked loops", "chunked_timer_lateness", chunkedN, 3_000_000, "ns", "timer every 5 ms during a 2 ms-budget chunked loop: p99 lateness <= 3 ms"),
    faster("timer lateness", "timer_lateness_idle_p50", standard.latenessTicks, "nio", 1, "10 ms timer, idle loop: p50 lateness no worse than NIO's"),
    faster("timer lateness", "timer_lateness_idle_p99", standard.latenessTicks, "nio", 1, "... p99 no worse than NIO's"),
    faster("timer lateness", "timer_lateness_loaded_p50", standard.latenessTicks, "nio", 1, "10 ms timer, 4 threads posting: p50 lateness no worse than NIO's"),
    faster("timer lateness", "timer_lateness_loaded_p99", standard.latenessTicks, "nio", 1, "... p99 no worse than NIO's"),
    faster("operations", "operations", operationsN, "nio", 2, "100k block operations: >= 2x the throughput of NIOThreadPool + futures"),
    faster("operations", "operations", operationsN, "dispatch", 2, "... and of DispatchQueue.global + DispatchGroup"),
    faster("actors", "actor_hop", hopN, "nio", 2, "actor hop onto the loop and back >= 2x faster than on NIO's executor"),
    faster("actors", "actor_hop_busy_poll", hopN, "nio", 2, "... with the loop's opt-in busy polling (200 us)"),
    faster("actors", "actor_hop_one_cpu", hopN, "nio", 1, "... with every thread on one CPU: no slower than NIO"),
    // "uvloop >= 0.8x libuv_c": libuv_c/uvloop >= 0.8, i.e. UVLoop at most 1.25x the raw C time.
    faster("TCP", "tcp_ping_pong", pingPongN, "libuv_c", 0.8, "TCP ping-pong (64 B, one connection): >= 0.8x raw C libuv's speed"),
    faster("TCP", "tcp_ping_pong", pingPongN, "nio", 1.5, "... and >= 1.5x faster than NIO channel handlers"),
    allocsAtMost("TCP", "tcp_ping_pong", pingPongN, 1, "... at most 1 allocation per round trip (client and server)"),
    faster("TCP", "tcp_echo_throughput", echoN, "libuv_c", 0.8, "TCP echo (10 connections, 1 KiB): >= 0.8x raw C libuv's speed"),
    faster("TCP", "tcp_echo_throughput", echoN, "nio", 1.5, "... and >= 1.5x faster than NIO channel handlers"),
    faster("TCP", "tcp_echo_throughput", echoN, "nio_async", 1, "... async face no slower than NIOAsyncChannel",
           impl: "uvloop_async"),
    allocsAtMost("TCP", "tcp_echo_throughput", echoN, 1, "... at most 1 allocation per echoed message (client and server)"),
    allocsAtMost("TCP", "tcp_echo_throughput", echoN, 4, "... async face: at most 4 allocations per echoed message (client and server)",
                 impl: "uvloop_async"),
    within("TCP", "tcp_echo_throughput", echoN, "uvloop", 1.5, "... async face within 1.5x of the callback face",
           impl: "uvloop_async"),
        faster("UDP", "udp_ping_pong", udpPingPongN, "libuv_c", 0.8, "UDP ping-pong (64 B datagrams): >= 0.8x raw C libuv's speed"),
    faster("UDP", "udp_ping_pong", udpPingPongN, "nio", 1.5, "... and >= 1.5x faster than NIO's DatagramBootstrap"),
    allocsAtMost("UDP", "udp_ping_pong", udpPingPongN, 0, "... 0 allocations per round trip on the callback face (client and server)"),
    faster("UDP", "udp_throughput", udpThroughputN, "libuv_c", 0.8, "UDP throughput (1 KiB datagrams, one sender): >= 0.8x raw C libuv's speed"),
    faster("UDP", "udp_throughput", udpThroughputN, "nio", 1.5, "... and >= 1.5x faster than NIO's DatagramBootstrap"),
    allocsAtMost("UDP", "udp_throughput", udpThroughputN, 0, "... 0 allocations per datagram on the callback face"),
    // Throughput per unit of time = 1 / (ns per unit): 2 loops' rate / 1 loop's = 1loop / 2loops.
    faster("processes", "process_spawn_wait", standard.spawnN, "posix_spawn_c", 0.8, "spawn /bin/true and wait: >= 0.8x the speed of posix_spawn + waitpid in C"),
    faster("processes", "process_spawn_wait", standard.spawnN, "subprocess", 1.5, "... and >= 1.5x faster than swift-subprocess"),
    faster("files", "file_read_sequential", standard.fileReadChunks, "libuv_c", 0.8, "read 256 MiB in 64 KiB chunks (page cache warm): >= 0.8x the speed of uv_fs_read in C"),
    faster("files", "file_read_sequential", standard.fileReadChunks, "nio_fs", 1.5, "... and >= 1.5x faster than NIOFileSystem"),
    allocsAtMost("files", "file_read_sequential", standard.fileReadChunks, 0.05, "... no allocation per read into a reused FileBuffer (the callback face)"),
    faster("files", "file_stat_small", standard.fileStatN, "libuv_c", 0.8, "stat 10,000 files one by one: >= 0.8x the speed of uv_fs_stat in C"),
    faster("files", "file_stat_small", standard.fileStatN, "nio_fs", 1.5, "... and >= 1.5x faster than NIOFileSystem"),
    faster("files", "file_read_ahead", standard.fileReadChunks, "libuv_c", 0.8, "read 256 MiB in 64 KiB chunks, 8 reads in flight: >= 0.8x the speed of 8 uv_fs_read in flight in C"),
    faster("files", "file_read_ahead", standard.fileReadChunks, "nio_fs", 1.5, "... and >= 1.5x faster than NIOFileSystem's readChunks"),
    allocsAtMost("files", "file_read_ahead", standard.fileReadChunks, 0.05, "... no allocation per chunk on the callback face (readChunks' own buffers)"),
    faster("files", "file_stat_concurrent", standard.fileStatN, "libuv_c", 0.8, "stat 10,000 files, 16 in flight: >= 0.8x the speed of 16 uv_fs_stat in flight in C"),
    faster("files", "file_stat_concurrent", standard.fileStatN, "nio_fs", 1.5, "... and >= 1.5x faster than a task group of 16 NIOFileSystem info(forFileAt:)"),
    faster("loop groups", "group_scaling", groupUnits, "uvloop_1loop", 1.7,
           "loop-local timers on a LoopGroup of 2 loops: >= 1.7x the work per unit time of 1 loop",
           impl: "uvloop_2loops"),
]

func printTargets(_ rs: [BenchResult]) {
    print("\nTargets (area: target -> measured in this run)")
    for t in targets where rs.contains(where: { $0.workload == t.workload }) {
        let verdict: String
        if let (ok, figure) = t.check(rs) {
            verdict = (ok ? "holds   " : "MISSES  ") + figure
        } else if let f = rs.first(where: { $0.workload == t.workload && $0.impl == t.impl && $0.failure != nil }) {
            verdict = "NOT MEASURED  \(t.impl) failed: \(f.failure!)"
        } else {
            verdict = "pending / not measured"
        }
        print("  [\(t.area)] \(t.text)\n        \(verdict)")
    }
}

// MARK: - Command line

var options = RunOptions()
var only: [String] = []
var onlyImpls: [String] = []
var jsonPath: String?
var listOnly = false
var args = Array(CommandLine.arguments.dropFirst())
var explicitReps: Int?
var nOverride: Int?
while !args.isEmpty {
    let a = args.removeFirst()
    switch a {
    case "--quick": options.quick = true
    case "--json": jsonPath = args.isEmpty ? nil : args.removeFirst()
    case "--only": if !args.isEmpty { only += args.removeFirst().split(separator: ",").map(String.init) }
    case "--reps": explicitReps = args.isEmpty ? nil : Int(args.removeFirst())
    case "--n": nOverride = args.isEmpty ? nil : Int(args.removeFirst())
    case "--impl": if !args.isEmpty { onlyImpls += args.removeFirst().split(separator: ",").map(String.init) }
    case "--list": listOnly = true
    case "--timeout":
        if let t = args.isEmpty ? nil : Double(args.removeFirst()) { Limits.shared.hangSeconds = t }
    case "-h", "--help":
        print("""
        usage: uvloop-bench [--quick] [--reps N] [--only WORKLOAD[,WORKLOAD...]] [--json FILE] [--list]
                            [--impl IMPL[,IMPL...]] [--timeout SECONDS]
          --quick   same workloads and counts, fewer repetitions (3 instead of 7)
          --only    run only these workloads (exact names, or prefixes ending in *)
          --n       use this n for every selected workload (profiling); targets then do not apply
          --impl    run only these implementations (uvloop, nio, dispatch, libuv_c, ...), e.g. to profile
          --json    also write the results to FILE
          --timeout a run that takes longer is reported as a hang (HANG in the table, exit status 3) and
                    abandoned; the rest of the suite still runs. Default 120 seconds.
        """)
        exit(0)
    default:
        FileHandleOut.err("uvloop-bench: unknown argument \(a) (try --help)")
        exit(2)
    }
}
options.reps = explicitReps ?? (options.quick ? 3 : 7)

guard mc_self_test() else {
    FileHandleOut.err("uvloop-bench: the malloc counter is not interposed; allocation counts would be wrong")
    exit(1)
}

var cases = allCases(Counts(override: nOverride))
if !only.isEmpty {
    cases = cases.filter { c in
        only.contains { o in o.hasSuffix("*") ? c.workload.hasPrefix(String(o.dropLast())) : c.workload == o }
    }
    if cases.isEmpty {
        FileHandleOut.err("uvloop-bench: no workload matches \(only)")
        exit(2)
    }
}
if !onlyImpls.isEmpty {
    cases = cases.map { c in
        var c = c
        c.impls = c.impls.filter { onlyImpls.contains($0.impl) }
        return c
    }.filter { !$0.impls.isEmpty }
}
if listOnly {
    for c in cases {
        print("\(c.workload) n=\(c.n): \(c.impls.map { $0.make == nil ? $0.impl + " (pending)" : $0.impl }.joined(separator: ", "))")
    }
    exit(0)
}

let started = nowNs()
var results: [BenchResult] = []
for c in cases {
    let t0 = nowNs()
    let rs = runCase(c, options: options)
    results += rs
    let summary = rs.map { "\($0.impl) \($0.value.map(format) ?? ($0.failure == nil ? "pending" : "FAILED"))" }.joined(separator: ", ")
    FileHandleOut.err("[\(fixed(Double(nowNs() - t0) / 1e9, 1)) s] \(c.workload) n=\(c.n): \(summary)")
}
let elapsed = Double(nowNs() - started) / 1e9

print("")
printTable(results)
printTargets(results)
print("\n\(options.quick ? "quick" : "full") run, \(options.reps) timed repetitions (medians), "
      + "\(fixed(elapsed, 1)) s; ratios are impl/uvloop within this run (above 1: UVLoop is cheaper).")

if let jsonPath {
    var uts = utsname()
    uname(&uts)
    let machine = withUnsafeBytes(of: &uts.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    let release = withUnsafeBytes(of: &uts.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    do {
        try writeJSON(results, to: jsonPath, meta: [
            "mode": options.quick ? "quick" : "full",
            "repetitions": String(options.reps),
            "cores": String(sysconf(Int32(_SC_NPROCESSORS_ONLN))),
            "machine": machine,
            "kernel": release,
            "seconds": fixed(elapsed, 1),
        ])
        print("JSON written to \(jsonPath)")
    } catch {
        FileHandleOut.err("uvloop-bench: \(error)")
        exit(1)
    }
}

if results.contains(where: { $0.failure != nil }) {
    FileHandleOut.err("uvloop-bench: some runs failed or hung (see FAILED/HANG above)")
    exit(3)
}
