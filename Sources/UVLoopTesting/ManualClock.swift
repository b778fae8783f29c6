import UVLoop

/// Deterministic time for tests: a loop whose clock moves only when the test moves it, and the
/// calls that move it and inspect its timers.
extension Loop {
    /// Creates a loop on the calling thread with a manual clock, for a deterministic test.
    ///
    /// The loop is the real one (real `uv_run`, real libuv handles); only its time source differs:
    /// time starts at zero and moves when the test calls ``advanceTime(by:)`` or
    /// ``advanceTime(to:)``. The calling thread is the loop's thread: the test steps the loop
    /// there (`runUntilIdle()`, or the two calls above). For an `async` test, which may resume
    /// on another thread after each `await`, use `Loop.startThread(clock: .manual)` and
    /// ``UVLoop/LoopThread/advanceTime(by:)`` instead: on a loop made here by async code, an
    /// awaited async call of the loop stops the program with a message saying so, unless a task
    /// the loop runs (`Task(executorPreference: loop)`) makes it while the test steps the loop.
    ///
    /// ```swift
    /// let loop = try Loop.manual()
    /// let fired = LoopBound(false, loop: loop)
    /// try loop.schedule(after: .seconds(5)) { fired.value = true }
    /// try loop.advanceTime(by: .seconds(4))     // nothing due yet
    /// try loop.advanceTime(by: .seconds(1))     // the timer fires, inside this call
    /// ```
    /// - Parameter postBudget: the most posted jobs one drain runs, and the most due timers one
    ///   turn fires; as for `Loop(clock:postBudget:)`.
    /// - Returns: a loop with `clockSource == .manual`, owned by the calling thread.
    /// - Throws: `LoopError.invalidArgument` for a `postBudget` below 1; `LoopError.libuv` when
    ///   libuv cannot create the loop.
    public static func manual(postBudget: Int = Loop.defaultPostBudget) throws(LoopError) -> Loop {
        try Loop(clock: .manual, postBudget: postBudget)
    }

    /// Advances a manual clock by `duration`, firing every timer that comes due, synchronously.
    ///
    /// See ``advanceTime(to:)``. A negative duration is an error. Call on the loop's thread,
    /// outside a loop callback, on a loop created with a manual clock: elsewhere, or on a loop
    /// with the system clock, it stops the program with a message naming the misuse.
    /// - Parameter duration: how far to move the clock; not negative.
    /// - Throws: `LoopError.invalidArgument` for a negative duration; otherwise like
    ///   ``advanceTime(to:)``.
    public func advanceTime(by duration: Duration) throws(LoopError) {
        // Checked here, before the deadline is computed, so that the message names this call.
        preconditionManualClock("Loop.advanceTime(by:)")
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
    /// Call on the loop's thread, outside a loop callback (from a callback, use
    /// ``advanceClockWithoutRunning(by:)``), on a loop created with a manual clock: from another
    /// thread, or on a loop with the system clock, it stops the program with a message naming the
    /// misuse. A deadline in the past leaves the clock where it is (it never goes backward).
    /// - Parameter deadline: the time to move the clock to.
    /// - Throws: `LoopError.shutDown` once the loop has shut down. From inside a loop callback it
    ///   stops the program (the loop is not re-entrant).
    public func advanceTime(to deadline: LoopInstant) throws(LoopError) {
        preconditionManualClock("Loop.advanceTime(to:)")
        try advanceManualClock(to: deadline) { () throws(LoopError) in try runUntilIdle() }
    }

    /// The deadline of the earliest pending timer, if any. Loop thread only (elsewhere it stops
    /// the program with a message naming the misuse).
    public var nextTimerDeadline: LoopInstant? { earliestTimerDeadline }

    /// The number of pending timers. Loop thread only (elsewhere it stops the program with a
    /// message naming the misuse).
    public var scheduledTimerCount: Int { pendingTimerCount }

    /// Stops the program unless this loop has a manual clock and this is its thread: moving the
    /// clock of a loop with the system clock, or from another thread, is the calling code's own
    /// mistake, which it cannot handle.
    func preconditionManualClock(_ operation: String, file: StaticString = #fileID, line: UInt = #line) {
        misusePrecondition(
            clockSource == .manual,
            "UVLoop: \(operation) on a loop with the system clock; create the loop with Loop.manual() "
                + "(or clock: .manual) to move its time",
            file: file, line: line)
        preconditionOnLoopThread(operation, file: file, line: line)
    }
}
