extension Loop {
    /// A view of this loop for code that runs on the loop's thread: its verbs take closures that
    /// are not `@Sendable`, so they may capture state that lives on the loop's thread (a class
    /// that is not `Sendable`, such as per-connection state kept by a stream handler).
    ///
    /// ```swift
    /// final class Session {                       // not Sendable: lives on the loop's thread
    ///     var idleTicks = 0
    /// }
    /// let session = Session()
    /// try loop.assumeIsolated().scheduleRepeating(every: .seconds(1)) { _ in
    ///     session.idleTicks += 1                  // no "capture of non-Sendable" error
    /// }
    /// ```
    ///
    /// Call it on the loop's thread: in a loop callback (a stream or timer handler, posted work),
    /// or from code that checked ``isOnLoopThread``. Elsewhere it stops the program with a message
    /// naming the misuse. The closures run on the loop's thread, like those of the loop's own
    /// verbs, so what they capture never leaves it.
    ///
    /// Unavailable from async code: a task may resume on another thread after an `await`, and
    /// its state would then be shared with the loop's thread. Async code uses the loop's own
    /// verbs, with `Sendable` closures, or a ``LoopBound`` value.
    /// - Parameters:
    ///   - file: the file reported when the check fails.
    ///   - line: the line reported when the check fails.
    /// - Returns: the view; it is not `Sendable`, so it stays where it was made.
    @available(*, noasync, message: "a task may resume on another thread; use the loop's own verbs, with Sendable closures, or a LoopBound")
    public func assumeIsolated(file: StaticString = #fileID, line: UInt = #line) -> IsolatedLoop {
        preconditionOnLoopThread("Loop.assumeIsolated()", file: file, line: line)
        return IsolatedLoop(loop: self)
    }
}

/// A ``Loop`` seen from its own thread: the loop's verbs for code that runs there, taking
/// closures that are not `@Sendable`. Get one with ``Loop/assumeIsolated(file:line:)``.
///
/// Each verb behaves like the ``Loop`` verb of the same name (the same ordering, the same
/// errors); only its closure may capture loop-thread state. Each checks that it is called on the
/// loop's thread, and stops the program with a message naming the misuse elsewhere. Not
/// `Sendable`: keep it where it was made, or keep ``loop`` instead.
public struct IsolatedLoop {
    /// The loop itself, whose verbs take `Sendable` closures and may be called from any thread.
    public let loop: Loop

    /// Makes `body`, which captures loop-thread state, callable from the loop's `@Sendable`
    /// closures: it is boxed in a `LoopConfined`, which only the loop's thread opens. Checks
    /// that the caller is on the loop's thread (the state `body` captures is that thread's).
    private func confined<Body>(_ operation: String, _ body: Body) -> LoopConfined<Body> {
        loop.preconditionOnLoopThread(operation)
        return LoopConfined(body)
    }

    /// Runs `work` soon on the loop's thread (never inline); see ``Loop/post(_:)``.
    /// - Parameter work: the closure to run; it may capture loop-thread state.
    /// - Throws: like ``Loop/post(_:)``: the loop's refusal once it has begun shutting down.
    @available(*, noasync, message: "use the loop's own verbs, with Sendable closures, from async code")
    public func post(_ work: @escaping () -> Void) throws(LoopError) {
        let box = confined("IsolatedLoop.post(_:)", work)
        try loop.post { box.value() }
    }

    /// Queues `work` for the next loop iteration; see ``Loop/postNextIteration(_:)``.
    /// - Parameter work: the closure to run; it may capture loop-thread state.
    /// - Throws: like ``Loop/postNextIteration(_:)``.
    @available(*, noasync, message: "use the loop's own verbs, with Sendable closures, from async code")
    public func postNextIteration(_ work: @escaping () -> Void) throws(LoopError) {
        let box = confined("IsolatedLoop.postNextIteration(_:)", work)
        try loop.postNextIteration { box.value() }
    }

    /// Runs `work` on the loop's thread once `delay` has passed; see ``Loop/schedule(after:_:)``.
    /// - Parameters:
    ///   - delay: how long to wait, on the loop's clock.
    ///   - work: the closure to run; it may capture loop-thread state.
    /// - Returns: the timer's handle; dropping it does not cancel the timer.
    /// - Throws: like ``Loop/schedule(after:_:)``.
    @discardableResult
    @available(*, noasync, message: "use the loop's own verbs, with Sendable closures, from async code")
    public func schedule(after delay: Duration, _ work: @escaping () -> Void) throws(LoopError) -> LoopTimer {
        let box = confined("IsolatedLoop.schedule(after:_:)", work)
        return try loop.schedule(after: delay) { box.value() }
    }

    /// Runs `work` on the loop's thread at `deadline`; see ``Loop/schedule(at:_:)``.
    /// - Parameters:
    ///   - deadline: when to run, on the loop's clock.
    ///   - work: the closure to run; it may capture loop-thread state.
    /// - Returns: the timer's handle; dropping it does not cancel the timer.
    /// - Throws: like ``Loop/schedule(at:_:)``.
    @discardableResult
    @available(*, noasync, message: "use the loop's own verbs, with Sendable closures, from async code")
    public func schedule(at deadline: LoopInstant, _ work: @escaping () -> Void) throws(LoopError) -> LoopTimer {
        let box = confined("IsolatedLoop.schedule(at:_:)", work)
        return try loop.schedule(at: deadline) { box.value() }
    }

    /// Runs `work` on the loop's thread every `interval`; see
    /// ``Loop/scheduleRepeating(every:after:policy:_:)-(_,_,_,()->Void)``.
    /// - Parameters:
    ///   - interval: the time between two runs; at least 1 nanosecond.
    ///   - delay: the time before the first run; `nil` for one `interval`.
    ///   - policy: how the runs are spaced; see ``LoopTimer/RepeatPolicy``.
    ///   - work: the closure to run each time; it may capture loop-thread state.
    /// - Returns: the timer's handle; dropping it does not cancel the timer.
    /// - Throws: like ``Loop/scheduleRepeating(every:after:policy:_:)-(_,_,_,()->Void)``.
    @discardableResult
    @available(*, noasync, message: "use the loop's own verbs, with Sendable closures, from async code")
    public func scheduleRepeating(
        every interval: Duration, after delay: Duration? = nil, policy: LoopTimer.RepeatPolicy = .fixedRate,
        _ work: @escaping () -> Void
    ) throws(LoopError) -> LoopTimer {
        let box = confined("IsolatedLoop.scheduleRepeating(every:after:policy:_:)", work)
        return try loop.scheduleRepeating(every: interval, after: delay, policy: policy) { () in box.value() }
    }

    /// Runs `work` on the loop's thread every `interval`, handing it the timer's own handle; see
    /// ``Loop/scheduleRepeating(every:after:policy:_:)-(_,_,_,(LoopTimer)->Void)``.
    /// - Parameters:
    ///   - interval: the time between two runs; at least 1 nanosecond.
    ///   - delay: the time before the first run; `nil` for one `interval`.
    ///   - policy: how the runs are spaced; see ``LoopTimer/RepeatPolicy``.
    ///   - work: the closure to run each time, given the timer's handle; it may capture
    ///     loop-thread state.
    /// - Returns: the timer's handle; dropping it does not cancel the timer.
    /// - Throws: like ``Loop/scheduleRepeating(every:after:policy:_:)-(_,_,_,()->Void)``.
    @discardableResult
    @available(*, noasync, message: "use the loop's own verbs, with Sendable closures, from async code")
    public func scheduleRepeating(
        every interval: Duration, after delay: Duration? = nil, policy: LoopTimer.RepeatPolicy = .fixedRate,
        _ work: @escaping (LoopTimer) -> Void
    ) throws(LoopError) -> LoopTimer {
        let box = confined("IsolatedLoop.scheduleRepeating(every:after:policy:_:)", work)
        return try loop.scheduleRepeating(every: interval, after: delay, policy: policy) { (timer: LoopTimer) in
            box.value(timer)
        }
    }

    /// Watches `signal`, calling `handler` on the loop's thread at each delivery; see
    /// ``Loop/watchSignal(_:oneShot:keepsOwnerLoopAlive:handler:)``.
    /// - Parameters:
    ///   - signal: the signal to watch.
    ///   - oneShot: `true` to end the watch at its first delivery.
    ///   - keepsOwnerLoopAlive: on an attached loop, whether the open watch keeps its owner's
    ///     loop running.
    ///   - handler: called with the watch once per delivery; it may capture loop-thread state.
    /// - Returns: the watch, open.
    /// - Throws: like ``Loop/watchSignal(_:oneShot:keepsOwnerLoopAlive:handler:)``.
    @discardableResult
    @available(*, noasync, message: "use the loop's own verbs, with Sendable closures, from async code")
    public func watchSignal(
        _ signal: Signal, oneShot: Bool = false, keepsOwnerLoopAlive: Bool = false,
        handler: @escaping (SignalWatch) -> Void
    ) throws(LoopError) -> SignalWatch {
        let box = confined("IsolatedLoop.watchSignal(_:oneShot:keepsOwnerLoopAlive:handler:)", handler)
        return try loop.watchSignal(signal, oneShot: oneShot, keepsOwnerLoopAlive: keepsOwnerLoopAlive) { watch in
            box.value(watch)
        }
    }

    /// Watches `descriptor` for readiness, calling `handler` on the loop's thread; see
    /// ``Loop/watchDescriptor(_:for:keepsOwnerLoopAlive:handler:)``.
    /// - Parameters:
    ///   - descriptor: an open descriptor that the kernel can poll.
    ///   - events: what to wait for.
    ///   - keepsOwnerLoopAlive: on an attached loop, whether the watch keeps its owner's loop
    ///     running while it polls.
    ///   - handler: called with the watch and the events ready, or the error that ended the
    ///     watch; it may capture loop-thread state.
    /// - Returns: the watch, open.
    /// - Throws: like ``Loop/watchDescriptor(_:for:keepsOwnerLoopAlive:handler:)``.
    @discardableResult
    @available(*, noasync, message: "use the loop's own verbs, with Sendable closures, from async code")
    public func watchDescriptor(
        _ descriptor: Int32, for events: DescriptorEvents, keepsOwnerLoopAlive: Bool = false,
        handler: @escaping (DescriptorWatch, Result<DescriptorEvents, LoopError>) -> Void
    ) throws(LoopError) -> DescriptorWatch {
        let box = confined("IsolatedLoop.watchDescriptor(_:for:keepsOwnerLoopAlive:handler:)", handler)
        return try loop.watchDescriptor(descriptor, for: events, keepsOwnerLoopAlive: keepsOwnerLoopAlive) {
            watch, result in box.value(watch, result)
        }
    }

    /// Starts a chunked loop over `0..<count`; see
    /// ``Loop/startChunkedLoop(count:budget:body:progress:completion:)``.
    /// - Parameters:
    ///   - count: how many times to call `body`; must not be negative.
    ///   - budget: what bounds one chunk; see ``ChunkBudget``.
    ///   - body: called with each index, in order; it may capture loop-thread state.
    ///   - progress: called first with the initial state, then after each chunk.
    ///   - completion: called once, last.
    /// - Returns: the handle that cancels or awaits the chunked loop.
    /// - Throws: like ``Loop/startChunkedLoop(count:budget:body:progress:completion:)``.
    @discardableResult
    @available(*, noasync, message: "use the loop's own verbs, with Sendable closures, from async code")
    public func startChunkedLoop(
        count: Int,
        budget: ChunkBudget = .default,
        body: @escaping (Int) throws -> Void,
        progress: @escaping (ChunkedLoopProgress) -> Void = { _ in },
        completion: @escaping (ChunkedLoopCompletion) -> Void = { _ in }
    ) throws(LoopError) -> ChunkedLoop {
        let operation = "IsolatedLoop.startChunkedLoop(count:budget:body:progress:completion:)"
        let bodyBox = confined(operation, body)
        let progressBox = confined(operation, progress)
        let completionBox = confined(operation, completion)
        return try loop.startChunkedLoop(
            count: count, budget: budget, body: { index in try bodyBox.value(index) },
            progress: { progressBox.value($0) }, completion: { completionBox.value($0) })
    }

    /// Makes `body`, which captures loop-thread state, into a `@Sendable` closure for an API of
    /// this package whose closure runs on the loop's thread (UVOperations' completions). Calling
    /// the result on another thread stops the program with a message naming `operation`.
    package func sendable<Argument>(
        _ operation: String, _ body: @escaping (Argument) -> Void
    ) -> @Sendable (Argument) -> Void {
        let box = confined(operation, body)
        let loop = loop
        return { argument in
            loop.preconditionOnLoopThread(operation)
            box.value(argument)
        }
    }
}

@available(*, unavailable)
extension IsolatedLoop: Sendable {}
