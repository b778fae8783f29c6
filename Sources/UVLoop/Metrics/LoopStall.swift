/// A turn of a loop that ran longer than the threshold set with
/// ``Loop/setStallHandler(threshold:_:)``: how long it was busy and what it ran.
///
/// The counts say what UVLoop itself ran in the turn; time spent in other callbacks (the I/O
/// callbacks of streams and watches, or an owner's own libuv handles on an attached loop) is part
/// of ``duration`` but not of the counts.
public struct LoopStall: Sendable, Hashable {
    /// How long the turn was busy: from the end of one poll for I/O to the start of the next.
    public var duration: Duration
    /// Posted jobs it ran (closures, Swift concurrency jobs, thread-pool completions).
    public var postedJobs: Int
    /// Timers it fired.
    public var timersFired: Int
    /// Next-iteration jobs it ran.
    public var nextIterationJobs: Int
    /// Chunks of chunked loops it ran.
    public var chunks: Int
}

extension Loop {
    /// Calls `handler` after every turn that was busy for longer than `threshold`, with how long
    /// it took and what it ran; nil removes the handler.
    ///
    /// The handler runs on the loop's thread, at the end of the long turn (before the loop polls
    /// again), so a slow handler makes the next turn late: keep it short (log, count, post the
    /// report elsewhere). Callable from any thread; from another thread it takes effect once the
    /// loop has received it, like a post.
    ///
    /// ```swift
    /// let thread = try Loop.startThread()
    /// try thread.loop.setStallHandler(threshold: .milliseconds(50)) { stall in
    ///     print("loop stalled for \(stall.duration), \(stall.postedJobs) posted jobs")
    /// }
    /// try thread.loop.invoke { spin(for: .milliseconds(60)) }   // reported when its turn ends
    /// thread.shutdown()
    /// ```
    /// - Parameters:
    ///   - threshold: the busy time above which a turn is reported; at least 1 microsecond.
    ///   - handler: called with each long turn's report.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for a threshold below 1 microsecond;
    ///   ``LoopError/shutDown`` (or ``LoopError/detached``) when the loop no longer accepts work.
    public func setStallHandler(
        threshold: Duration, _ handler: (@Sendable (LoopStall) -> Void)?
    ) throws(LoopError) {
        guard threshold >= .microseconds(1) else {
            throw LoopError.invalidArgument("setStallHandler needs a threshold of at least 1 microsecond (got \(threshold))")
        }
        let nanoseconds = threshold.delayNanoseconds
        let install: @Sendable () -> Void = { [confined] in
            confined.value.metrics.stallHandler = handler.map { (nanoseconds, $0) }
        }
        if isOnLoopThread {
            try lifecycle.admitWork()
            install()
        } else {
            try post(install)
        }
    }
}
