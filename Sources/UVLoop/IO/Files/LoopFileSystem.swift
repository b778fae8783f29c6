import Glibc
import Synchronization

extension Loop {
    /// The file system, with operations that run on libuv's thread pool and complete on this
    /// loop: ``LoopFileSystem/status(of:followingSymlinks:)``, and the other operations of
    /// ``LoopFileSystem``.
    public var fileSystem: LoopFileSystem { LoopFileSystem(loop: self) }
}

/// File-system operations that complete on a loop: the system call runs on libuv's thread pool,
/// so the loop's thread never blocks on a disk.
///
/// Each operation has two faces:
/// - a callback face, called on the loop's thread, whose completion runs on the loop's thread
///   with a `Result`; it throws at once only for an invalid argument or a loop that no longer
///   accepts work (the completion does not run then);
/// - an async face, callable from any task, which returns the result or throws it. Cancelling
///   the task withdraws an operation that has not started (the call throws
///   ``LoopError/cancelled``); one already running finishes, and the task gets its result.
///
/// Every failure names the operation and the path
/// (``LoopError/fileSystem(operation:path:code:)``). Operations in flight when the loop shuts
/// down (or is detached) complete with ``LoopError/shutDown`` (``LoopError/detached``) instead of
/// their result, on the loop's last turn or the owner's next one; one already running on a pool
/// thread has still done its work.
///
/// The thread pool is libuv's, shared by every loop of the process (4 threads unless
/// `UV_THREADPOOL_SIZE` says otherwise), so many slow operations at once wait for each other.
public struct LoopFileSystem: Sendable {
    /// The loop whose thread runs completions.
    public let loop: Loop

    /// Reads the status of `path` (`stat`) and calls `completion` with it on the loop's thread.
    /// Loop thread only.
    /// - Parameters:
    ///   - path: the path to look at.
    ///   - followingSymlinks: for a symbolic link, whether to read what it points to (`stat`,
    ///     the default) or the link itself (`lstat`).
    ///   - completion: gets the status, or the error (`UV_ENOENT` for a path that does not exist).
    /// - Throws: ``LoopError/invalidArgument(_:)`` for an empty path or one with a zero byte;
    ///   ``LoopError/shutDown`` (``LoopError/detached``) when the loop no longer accepts work.
    public func status(
        of path: String, followingSymlinks: Bool = true, _ completion: @escaping (Result<FileStatus, LoopError>) -> Void
    ) throws(LoopError) {
        loop.preconditionOnLoopThread("loop.fileSystem.status(of:followingSymlinks:_:)")
        try Self.validate(path, "path")
        try loop.engine.fileSystemRequests.start(
            followingSymlinks ? "stat" : "lstat", path: path, completion: .status(completion)
        ) { $0.startStatus(followingSymlinks: followingSymlinks) }
    }

    /// Reads the status of `path` (`stat`); see ``status(of:followingSymlinks:_:)``. Callable from
    /// any task.
    /// - Parameters:
    ///   - path: the path to look at.
    ///   - followingSymlinks: whether to read what a symbolic link points to (the default) or the
    ///     link itself.
    /// - Returns: the status.
    /// - Throws: like ``status(of:followingSymlinks:_:)``, and ``LoopError/cancelled``.
    public func status(of path: String, followingSymlinks: Bool = true) async throws(LoopError) -> FileStatus {
        try await perform { completion throws(LoopError) in
            try status(of: path, followingSymlinks: followingSymlinks) { completion($0) }
        }
    }
}

extension LoopFileSystem {
    /// Checks that `path` can be handed to the system: not empty, no zero byte. `name` (the
    /// argument, as the message calls it) is made only for the message.
    static func validate(_ path: String, _ name: @autoclosure () -> String) throws(LoopError) {
        guard !path.isEmpty else { throw .invalidArgument("\(name()) must not be empty") }
        guard !containsZeroByte(path) else { throw .invalidArgument("\(name()) must not contain a zero byte (got \(path.debugDescription))") }
    }

    /// Whether `path` has a zero byte: `memchr` over a native string's own bytes, where the
    /// generic `utf8.contains(0)` steps through them one index at a time.
    private static func containsZeroByte(_ path: String) -> Bool {
        path.utf8.withContiguousStorageIfAvailable { bytes in
            guard let start = bytes.baseAddress else { return false }
            return memchr(start, 0, bytes.count) != nil
        } ?? path.utf8.contains(0)
    }

    /// The async face of an operation: runs `start` (its callback face) on the loop's thread and
    /// waits for the completion; a cancelled task withdraws the request if no pool thread has
    /// started it.
    func perform<Value: Sendable>(
        caller: StaticString = #function,
        _ start: @escaping @Sendable (@escaping (Result<Value, LoopError>) -> Void) throws(LoopError) -> Void
    ) async throws(LoopError) -> Value {
        try await loop.performFileSystemRequest(caller: caller, start)
    }
}

extension Loop {
    /// See `LoopFileSystem.perform`.
    func performFileSystemRequest<Value: Sendable>(
        caller: StaticString = #function,
        _ start: @escaping @Sendable (@escaping (Result<Value, LoopError>) -> Void) throws(LoopError) -> Void
    ) async throws(LoopError) -> Value {
        let started = Atomic<UInt64>(0)
        return try await suspendOnLoopThread(caller: caller) { (waiter, continuation: LoopContinuation<Value>) in
            let requests = self.engine.fileSystemRequests
            let before = requests.lastTicket
            do throws(LoopError) {
                try start { result in continuation.resume(with: result) }
            } catch {
                return continuation.resume(throwing: error)
            }
            // The operation's first request, if it started one (a request's completion never
            // runs inside its start).
            guard requests.lastTicket != before else { return }
            let ticket = before + 1
            if waiter.isCancelled { requests.cancel(ticket: ticket) } else { started.store(ticket, ordering: .relaxed) }
        } cancel: { _ in
            // On the loop's thread, after the start (or before it, and then the start sees the
            // cancellation itself).
            let ticket = started.load(ordering: .relaxed)
            if ticket != 0 { self.engine.fileSystemRequests.cancel(ticket: ticket) }
        }
    }
}
