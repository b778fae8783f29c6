extension IsolatedLoop {
    /// Watches `path` for changes the kernel reports, calling `handler` on the loop's thread; see
    /// ``Loop/watchFile(_:keepsOwnerLoopAlive:handler:)``.
    /// - Parameters:
    ///   - path: a file or directory that exists.
    ///   - keepsOwnerLoopAlive: on an attached loop, whether the open watch keeps its owner's
    ///     loop running.
    ///   - handler: gets each change, or the error that ended the watch (once); it may capture
    ///     loop-thread state.
    /// - Returns: the open watch.
    /// - Throws: like ``Loop/watchFile(_:keepsOwnerLoopAlive:handler:)``.
    @discardableResult
    @available(*, noasync, message: "use the loop's own verbs, with Sendable closures, from async code")
    public func watchFile(
        _ path: String, keepsOwnerLoopAlive: Bool = false,
        handler: @escaping (FileWatch, Result<FileChange, LoopError>) -> Void
    ) throws(LoopError) -> FileWatch {
        loop.preconditionOnLoopThread("IsolatedLoop.watchFile(_:keepsOwnerLoopAlive:handler:)")
        let box = LoopConfined(handler)
        return try loop.watchFile(path, keepsOwnerLoopAlive: keepsOwnerLoopAlive) { watch, result in
            box.value(watch, result)
        }
    }

    /// Polls `path` with `stat` every `interval`, calling `handler` on the loop's thread when the
    /// readings differ; see ``Loop/pollFile(_:every:keepsOwnerLoopAlive:handler:)``.
    /// - Parameters:
    ///   - path: the path, which need not exist yet.
    ///   - interval: how often to look; 1 ms or more.
    ///   - keepsOwnerLoopAlive: on an attached loop, whether the open watch keeps its owner's
    ///     loop running.
    ///   - handler: gets each change, or the error that ended the watch (once); it may capture
    ///     loop-thread state.
    /// - Returns: the open watch.
    /// - Throws: like ``Loop/pollFile(_:every:keepsOwnerLoopAlive:handler:)``.
    @discardableResult
    @available(*, noasync, message: "use the loop's own verbs, with Sendable closures, from async code")
    public func pollFile(
        _ path: String, every interval: Duration, keepsOwnerLoopAlive: Bool = false,
        handler: @escaping (FileWatch, Result<FileStatusChange, LoopError>) -> Void
    ) throws(LoopError) -> FileWatch {
        loop.preconditionOnLoopThread("IsolatedLoop.pollFile(_:every:keepsOwnerLoopAlive:handler:)")
        let box = LoopConfined(handler)
        return try loop.pollFile(path, every: interval, keepsOwnerLoopAlive: keepsOwnerLoopAlive) { watch, result in
            box.value(watch, result)
        }
    }
}
