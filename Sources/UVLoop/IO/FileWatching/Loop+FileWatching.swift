extension Loop {
    /// Watches `path` for changes the kernel reports (inotify): for a directory, the creation,
    /// deletion, renaming and change of its entries, each with the entry's name; for a file, its
    /// own changes. Callable from any thread; the handler runs on the loop's thread.
    ///
    /// A watched path that is deleted (or renamed away) gets that change, and then the watch
    /// ends: watch the directory to see a file come back. For file systems without
    /// notifications (network mounts), poll instead (``pollFile(_:every:keepsOwnerLoopAlive:handler:)``).
    /// - Parameters:
    ///   - path: a file or directory that exists.
    ///   - keepsOwnerLoopAlive: on an attached loop, whether the open watch keeps the owner's
    ///     `uv_run` running (not by default). Ignored on a loop UVLoop owns.
    ///   - handler: gets each change, or the error that ended the watch (once).
    /// - Returns: the open watch.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for a path that does not exist (the message says
    ///   what to do); ``LoopError/libuv(function:code:)`` naming the path when the kernel refuses
    ///   (no permission, too many watches); ``LoopError/shutDown`` (``LoopError/detached``) when
    ///   the loop no longer accepts work.
    @discardableResult
    public func watchFile(
        _ path: String, keepsOwnerLoopAlive: Bool = false,
        handler: @escaping @Sendable (FileWatch, Result<FileChange, LoopError>) -> Void
    ) throws(LoopError) -> FileWatch {
        let watch = FileWatch(loop: self, path: path)
        try openHandle { () throws(LoopError) in
            _ = try FileEventWatchCore(watch: watch, keepsOwnerLoopAlive: keepsOwnerLoopAlive, handler: handler)
        }
        return watch
    }

    /// The changes to `path` as an `AsyncSequence`; see ``watchFile(_:keepsOwnerLoopAlive:handler:)``.
    /// Callable from any thread. Changes that arrive while the consumer is busy are merged into
    /// one element (the kinds of all, the latest entry's name).
    /// - Parameters:
    ///   - path: a file or directory that exists.
    ///   - keepsOwnerLoopAlive: see ``watchFile(_:keepsOwnerLoopAlive:handler:)``.
    /// - Returns: the changes; iterate them once.
    /// - Throws: like ``watchFile(_:keepsOwnerLoopAlive:handler:)``.
    public func fileChanges(_ path: String, keepsOwnerLoopAlive: Bool = false) throws(LoopError) -> FileChanges {
        let channel = IOEventChannel<FileChange>(merge: FileChange.merged)
        let watch = FileWatch(loop: self, path: path, onEnd: { channel.finish() })
        try openHandle { () throws(LoopError) in
            _ = try FileEventWatchCore(watch: watch, keepsOwnerLoopAlive: keepsOwnerLoopAlive) { _, result in
                switch result {
                case .success(let change): channel.deliver(change)
                case .failure(let error): channel.finish(failing: error)
                }
            }
        }
        return FileChanges(watch: watch, channel: channel)
    }

    /// Polls `path` with `stat` every `interval`, for file systems without notifications.
    /// Callable from any thread; the handler runs on the loop's thread with the two readings
    /// whenever they differ, also when the path appears or disappears (a nil reading).
    /// - Parameters:
    ///   - path: the path, which need not exist yet.
    ///   - interval: how often to look; 1 ms or more.
    ///   - keepsOwnerLoopAlive: see ``watchFile(_:keepsOwnerLoopAlive:handler:)``.
    ///   - handler: gets each change, or the error that ended the watch (once).
    /// - Returns: the open watch.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for an interval under 1 ms;
    ///   ``LoopError/shutDown`` (``LoopError/detached``) when the loop no longer accepts work.
    @discardableResult
    public func pollFile(
        _ path: String, every interval: Duration, keepsOwnerLoopAlive: Bool = false,
        handler: @escaping @Sendable (FileWatch, Result<FileStatusChange, LoopError>) -> Void
    ) throws(LoopError) -> FileWatch {
        let watch = FileWatch(loop: self, path: path)
        try openHandle { () throws(LoopError) in
            _ = try FilePollWatchCore(
                watch: watch, interval: interval, keepsOwnerLoopAlive: keepsOwnerLoopAlive, handler: handler)
        }
        return watch
    }
}

/// The changes to a watched path, as an `AsyncSequence`; see ``Loop/fileChanges(_:keepsOwnerLoopAlive:)``.
/// The sequence is iterated once, by one task.
public struct FileChanges: AsyncSequence, Sendable {
    /// A change, or several merged.
    public typealias Element = FileChange
    /// The error that ended the watch.
    public typealias Failure = LoopError

    /// The watch behind the sequence: ``FileWatch/cancel()`` ends the sequence, from any thread.
    public var watch: FileWatch { owner.watch }

    let owner: WatchOwner<FileWatch>
    let channel: IOEventChannel<FileChange>

    init(watch: FileWatch, channel: IOEventChannel<FileChange>) {
        owner = WatchOwner(watch)
        self.channel = channel
    }

    /// The iterator; dropping it (leaving `for try await`) cancels the watch.
    public func makeAsyncIterator() -> Iterator {
        Iterator(sequence: owner, owner: WatchOwner(owner.watch), channel: channel)
    }

    /// One consumer's view of the changes. Not `Sendable`: one task iterates it.
    public struct Iterator: AsyncIteratorProtocol {
        /// A change, or several merged.
        public typealias Element = FileChange
        /// The error that ended the watch.
        public typealias Failure = LoopError

        /// The sequence's owner: iterating a sequence that was not kept does not cancel the watch.
        let sequence: WatchOwner<FileWatch>
        /// This iteration's owner: dropping the iterator cancels the watch.
        let owner: WatchOwner<FileWatch>
        let channel: IOEventChannel<FileChange>

        /// The next change, or `nil` once the watch has ended.
        /// - Throws: the error that ended the watch, once.
        public mutating func next() async throws(LoopError) -> FileChange? {
            try await next(isolation: nil)
        }

        /// The next change, or `nil` once the watch has ended (cancelled, the path deleted, the
        /// loop shut down or detached, or the task cancelled, which cancels the watch). Waits on
        /// the caller's actor (`isolation`).
        /// - Parameter actor: the caller's actor; leave the default.
        /// - Throws: the error that ended the watch, once.
        public mutating func next(
            isolation actor: isolated (any Actor)? = #isolation
        ) async throws(LoopError) -> FileChange? {
            let watch = owner.watch
            watch.loop.preconditionSteppedWhileAwaiting("FileWatch's changes")
            let result = await channel.next(isolation: actor, willWait: {}, onCancel: { watch.cancel() })
            return try result?.get()
        }
    }
}

@available(*, unavailable)
extension FileChanges.Iterator: Sendable {}
