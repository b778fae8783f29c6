/// An open file on a loop, made by ``LoopFileSystem/open(_:_:options:permissions:_:)``: reads and
/// writes at an offset or at the file's position, `fsync`, truncation, status, and close, each
/// run on libuv's thread pool and completed on the loop.
///
/// ## Two faces
/// - The callback face runs on the loop's thread: ``read(into:count:at:_:)`` fills a
///   ``FileBuffer`` you own and reuse, without an allocation per read;
///   ``write(from:at:_:)`` sends what one holds. Completions run on the loop's thread.
/// - The async face is callable from any task: ``read(upTo:at:)`` returns the bytes,
///   ``write(_:at:)`` writes all of them. Cancelling the task withdraws an operation that no pool
///   thread has started (the call throws ``LoopError/cancelled``).
///
/// ## Offsets and the file's position
/// Calls with an offset (`at:`) read or write there and leave the file's position alone
/// (`pread`, `pwrite`); calls without one use the file's position and move it (`read`,
/// `write`), so that successive reads walk through the file. Operations run on the pool's
/// threads in no set order: start a positional read or write once the previous one has
/// completed. In ``OpenOptions/append`` mode every write goes to the end of the file.
///
/// ## Closing
/// A file stays open until `close()`, even when nothing refers to it any more, or until its
/// loop shuts down or is detached, which close every open file. `close()` refuses new
/// operations at once (they throw ``LoopError/fileClosed``) and closes the descriptor once the
/// operations in flight have completed. After the loop's ending, operations throw the loop's
/// ``LoopError/shutDown`` (``LoopError/detached``).
///
/// Every failure names the operation and the file's path
/// (``LoopError/fileSystem(operation:path:code:)``).
public final class LoopFile: Sendable {
    /// The loop whose thread runs this file's completions.
    public let loop: Loop
    /// The path the file was opened with.
    public let path: String
    let box: LoopConfinedObject<LoopFileCore>

    init(core: LoopFileCore, loop: Loop) {
        self.loop = loop
        path = core.path
        box = LoopConfinedObject(core)
    }

    /// The core, after checking that the caller is on the loop's thread.
    func core(_ operation: @autoclosure () -> String) -> LoopFileCore {
        loop.preconditionOnLoopThread(operation())
        return box.value
    }

    /// Closes the file: operations not yet started are refused with ``LoopError/fileClosed``,
    /// and the descriptor closes once the operations in flight have completed. Callable from any
    /// thread; idempotent. Does nothing once the loop has shut down (which closed the file).
    public func close() {
        let box = box
        _ = loop.onLoopThread { box.value.close() }
    }

    /// Closes the file (see `close()`) and waits until its descriptor is closed. Callable
    /// from any task; idempotent. Cancelling the task does not end the wait, which lasts as long
    /// as the operations in flight.
    /// - Throws: ``LoopError/fileSystem(operation:path:code:)`` when the system's `close`
    ///   reports an error (a network file system's late write error, say); the descriptor is
    ///   closed all the same. The loop's ``LoopError/shutDown`` (``LoopError/detached``) once it
    ///   no longer runs work (it closed the file).
    public func close() async throws(LoopError) {
        let box = box
        let error: LoopError? = try await loop.suspendOnLoopThread { (_, continuation: LoopContinuation<LoopError?>) in
            box.value.close { continuation.resume(returning: $0) }
        } cancel: { _ in }
        if let error { throw error }
    }

    /// Whether the file takes operations: false once `close()` was called, or the loop closed
    /// it. Loop thread only.
    public var isOpen: Bool { core("LoopFile.isOpen").closeReason == nil }
}

extension LoopFile: Hashable {
    /// Whether `lhs` and `rhs` are the same open file: files compare by identity.
    public static func == (lhs: LoopFile, rhs: LoopFile) -> Bool { lhs === rhs }

    /// Hashes the file's identity.
    /// - Parameter hasher: the hasher to feed.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
