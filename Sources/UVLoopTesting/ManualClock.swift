import UVLoop

extension Loop {
    /// Creates a loop on the calling thread with a manual clock, for a deterministic test.
    ///
    /// The loop is the real one (real `uv_run`, real libuv handles); only its time source differs:
    /// time moves when the test calls `advanceTime(by:)` or `advanceTime(to:)`.
    public static func manual(postBudget: Int = 4096) throws(LoopError) -> Loop {
        try Loop(clock: .manual, postBudget: postBudget)
    }

    /// Advances a manual clock by `duration`, firing every timer that comes due, synchronously.
    ///
    /// See `advanceTime(to:)`. A negative duration is an error.
    public func advanceTime(by duration: Duration) throws(LoopError) {
        guard duration >= .zero else {
            throw LoopError.invalidArgument("advanceTime(by:) needs a non-negative duration (got \(duration))")
        }
        try advanceTime(to: now.advanced(by: duration))
    }

    /// Advances a manual clock to `deadline`, firing due timers synchronously, in (deadline,
    /// schedule order).
    ///
    /// First runs everything ready at the current time. Then, for each pending deadline up to
    /// `deadline`, sets the clock to exactly that deadline (so each callback sees `now` equal to
    /// its own deadline) and runs the loop until idle, so work a callback posts (any of the three
    /// verbs) and timers it schedules at or before `deadline` run before time moves further. Ends
    /// with the clock at `deadline`. No yielding, no sleeping: when it returns, all is done.
    ///
    /// Call on the loop's thread, outside a loop callback. A deadline in the past leaves the clock
    /// where it is (it never goes backward).
    public func advanceTime(to deadline: LoopInstant) throws(LoopError) {
        guard clockSource == .manual else {
            throw LoopError.invalidArgument("advanceTime needs a loop created with clock: .manual")
        }
        guard isOnLoopThread else { throw LoopError.notOnLoopThread(operation: "advanceTime") }
        try runUntilIdle()
        while let next = earliestTimerDeadline, next <= deadline {
            setManualTime(next)
            try runUntilIdle()
        }
        setManualTime(deadline)
        try runUntilIdle()
    }

    /// The deadline of the earliest pending timer, if any. Loop thread only.
    public var nextTimerDeadline: LoopInstant? { earliestTimerDeadline }

    /// The number of pending timers. Loop thread only.
    public var scheduledTimerCount: Int { pendingTimerCount }
}
