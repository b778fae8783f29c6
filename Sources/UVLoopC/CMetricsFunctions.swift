import CUVLoop
import UVLoop

// Loop health from C: the metrics reading and the stall callback; declared and documented in
// uvloop.h.

/// A `Duration` in whole nanoseconds: 0 for a negative one, `UInt64.max` past it.
@inline(__always)
private func nanoseconds(_ duration: Duration) -> UInt64 { duration.delayNanoseconds }

@inline(__always)
private func count(_ value: Int) -> UInt64 { UInt64(max(0, value)) }

/// The C function `uvloop_metrics`, as uvloop.h declares and documents it (its threads, results
/// and error codes); Swift code calls it like any C function.
@c @implementation
public func uvloop_metrics(_ l: OpaquePointer?, _ out: UnsafeMutablePointer<uvloop_metrics_t>?) -> Int32 {
    guard let cLoop = cLoop(l), let out else { return UVLOOP_EINVAL }
    let reading = cLoop.loop.metrics()
    var metrics = uvloop_metrics_t()
    metrics.iterations = reading.iterations
    metrics.busy_ns = nanoseconds(reading.busyTime)
    metrics.idle_ns = nanoseconds(reading.idleTime)
    metrics.posted = count(reading.waiting.posted)
    metrics.next_iteration = count(reading.waiting.nextIteration)
    metrics.timers = count(reading.waiting.timers)
    metrics.chunked_loops = count(reading.waiting.chunkedLoops)
    metrics.inbox_messages = count(reading.waiting.inboxMessages)
    out.pointee = metrics
    return 0
}

/// A C stall callback and its context, carried to the loop's thread and called there.
///
/// `@unchecked Sendable` is safe for the reason given on `CCallback`: UVLoop calls the function
/// on the loop's thread only and never reads or frees the context.
private struct CStallCallback: @unchecked Sendable {
    let function: uvloop_stall_cb
    let context: UnsafeMutableRawPointer?

    func run(_ stall: LoopStall) {
        var report = uvloop_stall_t()
        report.duration_ns = nanoseconds(stall.duration)
        report.posted_jobs = count(stall.postedJobs)
        report.timers_fired = count(stall.timersFired)
        report.next_iteration_jobs = count(stall.nextIterationJobs)
        report.chunks = count(stall.chunks)
        withUnsafePointer(to: &report) { function(context, $0) }
    }
}

/// The C function `uvloop_set_stall_cb`, as uvloop.h declares and documents it (its threads,
/// results and error codes); Swift code calls it like any C function.
@c @implementation
public func uvloop_set_stall_cb(
    _ l: OpaquePointer?, _ threshold_ns: UInt64, _ fn: uvloop_stall_cb?, _ ctx: UnsafeMutableRawPointer?
) -> Int32 {
    guard let cLoop = cLoop(l) else { return UVLOOP_EINVAL }
    if fn != nil, threshold_ns < 1000 { return UVLOOP_EINVAL }
    let threshold = Duration.nanoseconds(Int64(clamping: max(threshold_ns, 1000)))
    let handler = fn.map { function -> @Sendable (LoopStall) -> Void in
        let callback = CStallCallback(function: function, context: ctx)
        return { callback.run($0) }
    }
    let loop = cLoop.loop
    guard !loop.isOnLoopThread else {
        return cResult { () throws(LoopError) in try loop.setStallHandler(threshold: threshold, handler) }
    }
    // Through the C inbox, in order with the calling thread's posts. On arrival the loop's
    // thread installs it (which cannot fail then: a loop that stopped accepting work refuses the
    // send itself, and a detach's last delivery installs it for nothing).
    return cResult { () throws(LoopError) in
        try cLoop.send { try? loop.setStallHandler(threshold: threshold, handler) }
    }
}
