extension Loop {
    /// Watches `descriptor`, opened by someone else, for readiness: `handler` runs on the loop's
    /// thread whenever it is ready for one of `events`.
    ///
    /// See ``DescriptorWatch`` for what readiness means (it can be spurious: expect `EAGAIN`),
    /// for the non-blocking mode libuv switches the descriptor to, and for who closes it (you,
    /// after the watch has ended; never UVLoop). Callable from any thread: from another thread
    /// it waits until the loop's thread has started the watch.
    ///
    /// - Parameters:
    ///   - descriptor: an open descriptor that the kernel can poll: a socket, pipe, terminal,
    ///     eventfd, timerfd, signalfd or inotify descriptor (not a regular file or a directory).
    ///   - events: what to wait for; an empty set starts the watch paused (see
    ///     ``DescriptorWatch/update(_:)``).
    ///   - keepsOwnerLoopAlive: on an attached loop, whether the watch keeps its owner's
    ///     `uv_run(UV_RUN_DEFAULT)` from returning while it polls. `false` by default, like
    ///     UVLoop's other handles there: the owner decides how long its loop runs. On a loop
    ///     UVLoop owns, it changes nothing: such a loop runs until ``shutdown()``.
    ///   - handler: called on the loop's thread with the watch and the events that are ready
    ///     (among those asked for), or with the error that ended the watch
    ///     (``LoopError/libuv(function:code:)``: `UV_EBADF` when the kernel reports an error
    ///     condition on the descriptor, such as a pipe whose other end was closed); at most once
    ///     with an error, and never after it.
    /// - Returns: the watch, open.
    /// - Throws: ``LoopError/invalidArgument(_:)`` when `descriptor` is not open, is already
    ///   watched on this loop, or cannot be polled (a regular file); ``LoopError/shutDown`` (or
    ///   ``LoopError/detached``) once the loop no longer accepts work;
    ///   ``LoopError/wouldDeadlock(operation:)`` from another loop's thread that a blocking invoke
    ///   of this loop's would deadlock; ``LoopError/libuv(function:code:)`` if libuv fails.
    @discardableResult
    public func watchDescriptor(
        _ descriptor: Int32, for events: DescriptorEvents, keepsOwnerLoopAlive: Bool = false,
        handler: @escaping @Sendable (DescriptorWatch, Result<DescriptorEvents, LoopError>) -> Void
    ) throws(LoopError) -> DescriptorWatch {
        guard PollHandle.isOpen(descriptor) else { throw DescriptorWatch.notOpen(descriptor) }
        let watch = DescriptorWatch(loop: self, descriptor: descriptor, events: events, handler: handler)
        try openHandle { () throws(LoopError) in try watch.start(keepsOwnerLoopAlive: keepsOwnerLoopAlive) }
        return watch
    }

    /// Watches `descriptor` for readiness and returns the readiness as an `AsyncSequence`.
    ///
    /// ```swift
    /// var total = 0
    /// for try await _ in try loop.readiness(of: socket, for: .readable) {
    ///     var buffer = [UInt8](repeating: 0, count: 512)
    ///     let count = read(socket, &buffer, buffer.count)  // -1 with EAGAIN: spurious
    ///     if count == 0 { break }                           // end of file: the peer closed
    ///     if count > 0 { total += count }
    /// }
    /// ```
    ///
    /// The loop polls the descriptor only while the consumer waits in `next()`: a consumer that
    /// is busy (or never iterates) costs the loop nothing, and readiness is not reported again and
    /// again meanwhile. Each element holds the events ready when the loop last polled (among those
    /// asked for). The sequence ends when the watch is cancelled (``DescriptorReadiness/watch``),
    /// when the loop shuts down or is detached, and when the iterating task is cancelled, which
    /// cancels the watch; it throws the error that ends a watch (see
    /// ``watchDescriptor(_:for:keepsOwnerLoopAlive:handler:)``). Ending the iteration or dropping
    /// the sequence unused cancels the watch too. The descriptor is never closed by UVLoop.
    /// Callable from any thread.
    /// - Parameters:
    ///   - descriptor: an open descriptor that the kernel can poll.
    ///   - events: what to wait for; ``DescriptorWatch/update(_:)`` changes it.
    ///   - keepsOwnerLoopAlive: see ``watchDescriptor(_:for:keepsOwnerLoopAlive:handler:)``.
    /// - Returns: the readiness; iterate it once.
    /// - Throws: like ``watchDescriptor(_:for:keepsOwnerLoopAlive:handler:)``.
    public func readiness(
        of descriptor: Int32, for events: DescriptorEvents, keepsOwnerLoopAlive: Bool = false
    ) throws(LoopError) -> DescriptorReadiness {
        guard PollHandle.isOpen(descriptor) else { throw DescriptorWatch.notOpen(descriptor) }
        let channel = IOEventChannel<DescriptorEvents>(merge: { $0.union($1) })
        let watch = DescriptorWatch(loop: self, descriptor: descriptor, events: events, handler: nil, channel: channel)
        try openHandle { () throws(LoopError) in try watch.start(keepsOwnerLoopAlive: keepsOwnerLoopAlive) }
        return DescriptorReadiness(watch: watch, channel: channel)
    }
}
