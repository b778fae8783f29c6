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

    /// Moves a manual clock forward to `instant` (never backward). Loop thread only.
    package func setManualTime(_ instant: LoopInstant) {
        preconditionOnLoopThread("Loop.advanceTime")
        engine.setManualNow(instant.nanoseconds)
    }
}
