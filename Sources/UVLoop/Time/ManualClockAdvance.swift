/// Advancing a manual clock to a target, one deadline at a time: the one place that says in which
/// order the clock moves and the loop settles. `Loop.advanceTime(to:)`, `LoopThread.advanceTime(to:)`
/// (UVLoopTesting), the C API's `uvloop_advance` and the simulated network all advance through it.
///
/// The order: settle what is ready at the current time; then, for each timer deadline up to the
/// target, set the clock to exactly that deadline and settle, so that every callback sees its
/// own deadline as `now` and what it posts or schedules up to the target runs before time moves
/// further; end with the clock at the target and settle once more.
///
/// "Settle" is the caller's: `runUntilIdle()` on the loop's own thread, or waiting from a task
/// for a loop that runs on a thread of its own. Each ``moveClock(of:)`` reads the earliest
/// deadline and sets the clock to it in one step on the loop's thread, so that a timer scheduled
/// from another thread between two steps is never passed over.
package struct ManualClockAdvance: Sendable {
    private enum Stage: Sendable {
        case settleFirst
        case timers
        case atTarget
        case done
    }

    /// Where the clock ends.
    package let target: LoopInstant
    private var stage = Stage.settleFirst

    /// An advance to `target`; a target in the past leaves the clock where it is.
    package init(to target: LoopInstant) {
        self.target = target
    }

    /// Moves `loop`'s clock for the next step, if any, and says whether the caller must now settle
    /// the loop; `false` once the clock is at the target and the loop has settled there. Loop
    /// thread only.
    package mutating func moveClock(of loop: Loop) -> Bool {
        moveClock(earliestDeadline: { loop.earliestTimerDeadline }, setTime: { loop.setManualTime($0) })
    }

    /// The same step for a clock of the caller's (several loops on one time, a simulated network):
    /// `earliestDeadline` gives the earliest thing due, `setTime` moves the clock (never back).
    package mutating func moveClock(
        earliestDeadline: () -> LoopInstant?, setTime: (LoopInstant) -> Void
    ) -> Bool {
        switch stage {
        case .settleFirst:
            stage = .timers
            return true
        case .timers:
            if let next = earliestDeadline(), next <= target {
                setTime(next)
                return true
            }
            setTime(target)
            stage = .atTarget
            return true
        case .atTarget, .done:
            stage = .done
            return false
        }
    }
}

extension Loop {
    /// Advances this loop's manual clock to `target` on the loop's thread (see
    /// ``ManualClockAdvance``), settling with `settle` (usually `runUntilIdle()`) after each step.
    /// Loop thread only, outside the loop's callbacks.
    package func advanceManualClock<Failure: Error>(
        to target: LoopInstant, settlingWith settle: () throws(Failure) -> Void
    ) throws(Failure) {
        var advance = ManualClockAdvance(to: target)
        while advance.moveClock(of: self) { try settle() }
    }
}
