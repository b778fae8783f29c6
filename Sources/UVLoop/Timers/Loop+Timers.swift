extension Loop {
    /// Runs `work` on the loop's thread once `delay` has passed on the loop's clock.
    ///
    /// Callable from any thread; returns a handle to cancel it, fire it early or ask whether it is
    /// pending. Due timers fire in (deadline, schedule order). A negative delay counts as zero; a
    /// delay too large to represent is clamped to the end of time. A timer scheduled with zero delay
    /// from inside a timer callback fires on the next turn, never within the current one.
    ///
    /// Resolution: deadlines are kept in nanoseconds, and the loop sleeps until the earliest one
    /// on the monotonic clock to the nanosecond, so a timer never fires before its deadline and,
    /// on an idle loop, fires as soon as the kernel wakes the loop's thread (typically tens of
    /// microseconds later).
    /// Under the manual clock, timers fire exactly at their deadlines as the test advances time.
    ///
    /// - Parameters:
    ///   - delay: how long to wait, on the loop's clock, from this call (from another thread and
    ///     a manual clock: from when the loop receives the timer).
    ///   - work: the closure to run; released on the loop's thread once the timer has run or been
    ///     cancelled.
    /// - Returns: the timer's handle; dropping it does not cancel the timer.
    /// - Throws: ``LoopError/shutDown`` (or ``LoopError/detached``) once the loop has begun
    ///   shutting down; `work` will not run.
    @discardableResult
    public func schedule(
        after delay: Duration, _ work: @escaping @Sendable () -> Void
    ) throws(LoopError) -> LoopTimer {
        try schedule(after: delay, repetition: .none, work: .closure(work))
    }

    /// Runs `work` on the loop's thread at `deadline` on the loop's clock (at once if it has passed).
    ///
    /// Callable from any thread; otherwise like ``schedule(after:_:)``.
    /// - Parameters:
    ///   - deadline: when to run, on this loop's clock (see ``now``).
    ///   - work: the closure to run.
    /// - Returns: the timer's handle; dropping it does not cancel the timer.
    /// - Throws: ``LoopError/shutDown`` (or ``LoopError/detached``) once the loop has begun
    ///   shutting down; `work` will not run.
    @discardableResult
    public func schedule(
        at deadline: LoopInstant, _ work: @escaping @Sendable () -> Void
    ) throws(LoopError) -> LoopTimer {
        let timer = makeTimer()
        try insert(timer, deadline: .absolute(deadline.nanoseconds), repetition: .none, work: .closure(work))
        return timer
    }

    /// Runs `work` on the loop's thread every `interval`, the first time after `delay`
    /// (default: one interval), until the returned timer is cancelled or fired.
    ///
    /// Callable from any thread. The callback may cancel its own timer.
    /// - Parameters:
    ///   - interval: the time between two runs; at least 1 nanosecond.
    ///   - delay: the time before the first run; `nil` for one `interval`.
    ///   - policy: ``LoopTimer/RepeatPolicy/fixedRate`` keeps runs on a grid of `interval`;
    ///     ``LoopTimer/RepeatPolicy/fixedDelay`` waits `interval` after each callback returns.
    ///   - work: the closure to run each time.
    /// - Returns: the timer's handle; dropping it does not cancel the timer.
    /// - Throws: ``LoopError/invalidArgument(_:)`` when `interval` is shorter than 1 nanosecond;
    ///   ``LoopError/shutDown`` (or ``LoopError/detached``) once the loop has begun shutting down.
    @discardableResult
    public func scheduleRepeating(
        every interval: Duration, after delay: Duration? = nil, policy: LoopTimer.RepeatPolicy = .fixedRate,
        _ work: @escaping @Sendable () -> Void
    ) throws(LoopError) -> LoopTimer {
        let repetition = try Self.repetition(every: interval, policy: policy)
        return try schedule(after: delay ?? interval, repetition: repetition, work: .closure(work))
    }

    /// Runs `work` on the loop's thread every `interval`, handing it the timer's own handle, so that
    /// the callback can cancel its timer (or ask whether it is still pending) without storing the
    /// handle somewhere first.
    ///
    /// Otherwise the same as ``scheduleRepeating(every:after:policy:_:)-(_,_,_,()->Void)``. The
    /// handle the callback gets is the one this call returns.
    ///
    /// ```swift
    /// let countdown = LoopBound(3, loop: loop)
    /// try loop.scheduleRepeating(every: .seconds(1)) { timer in
    ///     countdown.value -= 1
    ///     if countdown.value == 0 { timer.cancel() }
    /// }
    /// ```
    /// - Parameters:
    ///   - interval: the time between two runs; at least 1 nanosecond.
    ///   - delay: the time before the first run; `nil` for one `interval`.
    ///   - policy: how the runs are spaced; see ``LoopTimer/RepeatPolicy``.
    ///   - work: the closure to run each time, given the timer's handle.
    /// - Returns: the timer's handle; dropping it does not cancel the timer.
    /// - Throws: like ``scheduleRepeating(every:after:policy:_:)-(_,_,_,()->Void)``.
    @discardableResult
    public func scheduleRepeating(
        every interval: Duration, after delay: Duration? = nil, policy: LoopTimer.RepeatPolicy = .fixedRate,
        _ work: @escaping @Sendable (LoopTimer) -> Void
    ) throws(LoopError) -> LoopTimer {
        let repetition = try Self.repetition(every: interval, policy: policy)
        let timer = makeTimer()
        // The closure makes the handle when it runs, from a weak reference: holding the handle
        // (which holds the loop) would keep the loop alive as long as the timer repeats.
        let id = timer.id
        try insert(timer, after: delay ?? interval, repetition: repetition, work: .closure { [weak self] in
            guard let self else { return }
            work(LoopTimer(loop: self, id: id))
        })
        return timer
    }

    /// Suspends the calling task for `duration` on the loop's clock.
    ///
    /// Cancelling the task cancels the timer at once and throws `CancellationError`; a loop that
    /// shuts down first throws ``LoopError/shutDown``. It runs on the caller's actor (`isolation`):
    /// from an actor on this loop the timer is scheduled at once, on the loop's thread, without a
    /// hop. The task resumes on its own executor.
    /// - Parameters:
    ///   - duration: how long to sleep, on the loop's clock (under a manual clock, until a test
    ///     advances it that far).
    ///   - isolation: the caller's actor; leave the default.
    /// - Throws: `CancellationError` when the task is cancelled; ``LoopError/shutDown`` (or
    ///   ``LoopError/detached``) when the loop no longer accepts work or shuts down first.
    public func sleep(for duration: Duration, isolation: isolated (any Actor)? = #isolation) async throws {
        try await sleep(deadline: .after(duration.delayNanoseconds), isolation: isolation)
    }

    /// Suspends the calling task until `deadline` on the loop's clock (not at all if it has
    /// passed, other than to check for cancellation).
    ///
    /// Otherwise like ``sleep(for:isolation:)``: cancellation, shutdown and the actor it runs on.
    /// ``LoopClock/sleep(until:tolerance:)`` calls it.
    /// - Parameters:
    ///   - deadline: when to resume, on this loop's clock (see ``now``).
    ///   - isolation: the caller's actor; leave the default.
    /// - Throws: `CancellationError` when the task is cancelled; ``LoopError/shutDown`` (or
    ///   ``LoopError/detached``) when the loop no longer accepts work or shuts down first.
    public func sleep(until deadline: LoopInstant, isolation: isolated (any Actor)? = #isolation) async throws {
        try await sleep(deadline: .absolute(deadline.nanoseconds), isolation: isolation)
    }

    private func sleep(deadline: Deadline, isolation: isolated (any Actor)?) async throws {
        preconditionSteppedWhileAwaiting("Loop.sleep")
        try Task.checkCancellation()
        let waiter = SleepWaiter(timer: makeTimer())
        try await withTaskCancellationHandler {
            // Capturing `isolation` keeps this closure on the caller's actor, so that from an
            // actor on this loop the timer is scheduled right here, on the loop's thread.
            _ = isolation
            return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Arm before scheduling, so the timer can only fire once the waiter knows it.
                if !waiter.arm(continuation) {
                    abandon(waiter.timer)
                    continuation.resume(throwing: CancellationError())
                    return
                }
                do {
                    try insert(waiter.timer, deadline: deadline, repetition: .none, work: .sleeper(waiter))
                } catch {
                    waiter.resume(with: .failure(error))
                }
            }
        } onCancel: {
            waiter.cancel()
        }
    }

    /// Schedules a timer from another thread through a channel of the caller's: the handle is
    /// made (and the deadline taken on the system clock) now, and `send` queues the closure that
    /// puts the timer on the schedule when it runs on the loop's thread. For the C API, whose
    /// calls from one thread stay in order with that thread's posts. If `send` throws, the timer
    /// is given up (not pending) and the error rethrown; if the loop no longer accepts work when
    /// the closure runs, the timer is given up then, as shutdown would have cancelled it.
    package func scheduleFromAnotherThread(
        after delay: Duration, every interval: Duration?, work: @escaping @Sendable () -> Void,
        sending send: (_ schedule: @escaping @Sendable () -> Void) throws(LoopError) -> Void
    ) throws(LoopError) -> LoopTimer {
        var repetition = TimerRepetition.none
        if let interval { repetition = try Self.repetition(every: interval, policy: .fixedRate) }
        let timer = LoopTimer(loop: self, id: timerSlots.allocate())
        let deadline = resolvedAtCall(.after(delay.delayNanoseconds))
        do {
            try send { [self, deadline, repetition] in
                try? self.insert(timer, deadline: deadline, repetition: repetition, work: .closure(work))
            }
        } catch {
            abandon(timer)
            throw error
        }
        return timer
    }

    /// Schedules a new timer; on the loop's thread without a detour through `makeTimer`.
    fileprivate func schedule(
        after delay: Duration, repetition: TimerRepetition, work: TimerWork
    ) throws(LoopError) -> LoopTimer {
        let nanoseconds = delay.delayNanoseconds
        guard isOnLoopThread else {
            let timer = LoopTimer(loop: self, id: timerSlots.allocate())
            try insertFromOtherThread(timer, deadline: .after(nanoseconds), repetition: repetition, work: work)
            return timer
        }
        try lifecycle.admitWork()
        let id = confined.withValue { $0.scheduleNew(after: nanoseconds, repetition: repetition, work: work) }
        return LoopTimer(loop: self, id: id)
    }

    /// A pending timer that is not scheduled yet: `insert` schedules it, `abandon` gives it up.
    func makeTimer() -> LoopTimer {
        LoopTimer(loop: self, id: isOnLoopThread ? engine.timers.allocate() : timerSlots.allocate())
    }

    /// Schedules a timer from `makeTimer()` to fire `delay` from now.
    func insert(_ timer: LoopTimer, after delay: Duration, repetition: TimerRepetition, work: TimerWork) throws(LoopError) {
        let nanoseconds = delay.delayNanoseconds
        try insert(timer, deadline: .after(nanoseconds), repetition: repetition, work: work)
    }

    /// When a timer is due: at an instant, or after a delay from "now".
    enum Deadline: Sendable {
        case absolute(UInt64)
        case after(UInt64)

        func resolved(now: UInt64) -> UInt64 {
            switch self {
            case .absolute(let deadline): return deadline
            case .after(let delay): return now.addingClamped(delay)
            }
        }
    }

    /// Schedules a timer from `makeTimer()`: on the loop's thread at once, from another thread
    /// through a post. When the loop no longer accepts work the timer is abandoned (no longer
    /// pending) and the error thrown.
    private func insert(
        _ timer: LoopTimer, deadline: Deadline, repetition: TimerRepetition, work: TimerWork
    ) throws(LoopError) {
        guard isOnLoopThread else {
            try insertFromOtherThread(timer, deadline: deadline, repetition: repetition, work: work)
            return
        }
        guard lifecycle.acceptsWork else {
            abandon(timer)
            throw lifecycle.refusal
        }
        let now = engine.now
        engine.schedule(timer.id, deadline: deadline.resolved(now: now), now: now, repetition: repetition, work: work)
    }

    /// A deadline given on another thread: a delay counts from the call on the system clock, and
    /// from when the loop receives it on a manual clock (which only the loop's thread may read).
    private func resolvedAtCall(_ deadline: Deadline) -> Deadline {
        guard case .after = deadline, clockSource == .system else { return deadline }
        return .absolute(deadline.resolved(now: monotonicNanoseconds()))
    }

    /// A repeating timer's repetition; an interval under 1 ns is refused.
    private static func repetition(
        every interval: Duration, policy: LoopTimer.RepeatPolicy
    ) throws(LoopError) -> TimerRepetition {
        let nanoseconds = interval.saturatingNanoseconds
        guard nanoseconds > 0 else {
            throw LoopError.invalidArgument("a repeating timer's interval must be at least 1 nanosecond (got \(interval))")
        }
        return TimerRepetition(interval: UInt64(nanoseconds), policy: policy)
    }

    /// Schedules a timer from `makeTimer()` through a post; see `resolvedAtCall` for the deadline.
    private func insertFromOtherThread(
        _ timer: LoopTimer, deadline: Deadline, repetition: TimerRepetition, work: TimerWork
    ) throws(LoopError) {
        let deadline = resolvedAtCall(deadline)
        do {
            try enqueue(.run { [confined, deadline, id = timer.id] in
                let engine = confined.value
                let now = engine.now
                engine.schedule(id, deadline: deadline.resolved(now: now), now: now, repetition: repetition, work: work)
            })
        } catch {
            abandon(timer)
            throw error
        }
    }

    /// Gives up a timer from `makeTimer()` that will not be scheduled: it is no longer pending and
    /// its slot is free again.
    func abandon(_ timer: LoopTimer) {
        _ = timerSlots.finish(timer.id, as: TimerSlots.cancelled)
        if isOnLoopThread {
            engine.timers.abandon(timer.id)
        } else {
            timerSlots.free(TimerSlots.slot(timer.id))
        }
    }

    func discard(_ timer: LoopTimer) {
        if isOnLoopThread {
            confined.withValue { $0.discard(timer.id, current: true) }
        } else {
            // Drop the closure on the loop's thread, never on the cancelling one. If the loop no
            // longer accepts work, shutdown has already released every pending timer's closure.
            try? enqueue(.run { [confined, id = timer.id] in confined.value.discard(id, current: false) })
        }
    }

    /// Moves a pending timer: on the loop's thread at once, from another thread through a post
    /// (a delay then counts from the call on the system clock, as for `schedule`).
    func reschedule(_ timer: LoopTimer, to deadline: Deadline) -> Bool {
        guard isOnLoopThread else {
            guard timer.isPending else { return false }
            let deadline = resolvedAtCall(deadline)
            do {
                try enqueue(.run { [confined, deadline, id = timer.id] in
                    let engine = confined.value
                    _ = engine.reschedule(id, deadline: deadline.resolved(now: engine.now))
                })
            } catch {
                // The loop no longer accepts work: shutdown cancels every pending timer.
                return false
            }
            return true
        }
        return engine.reschedule(timer.id, deadline: deadline.resolved(now: engine.now))
    }

    func fireNow(_ timer: LoopTimer) -> Bool {
        engine.fireNow(timer)
    }
}
