import UVLoop

extension Loop {
    /// Moves a manual clock forward by `duration` without running anything: for simulating, from
    /// inside a loop callback, work that takes time (for example a chunked loop's body, so that a
    /// time budget runs out deterministically).
    ///
    /// Unlike ``advanceTime(by:)``, which runs the loop and so cannot be called from a callback,
    /// this only moves the clock. Timers that come due fire the next time the loop runs (a chunk
    /// under a time budget ends as soon as it sees one due). Loop thread only, on a loop created
    /// with a manual clock: from another thread, or on a loop with the system clock, it stops the
    /// program with a message naming the misuse.
    /// - Parameter duration: how far to move the clock; not negative.
    /// - Throws: `LoopError.invalidArgument` for a negative duration.
    public func advanceClockWithoutRunning(by duration: Duration) throws(LoopError) {
        preconditionManualClock("Loop.advanceClockWithoutRunning(by:)")
        guard duration >= .zero else {
            throw LoopError.invalidArgument("advanceClockWithoutRunning(by:) needs a non-negative duration (got \(duration))")
        }
        setManualTime(now.advanced(by: duration))
    }
}
