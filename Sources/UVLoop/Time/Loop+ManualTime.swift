/// The hooks `UVLoopTesting` drives a manual clock with; not public API.
extension Loop {
    /// The earliest pending timer's deadline. Loop thread only.
    package var earliestTimerDeadline: LoopInstant? {
        preconditionOnLoopThread("Loop.nextTimerDeadline")
        return engine.timers.earliestDeadline.map(LoopInstant.init(nanoseconds:))
    }

    /// How many timers are scheduled. Loop thread only.
    package var pendingTimerCount: Int {
        preconditionOnLoopThread("Loop.scheduledTimerCount")
        return engine.timers.count
    }

    /// Whether one of the loop's callbacks is on the stack (a run of the loop is in progress), so
    /// that stepping or advancing it now would re-enter it. Loop thread only.
    package var isInsideRun: Bool {
        preconditionOnLoopThread("Loop.isInsideRun")
        return engine.isRunning
    }

    /// Moves a manual clock forward to `instant` (never backward). Loop thread only.
    package func setManualTime(_ instant: LoopInstant) {
        preconditionOnLoopThread("Loop.advanceTime")
        engine.setManualNow(instant.nanoseconds)
    }
}
