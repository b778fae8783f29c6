// Small helpers shared by every side of the benchmarks: clocks, threads, loop-confined counters.
import CMallocCount
import CPeers
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

@inline(__always) func nowNs() -> UInt64 { cp_now_ns() }
@inline(__always) func processCPUNs() -> UInt64 { cp_process_cpu_ns() }

/// Hands a value to an opaque C function so that the optimiser cannot drop the work that made it.
@inline(__always) func blackHole(_ value: UInt64) { cp_sink(value) }
@inline(__always) func blackHole(_ value: Int) { cp_sink(UInt64(truncatingIfNeeded: value)) }

/// A plain pthread running `body`; `join()` waits for it. Used for producers, so that every peer
/// posts from a thread of the same kind.
final class BenchThread: @unchecked Sendable {
    private final class Body { let run: @Sendable () -> Void; init(_ run: @escaping @Sendable () -> Void) { self.run = run } }
    private var thread = pthread_t()

    init(_ body: @escaping @Sendable () -> Void) {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        let rc = pthread_create(&thread, nil, { raw in
            let body = Unmanaged<Body>.fromOpaque(raw!).takeRetainedValue()
            body.run()
            return nil
        }, context)
        precondition(rc == 0, "pthread_create failed: \(rc)")
    }

    func join() { pthread_join(thread, nil) }
}

/// State owned by one loop (or serial queue): only its thread touches `count` and `sum`.
/// The semaphore is signalled once `target` items have arrived.
///
/// The tallies live behind a raw pointer, like `Sink`'s: stored `var`s of a class would pay a
/// run-time exclusivity check on every `add`, charged to whichever Swift implementation is under
/// test but not to the C peers, whose receivers add to plain struct fields.
final class Counter: @unchecked Sendable {
    private let tallies: UnsafeMutablePointer<(target: Int, count: Int, sum: UInt64)>
    let done = DispatchSemaphore(value: 0)

    init(target: Int) {
        tallies = .allocate(capacity: 1)
        tallies.initialize(to: (target, 0, 0))
    }

    deinit { tallies.deallocate() }

    var target: Int { tallies.pointee.target }
    var count: Int { tallies.pointee.count }
    var sum: UInt64 { tallies.pointee.sum }

    /// Counter reuse for receivers that outlive one run (an inbox). Call before the run's first send:
    /// the send's own synchronisation publishes it to the loop thread.
    func reset(target: Int) {
        tallies.pointee = (target, 0, 0)
    }

    @inline(__always) func add(_ value: Int) {
        tallies.pointee.sum &+= UInt64(truncatingIfNeeded: value)
        tallies.pointee.count += 1
        if tallies.pointee.count == tallies.pointee.target { done.signal() }
    }

    func wait() { done.wait() }
}

/// An accumulator behind a raw pointer, for per-item closures (chunked-loop bodies): a `var` in a
/// class or a captured box would pay a run-time exclusivity check on every access, and that cost
/// would be charged to the runtime under test.
struct Sink: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<UInt64>
    init() { pointer = .allocate(capacity: 1); pointer.initialize(to: 0) }
    @inline(__always) func add(_ v: UInt64) { pointer.pointee &+= v }
    var value: UInt64 { pointer.pointee }
    func free() { pointer.deallocate() }
}

/// A mutable box shared across threads under an external happens-before (a semaphore, a join).
final class Box<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}

/// Deterministic timeouts (1-2 hours) shared with the C peers: every impl schedules the same sequence.
struct TimeoutSequence {
    var state: UInt64
    init(seed: UInt64 = 12345) { state = seed }
    mutating func nextMilliseconds() -> Int64 { Int64(cp_rand_timeout_ms(&state)) }
}

/// Waits, at most 3 s, until the process is idle: under 0.5 ms of CPU time (all threads) in a
/// 5 ms step. The harness calls it between runs, so that work an impl defers to its own threads is
/// not charged to the impl that runs next: Dispatch, for one, tears down a million cancelled timer
/// sources on its worker threads for seconds after `timer_cancel` returned, and measured alongside
/// it UVLoop's 1M run took 350 ns per timer instead of 125-145.
func waitUntilQuiet() {
    let giveUp = nowNs() + 3_000_000_000
    while nowNs() < giveUp {
        let cpu = processCPUNs()
        sleepNs(5_000_000)
        if processCPUNs() - cpu < 500_000 { return }
    }
}

/// Sleeps the calling thread (the benchmark's main thread) for `ns`; only used where the measured
/// quantity is what a loop does while nothing happens (idle_cpu), and between runs.
func sleepNs(_ ns: UInt64) {
    var ts = timespec(tv_sec: Int(ns / 1_000_000_000), tv_nsec: Int(ns % 1_000_000_000))
    var rem = timespec()
    while nanosleep(&ts, &rem) != 0 { ts = rem }
}

/// Runs `body` and returns the net bytes it left allocated and the number of allocations it made,
/// counting the calling thread only (frees by other threads, e.g. a previous workload's teardown,
/// must not blur the figure).
func measureHeap(_ body: () throws -> Void) rethrows -> (netBytes: Int64, allocations: UInt64) {
    mc_thread_begin()
    do {
        try body()
    } catch {
        _ = mc_thread_end()
        throw error
    }
    let s = mc_thread_end()
    return (s.net_bytes, s.allocations)
}

/// Ten milliseconds of spread for timer_fire, in nanoseconds.
let timerSpreadNs: Int64 = 10_000_000
