extension Loop {
    /// Runs `work` soon on the loop's thread; never inline, even when called on the loop's thread.
    ///
    /// Callable from any thread. Work posted by one thread runs in posting order (see "Ordering"
    /// in ``Loop``). A post wakes the loop only when it may be asleep: posts that arrive while it
    /// is awake need no wake-up.
    /// - Parameter work: the closure to run; released on the loop's thread after it has run.
    /// - Throws: ``LoopError/shutDown`` (or ``LoopError/detached``) once the loop has begun
    ///   shutting down: the work was not queued and will not run.
    @inline(__always)
    public func post(_ work: consuming @escaping @Sendable () -> Void) throws(LoopError) {
        try enqueue(.run(consume work))
    }

    /// How long the loop keeps polling without blocking, after a drain that ran work, before it
    /// sleeps in the kernel. Zero (the default) never spins. Set it with ``setBusyPoll(_:)``.
    /// Callable from any thread.
    public var busyPoll: Duration {
        .nanoseconds(Int64(clamping: queue.busyPollNanoseconds.load(ordering: .relaxed)))
    }

    /// How long a blocking `invoke` polls for its result before it sleeps: the busy-poll window,
    /// except on a manual-clock loop, which ignores it.
    private var invokeSpinNanoseconds: UInt64 {
        clockSource == .manual ? 0 : queue.busyPollNanoseconds.load(ordering: .relaxed)
    }

    /// The longest window ``Loop/setBusyPoll(_:)`` accepts: one second.
    public static let maximumBusyPoll = Duration.seconds(1)

    /// Sets ``busyPoll``: after a drain that ran work, the loop keeps polling without blocking for
    /// up to `window` before it sleeps in the kernel.
    ///
    /// Ping-pong traffic, such as a task on another executor awaiting a loop actor and coming
    /// back, then finds the loop awake instead of paying for a kernel wake-up on every trip, at the
    /// cost of CPU while the loop polls (each poll is one non-blocking `epoll_wait`). An idle loop
    /// still sleeps: polling only follows work. A thread blocked in a synchronous ``invoke(_:)-63lio``
    /// on this loop polls for its result for up to the same window before it sleeps, so a round
    /// trip that finds both sides polling makes no system call. Ignored on a loop with a manual
    /// clock. Callable from any thread; the loop's thread uses the new value from its next drain on.
    /// - Parameter window: how long to keep polling; `.zero` turns busy polling off.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for a negative window, or one longer than
    ///   ``Loop/maximumBusyPoll`` (a loop that polls for that long after every drain burns a core).
    public func setBusyPoll(_ window: Duration) throws(LoopError) {
        guard window >= .zero else {
            throw LoopError.invalidArgument("busy-poll window must not be negative (got \(window)); use .zero to turn it off")
        }
        guard window <= Self.maximumBusyPoll else {
            throw LoopError.invalidArgument(
                "busy-poll window \(window) is longer than the maximum, \(Self.maximumBusyPoll); windows of a few microseconds to a few milliseconds catch ping-pong traffic")
        }
        queue.busyPollNanoseconds.store(UInt64(clamping: window.saturatingNanoseconds), ordering: .relaxed)
    }

    /// Queues `work` to run on the next loop iteration, after the loop has polled for I/O.
    ///
    /// Callable from any thread. From the loop's thread, work queued while the current
    /// next-iteration snapshot runs waits for the following turn; from another thread it travels
    /// with that thread's posts (keeping their order) and joins the next-iteration queue when the
    /// loop drains them. While next-iteration work waits, the loop does not block in poll.
    /// - Parameter work: the closure to run; released on the loop's thread after it has run.
    /// - Throws: like ``post(_:)``.
    public func postNextIteration(_ work: consuming @escaping @Sendable () -> Void) throws(LoopError) {
        if isOnLoopThread {
            try lifecycle.admitWork()
            var job = Job.run(consume work)
            confined.withValue { $0.appendNextIteration(Job.take(&job)) }
        } else {
            try enqueue(.nextIteration(consume work))
        }
    }

    /// Queues `job`: from another thread through the post queue (one lock, and a wake-up only if
    /// the loop may be asleep); from the loop's own thread into the loop-confined queue, with no
    /// lock at all.
    /// The job is moved, never copied, into the queue: a copy would retain the closure's context
    /// and release it again, two atomic operations per post.
    @inline(__always)
    func enqueue(_ job: consuming Job) throws(LoopError) {
        if isOnLoopThread {
            try lifecycle.admitWork()
            confined.withValue { $0.appendOwn(taking: &job) }
        } else {
            try queue.append(taking: &job, waking: wake)
        }
    }

    /// Runs `work` on the loop's thread and returns its value (or rethrows its error).
    ///
    /// On the loop's thread it runs inline, at once, so it never deadlocks; that includes work
    /// a shutdown or detach still runs, and only a loop that has finished shutting down refuses
    /// it. From another thread it is posted (ordered with that thread's other posts) and the
    /// calling thread blocks until it has run.
    ///
    /// Blocking is what makes it a cycle hazard across loops: if the thread of loop A waited in
    /// `B.invoke` while the thread of loop B waits in `A.invoke`, neither would run again (the
    /// same holds for longer cycles). The invoke that would close such a cycle throws
    /// ``LoopError/wouldDeadlock(operation:)`` instead, and its work does not run. From a loop's
    /// thread, reach another loop with ``post(_:)`` or the `async` ``invoke(_:)-41pf``, which
    /// suspends instead of blocking the caller's loop.
    /// - Parameter work: the closure to run on the loop's thread.
    /// - Returns: what `work` returned.
    /// - Throws: what `work` threw; ``LoopError/shutDown`` (or ``LoopError/detached``) if the
    ///   loop no longer accepts work, ``LoopError/wouldDeadlock(operation:)`` if waiting would
    ///   close a cycle of blocking invokes; in both cases `work` did not run.
    public func invoke<T: Sendable>(_ work: @escaping @Sendable () throws -> T) throws -> T {
        if isOnLoopThread {
            try lifecycle.admitInline()
            return try work()
        }
        let caller = try beginBlockingWait("invoke")
        defer { BlockingInvokes.end(caller: caller) }
        return try ThreadHandoff.invokeThrowing(work, spinningFor: invokeSpinNanoseconds) { job throws(LoopError) in
            try enqueue(.run(job))
        }
    }

    /// Runs `work`, which cannot throw, on the loop's thread and returns its value; the only error
    /// is the loop's own.
    ///
    /// Inline on the loop's thread, otherwise posted and waited for, like the throwing
    /// ``invoke(_:)-63lio``.
    /// - Parameter work: the closure to run on the loop's thread.
    /// - Returns: what `work` returned.
    /// - Throws: ``LoopError/shutDown`` (or ``LoopError/detached``) if the loop no longer accepts
    ///   work, ``LoopError/wouldDeadlock(operation:)`` if waiting would close a cycle of blocking
    ///   invokes; `work` did not run.
    public func invoke<T: Sendable>(_ work: @escaping @Sendable () -> T) throws(LoopError) -> T {
        if isOnLoopThread {
            try lifecycle.admitInline()
            return work()
        }
        let caller = try beginBlockingWait("invoke")
        defer { BlockingInvokes.end(caller: caller) }
        return try ThreadHandoff.invoke(work, spinningFor: invokeSpinNanoseconds) { job throws(LoopError) in
            try enqueue(.run(job))
        }
    }

    /// A synchronous invoke from another thread whose work reaches the loop by a channel of the
    /// caller's: `send` queues work that calls `deliver` exactly once, on the loop's thread, with
    /// the result. For the C API, whose calls from one thread stay in order with that thread's
    /// posts (which travel through an inbox). The same cycle check as `invoke`; the caller runs
    /// the work inline itself when it is on the loop's thread.
    package func invokeFromAnotherThread<T: Sendable>(
        _ operation: String,
        sending send: (_ deliver: @escaping @Sendable (T) -> Void) throws(LoopError) -> Void
    ) throws(LoopError) -> T {
        let caller = try beginBlockingWait(operation)
        defer { BlockingInvokes.end(caller: caller) }
        return try ThreadHandoff.wait(send)
    }

    /// Records that the calling thread blocks until this loop's thread has run its work; returns
    /// the caller's thread number for `BlockingInvokes.end`.
    private func beginBlockingWait(_ operation: String) throws(LoopError) -> UInt {
        let caller = threadNumbers.current
        try BlockingInvokes.begin(caller: caller, waitingFor: thread.raw, operation: operation)
        return caller
    }

    /// Runs `work` on the loop's thread and returns its value, suspending (not blocking) the caller.
    ///
    /// Inline when already on the loop's thread. It starts on the caller's executor
    /// (`nonisolated(nonsending)`), so from an actor on this loop it runs inline too, with no hop.
    /// From elsewhere `work` is posted, ordered with the posts of the calling thread.
    /// - Parameter work: the closure to run on the loop's thread.
    /// - Returns: what `work` returned.
    /// - Throws: what `work` threw; ``LoopError/shutDown`` (or ``LoopError/detached``) if the
    ///   loop no longer accepts work, in which case `work` did not run.
    public nonisolated(nonsending) func invoke<T: Sendable>(
        _ work: @escaping @Sendable () throws -> T
    ) async throws -> T {
        preconditionSteppedWhileAwaiting("Loop.invoke(_:)")
        if isOnLoopThread {
            try lifecycle.admitInline()
            return try work()
        }
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, any Error>, Never>) in
            do {
                try enqueue(.run { [self] in
                    let result = Result { try work() }
                    SanitizerHandoff.release(self)
                    continuation.resume(returning: result)
                })
            } catch {
                continuation.resume(returning: .failure(error))
            }
        }
        // What `work` wrote on the loop's thread (an object it made and returned) is the task's now.
        SanitizerHandoff.acquire(self)
        return try result.get()
    }
}

extension Loop {
    /// Runs `work` on the loop's thread: at once when called there, otherwise posted (in order
    /// with the calling thread's posts). Returns the loop's refusal instead when it no longer
    /// accepts work (`work` does not run).
    func onLoopThread(_ work: @escaping @Sendable () -> Void) -> LoopError? {
        if isOnLoopThread {
            do throws(LoopError) {
                try lifecycle.admitInline()
            } catch {
                return error
            }
            work()
            return nil
        }
        do {
            try post(work)
            return nil
        } catch {
            return error
        }
    }

    /// Suspends the calling task until the loop's thread resumes it: `start` runs there with the
    /// continuation, and `cancel` runs there after the task is cancelled (it must resume the
    /// continuation, with ``LoopError/cancelled``, unless `start` or an event has already). A loop
    /// that refuses the work makes the call throw its refusal.
    func suspendOnLoopThread<Value: Sendable>(
        caller: StaticString = #function,
        _ start: @escaping @Sendable (StreamWaiter, LoopContinuation<Value>) -> Void,
        cancel: @escaping @Sendable (StreamWaiter) -> Void
    ) async throws(LoopError) -> Value {
        preconditionSteppedWhileAwaiting("\(caller)")
        let waiter = StreamWaiter()
        defer { LoopContinuation<Value>.acquire(waiter) }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (checked: CheckedContinuation<Result<Value, LoopError>, Never>) in
                let continuation = LoopContinuation(continuation: checked, waiter: waiter)
                if let refusal = onLoopThread({ start(waiter, continuation) }) {
                    continuation.resume(throwing: refusal)
                }
            }
        } onCancel: {
            waiter.markCancelled()
            _ = onLoopThread { cancel(waiter) }
        }
        return try result.get()
    }
}
