import UVLoop

/// A loop with a manual clock that runs on a thread of its own, for `async` tests: the thread
/// handles I/O and posted work as it comes, and time moves only when the test moves it.
///
/// An `async` test cannot step a loop made with ``UVLoop/Loop/manual(postBudget:)``: after an
/// `await` it may resume on another thread than the loop's, and while it awaits one of the loop's
/// async calls nothing steps the loop (such an await stops the program with a message saying
/// so, rather than hang). Start the loop on a thread instead, with
/// `Loop.startThread(clock: .manual)`, and move its time with these calls:
///
/// ```swift
/// let thread = try Loop.startThread(clock: .manual)
/// let loop = thread.loop
/// let connection = try await loop.connect(to: address)   // the thread runs the I/O
/// try await thread.advanceTime(by: .seconds(30))          // timers due by then fire
/// ```
extension LoopThread {
    /// Moves the loop's manual clock forward by `duration`, firing every timer that comes due in
    /// order, and returns once the loop has settled (see ``runUntilIdle()``). Callable from any
    /// task but one running on the loop's thread.
    ///
    /// Like ``UVLoop/Loop/advanceTime(to:)``: for each pending deadline up to the target, the clock
    /// is set to exactly that deadline and the loop settles before time moves further.
    /// - Parameter duration: how far to move the clock; not negative.
    /// - Throws: `LoopError.invalidArgument` for a negative duration; `LoopError.shutDown` once the
    ///   loop has shut down. On a loop with the system clock it stops the program with a message
    ///   naming the misuse.
    public func advanceTime(by duration: Duration) async throws(LoopError) {
        guard duration >= .zero else {
            throw LoopError.invalidArgument("advanceTime(by:) needs a non-negative duration (got \(duration))")
        }
        let loop = loop
        let target = try await onLoop { () -> LoopInstant in
            loop.preconditionManualClock("LoopThread.advanceTime(by:)")
            return loop.now.advanced(by: duration)
        }
        try await advanceTime(to: target)
    }

    /// Moves the loop's manual clock forward to `deadline`; see ``advanceTime(by:)``. A deadline in
    /// the past leaves the clock where it is.
    /// - Parameter deadline: the time to move the clock to.
    /// - Throws: `LoopError.shutDown` once the loop has shut down.
    public func advanceTime(to deadline: LoopInstant) async throws(LoopError) {
        let loop = loop
        var advance = ManualClockAdvance(to: deadline)
        var first = true
        // Each step reads the earliest deadline and sets the clock to it in one hop, so that a
        // timer scheduled from another thread in between cannot be passed over.
        while true {
            let (moved, settle) = try await onLoop { [advance, first] () -> (ManualClockAdvance, Bool) in
                if first { loop.preconditionManualClock("LoopThread.advanceTime(to:)") }
                var moved = advance
                let settle = moved.moveClock(of: loop)
                return (moved, settle)
            }
            advance = moved
            first = false
            guard settle else { return }
            try await runUntilIdle()
        }
    }

    /// Returns once the loop has nothing to do: no posted work, no due timer, no I/O callback in
    /// its last turns, and no file-system operation or name lookup in flight; the same rules as
    /// `Loop.runUntilIdle(maxIterations:)`. Does not move the clock. Callable from any
    /// task but one running on the loop's thread.
    /// - Throws: `LoopError.shutDown` once the loop has shut down.
    public func runUntilIdle() async throws(LoopError) {
        var last: UInt64?
        var quietTurns = 0
        while true {
            let probe = try await nextTurnProbe()
            let quiet = !probe.busy && probe.ioCallbacksRun == last
            last = probe.ioCallbacksRun
            quietTurns = quiet ? quietTurns + 1 : 0
            if quietTurns == (probe.hasIOHandles ? 2 : 1) { return }
        }
    }

    /// Runs `work` on the loop's thread and returns its value.
    private func onLoop<T: Sendable>(_ work: @escaping @Sendable () -> T) async throws(LoopError) -> T {
        do {
            return try await loop.invoke(work)
        } catch let error as LoopError {
            throw error
        } catch {
            preconditionFailure("UVLoop internal error: a non-throwing invoke threw \(error)")
        }
    }

    /// Looks at the loop in its next turn, after that turn's poll for I/O.
    private func nextTurnProbe() async throws(LoopError) -> (ioCallbacksRun: UInt64, busy: Bool, hasIOHandles: Bool) {
        let loop = loop
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<(UInt64, Bool, Bool), LoopError>, Never>) in
            do throws(LoopError) {
                try loop.postNextIteration { continuation.resume(returning: .success(loop.settlingProbe)) }
            } catch {
                continuation.resume(returning: .failure(error))
            }
        }
        return try result.get()
    }
}
