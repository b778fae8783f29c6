/// The loop thread's side of the metrics: what the current turn has run so far, and the clock
/// and idle-time readings of the last turn's end. Plain counters (loop thread only), added to
/// once per batch, burst or snapshot rather than once per job.
struct TurnMetrics {
    var postedJobs = 0
    var timersFired = 0
    var nextIterationJobs = 0
    var chunks = 0

    var iterations: UInt64 = 0
    var busyNanoseconds: UInt64 = 0
    /// Monotonic nanoseconds and the idle time at the last turn's end; zero before the first.
    var lastTurnEnd: UInt64 = 0
    var lastIdle: UInt64 = 0
    /// An owned loop's idle time, counted by the loop itself (an attached loop's is libuv's): the
    /// time from the end of a turn whose poll may block to the first callback after it.
    var idleNanoseconds: UInt64 = 0
    /// When the current poll began, if it may block; zero once a callback has noted its end.
    var pollStart: UInt64 = 0
    /// ``Loop/setStallHandler(threshold:_:)``: the threshold in nanoseconds and the handler.
    var stallHandler: (threshold: UInt64, handler: @Sendable (LoopStall) -> Void)?

    mutating func resetTurn() {
        postedJobs = 0
        timersFired = 0
        nextIterationJobs = 0
        chunks = 0
    }
}
