/// A reading of a loop's health: how many turns it has made, how much of its time was busy, and
/// how much work waits. Take one with ``Loop/metrics()``, from any thread.
///
/// The loop updates the figures once per turn, just before it polls for I/O, so a reading
/// describes the loop as of its last completed turn. A loop stuck in a long callback keeps its
/// last figures until that callback returns; ``Loop/setStallHandler(threshold:_:)`` reports such
/// turns when they end.
///
/// ```swift
/// let thread = try Loop.startThread()
/// let before = thread.loop.metrics()
/// try thread.loop.invoke { /* some work */ }
/// let after = thread.loop.metrics()
/// print(after.iterations >= before.iterations)        // true
/// print(after.utilization(since: before) <= 1)       // the busy share of the time in between
/// thread.shutdown()
/// ```
public struct LoopMetrics: Sendable, Hashable {
    /// The turns the loop has completed (libuv iterations that reached the poll phase).
    public var iterations: UInt64
    /// The time the loop spent running callbacks: its own work, timers and I/O callbacks.
    public var busyTime: Duration
    /// The time the loop spent waiting in the kernel for I/O, timers or posted work.
    public var idleTime: Duration
    /// The work that was waiting when the loop last polled.
    public var waiting: LoopWaitingWork

    /// The share of time the loop was busy, between 0 and 1: over its whole life, or, given an
    /// earlier reading of the same loop, over the time between the two. 0 when no time has passed.
    /// - Parameter earlier: a reading taken before this one, or nil for the loop's whole life.
    public func utilization(since earlier: LoopMetrics? = nil) -> Double {
        let busy = busyTime - (earlier?.busyTime ?? .zero)
        let idle = idleTime - (earlier?.idleTime ?? .zero)
        let total = busy + idle
        guard total > .zero else { return 0 }
        return max(0, min(1, busy / total))
    }
}

/// The work waiting on a loop when it last polled, part of ``LoopMetrics``.
public struct LoopWaitingWork: Sendable, Hashable {
    /// Posted jobs not yet run: those the loop's thread holds as of its last poll, and those
    /// other threads have queued since, counted when the reading is taken.
    public var posted: Int
    /// Jobs queued for a later iteration (``Loop/postNextIteration(_:)``).
    public var nextIteration: Int
    /// Timers scheduled and not yet due or fired.
    public var timers: Int
    /// Chunked loops started and not yet finished.
    public var chunkedLoops: Int
    /// Messages sent to the loop's inboxes and not yet received.
    public var inboxMessages: Int
}

extension Loop {
    /// The loop's figures as of its last completed turn. Callable from any thread; cheap (a
    /// handful of atomic loads), so it can be read as often as a monitoring system wants.
    ///
    /// Busy and idle time cover the time since the loop's first turn. On an attached loop they
    /// start when it is attached (libuv measures idle time only from then on).
    /// - Returns: the reading; all zero before the loop's first turn.
    public func metrics() -> LoopMetrics {
        var reading = metricsRecorder.reading()
        reading.waiting.posted += queue.count
        return reading
    }
}
