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
    /// Monotonic nanoseconds and libuv's idle time at the last turn's end; zero before the first.
    var lastTurnEnd: UInt64 = 0
    var lastIdle: UInt64 = 0
    /// ``Loop/setStallHandler(threshold:_:)``: the threshold in nanoseconds and the handler.
    var stallHandler: (threshold: UInt64, handler: @Sendable (LoopStall) -> Void)?

    mutating func resetTurn() {
        postedJobs = 0
        timersFired = 0
        nextIterationJobs = 0
        chunks = 0
    }
}
