extension Loop {
    /// Watches `signal`: each delivery to the process calls `handler` on the loop's thread.
    ///
    /// ```swift
    /// try loop.watchSignal(.terminate, oneShot: true) { _ in
    ///     loop.shutdown()     // finish what is queued, close every handle, end run()
    /// }
    /// ```
    ///
    /// Watching replaces the signal's default action for the whole process until the last watch
    /// of it ends; see ``SignalWatch`` for that and for the delivery rules. Callable from any
    /// thread: from another thread it waits until the loop's thread has started the watch, so
    /// that a signal sent after this returns is delivered.
    ///
    /// - Parameters:
    ///   - signal: the signal to watch; see ``Signal`` for the ones that cannot be watched.
    ///   - oneShot: `true` to end the watch at its first delivery. libuv then lets the kernel
    ///     restore the default action as it delivers that signal (unless another watch of the
    ///     signal, not one-shot, is open in the process): a second `SIGINT` sent while the first
    ///     one's clean-up runs ends the process, as users of a command-line tool expect.
    ///   - keepsOwnerLoopAlive: on an attached loop, whether the open watch keeps its owner's
    ///     `uv_run(UV_RUN_DEFAULT)` from returning. `false` by default, like UVLoop's other
    ///     handles there: the owner decides how long its loop runs, and a watch (of `SIGHUP`, say)
    ///     that a component adds must not keep it running after the owner's own work has ended.
    ///     On a loop UVLoop owns, it changes nothing: such a loop runs until ``shutdown()``.
    ///   - handler: called on the loop's thread with the watch, once per delivery, until the
    ///     watch ends. It may cancel the watch.
    /// - Returns: the watch, open; keeping it is needed only to cancel it.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for a signal that cannot be watched;
    ///   ``LoopError/shutDown`` (or ``LoopError/detached``) once the loop no longer accepts work;
    ///   ``LoopError/wouldDeadlock(operation:)`` from another loop's thread that a blocking invoke
    ///   of this loop's would deadlock; ``LoopError/libuv(function:code:)`` if libuv fails.
    @discardableResult
    public func watchSignal(
        _ signal: Signal, oneShot: Bool = false, keepsOwnerLoopAlive: Bool = false,
        handler: @escaping @Sendable (SignalWatch) -> Void
    ) throws(LoopError) -> SignalWatch {
        try signal.checkWatchable()
        let watch = SignalWatch(loop: self, signal: signal, oneShot: oneShot, handler: handler)
        try openHandle { () throws(LoopError) in try watch.start(keepsOwnerLoopAlive: keepsOwnerLoopAlive) }
        return watch
    }

    /// Watches `signal` and returns its deliveries as an `AsyncSequence`.
    ///
    /// ```swift
    /// var dumps = 0
    /// for await _ in try loop.signals(.user1) {
    ///     dumps += 1                  // SIGUSR1: dump statistics
    ///     if dumps == 3 { break }     // leaving the loop cancels the watch
    /// }
    /// ```
    ///
    /// The watch is open when this returns (see ``SignalWatch`` for what watching does to the
    /// process); deliveries before the first `next()` are kept. The sequence ends when the watch
    /// is cancelled (``SignalDeliveries/watch``), when the loop shuts down or is detached, and when
    /// the iterating task is cancelled, which cancels the watch. Ending the iteration (`break`)
    /// or dropping the sequence unused cancels the watch too. Callable from any thread.
    /// - Parameters:
    ///   - signal: the signal to watch; see ``Signal`` for the ones that cannot be watched.
    ///   - keepsOwnerLoopAlive: see ``watchSignal(_:oneShot:keepsOwnerLoopAlive:handler:)``.
    /// - Returns: the deliveries; iterate them once.
    /// - Throws: like ``watchSignal(_:oneShot:keepsOwnerLoopAlive:handler:)``.
    public func signals(_ signal: Signal, keepsOwnerLoopAlive: Bool = false) throws(LoopError) -> SignalDeliveries {
        try signal.checkWatchable()
        let channel = IOEventChannel<Signal>(merge: { kept, _ in kept })
        let watch = SignalWatch(
            loop: self, signal: signal, oneShot: false, handler: { watch in channel.deliver(watch.signal) },
            onEnd: { channel.finish() })
        try openHandle { () throws(LoopError) in try watch.start(keepsOwnerLoopAlive: keepsOwnerLoopAlive) }
        return SignalDeliveries(watch: watch, channel: channel)
    }
}
