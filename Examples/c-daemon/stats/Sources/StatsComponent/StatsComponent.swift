import CStats
import CUVLoop
import Synchronization
import UVLoop
import UVLoopC
import UVOperations

// The statistics component: the Swift side of stats.h. Each entry point below implements a
// declaration of stats.h (`@c @implementation`: the compiler checks the signature against the
// header). They are `public` so that the shared library exports them to the C daemon.

/// One event from a C worker thread.
struct Event: Sendable {
    var sequence: UInt64
    var value: UInt64
}

/// The component's figures: loop thread only (inside a `LoopBound`).
struct Figures {
    var events: UInt64 = 0
    var outOfOrder: UInt64 = 0
    var lastSequence: UInt64 = 0
    var valueSum: UInt64 = 0
    var reports: UInt64 = 0
    var digests: UInt64 = 0
    var p50: UInt64 = 0
    var p99: UInt64 = 0
    /// The values of the last `sampleSize` events, for the background digest.
    var samples = [UInt64](repeating: 0, count: Figures.sampleSize)
    var digestRunning = false
    /// `events` and the loop's time at the previous report, for the rate.
    var reportedEvents: UInt64 = 0
    var reportedAt: UInt64 = 0

    static let sampleSize = 4096

    mutating func count(_ event: Event) {
        if event.sequence != lastSequence &+ 1 { outOfOrder += 1 }
        lastSequence = event.sequence
        samples[Int(events % UInt64(Figures.sampleSize))] = event.value
        events += 1
        valueSum &+= event.value
    }

    var snapshot: stats_snapshot_t {
        stats_snapshot_t(
            events: events, out_of_order: outOfOrder, last_sequence: lastSequence, value_sum: valueSum,
            reports: reports, digests: digests, p50: p50, p99: p99)
    }
}

/// A running component: what `stats_component_start` set up and `stats_component_stop` ends.
final class Component: Sendable {
    let loop: Loop
    let figures: LoopBound<Figures>
    let inbox: Inbox<Event>
    let session: OperationSession
    let reporter: LoopTimer?

    init(loop: Loop, reportEvery interval: Duration?) throws(LoopError) {
        self.loop = loop
        var initial = Figures()
        initial.reportedAt = loop.now.nanoseconds
        let figures = LoopBound(initial, loop: loop)
        let session = OperationSession()
        self.figures = figures
        self.session = session
        // An inbox: C threads send without allocating; events arrive in each thread's order.
        inbox = try loop.makeInbox(of: Event.self) { event in figures.value.count(event) }
        do {
            reporter = try interval.map { interval throws(LoopError) in
                try loop.scheduleRepeating(every: interval) {
                    Component.report(figures: figures, loop: loop, session: session)
                }
            }
            // Reports are not a reason to keep running: unreferenced, the timer never keeps the
            // owner's uv_run(UV_RUN_DEFAULT) going once the daemon's own handles are closed.
            reporter?.setReferenced(false)
        } catch {
            inbox.close()
            throw error
        }
    }

    /// Prints the figures and starts a digest of the recent values on the thread pool. Loop thread.
    static func report(figures: LoopBound<Figures>, loop: Loop, session: OperationSession) {
        let now = loop.now.nanoseconds
        figures.withValue { figures in
            figures.reports += 1
            let seconds = Double(now &- figures.reportedAt) / 1e9
            let rate = seconds > 0 ? Double(figures.events - figures.reportedEvents) / seconds : 0
            figures.reportedEvents = figures.events
            figures.reportedAt = now
            let inOrder = figures.outOfOrder == 0 ? "yes" : "no"
            print("stats: events=\(figures.events) in_order=\(inOrder) rate=\(Int(rate))/s"
                + " p50=\(figures.p50) p99=\(figures.p99) digests=\(figures.digests)")
        }
        startDigest(figures: figures, loop: loop, session: session)
    }

    /// Sorts a copy of the sampled values on libuv's thread pool (a `WorkerOperation`), and
    /// stores the percentiles on the loop's thread. One digest at a time. Loop thread.
    static func startDigest(figures: LoopBound<Figures>, loop: Loop, session: OperationSession) {
        let sample: [UInt64]? = figures.withValue { figures in
            guard !figures.digestRunning, figures.events > 0 else { return nil }
            figures.digestRunning = true
            return Array(figures.samples.prefix(Int(min(figures.events, UInt64(Figures.sampleSize)))))
        }
        guard let sample else { return }
        let digest = WorkerOperation(name: "digest") { () -> (p50: UInt64, p99: UInt64) in
            let sorted = sample.sorted()   // on a thread-pool thread
            return (sorted[sorted.count / 2], sorted[min(sorted.count - 1, sorted.count * 99 / 100)])
        }.onCompletion { outcome in       // on the loop's thread, also when cancelled
            figures.withValue { figures in
                figures.digestRunning = false
                guard let percentiles = outcome.value, !outcome.isCancelled else { return }
                figures.digests += 1
                (figures.p50, figures.p99) = (percentiles.p50, percentiles.p99)
            }
        }
        do {
            try digest.start(on: loop, session: session)
        } catch {
            figures.withValue { $0.digestRunning = false }
        }
    }
}

/// The running component, if any.
private let running = Mutex<Component?>(nil)

@c @implementation
public func stats_component_start(_ l: OpaquePointer?, _ report_ms: UInt64) -> Int32 {
    guard let loop = Loop.fromCHandle(l) else { return UVLOOP_EINVAL }
    guard loop.isOnLoopThread else { return UVLOOP_ENOTLOOPTHREAD }
    guard running.withLock({ $0 == nil }) else { return UVLOOP_EALREADY }
    do {
        let interval = report_ms > 0 ? Duration.milliseconds(Int64(clamping: report_ms)) : nil
        let component = try Component(loop: loop, reportEvery: interval)
        running.withLock { $0 = component }
        return 0
    } catch {
        return error.cErrorCode
    }
}

@c @implementation
public func stats_component_event(_ sequence: UInt64, _ value: UInt64) -> Int32 {
    guard let inbox = running.withLock({ $0?.inbox }) else { return UVLOOP_ESHUTDOWN }
    do {
        try inbox.send(Event(sequence: sequence, value: value))
        return 0
    } catch {
        return error.cErrorCode
    }
}

@c @implementation
public func stats_component_snapshot(_ out: UnsafeMutablePointer<stats_snapshot_t>?) -> Int32 {
    guard let out else { return UVLOOP_EINVAL }
    guard let component = running.withLock({ $0 }) else { return UVLOOP_ESHUTDOWN }
    guard component.loop.isOnLoopThread else { return UVLOOP_ENOTLOOPTHREAD }
    out.pointee = component.figures.value.snapshot
    return 0
}

@c @implementation
public func stats_component_stop(_ final: UnsafeMutablePointer<stats_snapshot_t>?) -> Int32 {
    guard let component = running.withLock({ $0 }) else { return UVLOOP_ESHUTDOWN }
    guard component.loop.isOnLoopThread else { return UVLOOP_ENOTLOOPTHREAD }
    running.withLock { $0 = nil }
    _ = component.reporter?.cancel()
    component.session.cancelAll()
    component.inbox.close()
    final?.pointee = component.figures.value.snapshot
    return 0
}
