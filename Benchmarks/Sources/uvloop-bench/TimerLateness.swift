// timer_lateness: how late a timer fires, idle and while other threads post to the same loop.
// Each run chains `ticks` one-shot timers, each due `periodNs` after the previous one fired, at an
// absolute deadline on CLOCK_MONOTONIC (the clock of both UVLoop's LoopInstant and NIO's
// NIODeadline); lateness is the time the callback starts minus its deadline.
import Dispatch
import NIOCore
import Synchronization
import UVLoop
#if canImport(Glibc)
import Glibc
#endif

/// Threads that keep posting empty closures to a loop while a run measures, each with at most
/// `window` posts not yet run, so that the queue stays bounded.
final class Posters: Sendable {
    private let stopped = StopFlag()
    private let threads: Mutex<[BenchThread]> = Mutex([])

    init(count: Int, window: Int = 1_000, post: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void) {
        var started: [BenchThread] = []
        for _ in 0..<count {
            let outstanding = Outstanding()
            started.append(BenchThread { [stopped] in
                while !stopped.value.load(ordering: .relaxed) {
                    if outstanding.count.load(ordering: .relaxed) >= window { sched_yield(); continue }
                    outstanding.count.add(1, ordering: .relaxed)
                    post { outstanding.count.subtract(1, ordering: .relaxed) }
                }
            })
        }
        threads.withLock { $0 = started }
    }

    func stop() {
        stopped.value.store(true, ordering: .relaxed)
        for thread in threads.withLock({ $0 }) { thread.join() }
    }
}

/// Set once to make the posters stop.
final class StopFlag: Sendable {
    let value = Atomic<Bool>(false)
}

/// One poster's posts that have not run yet.
final class Outstanding: Sendable {
    let count = Atomic<Int>(0)
}

/// Lateness samples, in nanoseconds, and the percentile a workload reports.
struct LatenessSummary {
    static func percentile(_ samples: [Double], _ p: Double) -> Double {
        let sorted = samples.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted[Int((Double(sorted.count - 1) * p).rounded())]
    }
}

/// Lateness samples written on the loop's thread only, read after the run has signalled `done`.
final class LatenessLog: @unchecked Sendable {
    var samples: [Double] = []
    var remaining = 0
}

extension UVLoopSide {
    static func timerLateness(ticks: Int, periodNs: UInt64, posters: Int, percentile: Double) -> SessionMaker? {
        return {
            let r = try UVLoopRunner()
            let loop = r.loop
            return Session(run: {
                let log = LatenessLog()
                log.samples.reserveCapacity(ticks)
                log.remaining = ticks
                let done = DispatchSemaphore(value: 0)
                let load = Posters(count: posters) { work in try? loop.post(work) }
                @Sendable func arm(at deadline: UInt64) {
                    _ = try? loop.schedule(at: LoopInstant(nanoseconds: deadline)) {
                        let now = nowNs()
                        log.samples.append(Double(Int64(bitPattern: now &- deadline)))
                        log.remaining -= 1
                        if log.remaining > 0 { arm(at: now + periodNs) } else { done.signal() }
                    }
                }
                try loop.post { arm(at: nowNs() + periodNs) }
                done.wait()
                load.stop()
                return Sample(value: LatenessSummary.percentile(log.samples, percentile), ops: ticks)
            }, close: r.close)
        }
    }
}

extension NIOSide {
    static func timerLateness(ticks: Int, periodNs: UInt64, posters: Int, percentile: Double) -> SessionMaker {
        return {
            let l = NIOLoop()
            let el = l.el
            return Session(run: {
                let log = LatenessLog()
                log.samples.reserveCapacity(ticks)
                log.remaining = ticks
                let done = DispatchSemaphore(value: 0)
                let load = Posters(count: posters) { work in el.execute(work) }
                @Sendable func arm(at deadline: UInt64) {
                    el.scheduleTask(deadline: .uptimeNanoseconds(deadline)) {
                        let now = nowNs()
                        log.samples.append(Double(Int64(bitPattern: now &- deadline)))
                        log.remaining -= 1
                        if log.remaining > 0 { arm(at: now + periodNs) } else { done.signal() }
                    }
                }
                el.execute { arm(at: nowNs() + periodNs) }
                done.wait()
                load.stop()
                return Sample(value: LatenessSummary.percentile(log.samples, percentile), ops: ticks)
            }, close: l.close)
        }
    }
}
