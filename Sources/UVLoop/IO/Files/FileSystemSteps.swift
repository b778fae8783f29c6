import Synchronization

/// One operation made of several requests in a row (`mkdir -p`, removing or copying a tree):
/// starts each request under the loop's admission and lets the async face's cancellation stop
/// the chain. Loop thread only; the atomics only make it `Sendable`, so that the async face's
/// `@Sendable` closures can carry it there.
///
/// Cancelling withdraws the last request started if no pool thread has started it, and refuses
/// every later one with ``LoopError/cancelled``: the operation then completes with that error
/// once its other requests in flight (a tree's removal runs a few at once) have finished, and
/// what its earlier requests did stays done.
final class FileSystemSteps: Sendable {
    private let cancelled = Atomic<Bool>(false)
    private let ticket = Atomic<UInt64>(0)

    /// Starts one request of the operation; see `FileSystemRequests.start`.
    /// - Throws: ``LoopError/cancelled`` once cancelled; the loop's refusal; libuv's refusal.
    func start(
        _ requests: FileSystemRequests, _ operation: StaticString, path: String, completion: FileSystemCompletion,
        tag: Int = 0, _ start: (FileSystemRequest) -> Int32
    ) throws(LoopError) {
        guard !cancelled.load(ordering: .relaxed) else { throw .cancelled }
        ticket.store(try requests.start(operation, path: path, completion: completion, tag: tag, start), ordering: .relaxed)
    }

    /// Starts one request of the operation that tells `client` when it finishes; see
    /// `FileSystemRequests.start(_:path:client:tag:_:)`.
    /// - Throws: like ``start(_:_:path:completion:tag:_:)``.
    func start(
        _ requests: FileSystemRequests, _ operation: StaticString, path: String, client: FileSystemRequestClient,
        tag: Int, _ start: (FileSystemRequest, String) -> Int32
    ) throws(LoopError) {
        guard !cancelled.load(ordering: .relaxed) else { throw .cancelled }
        ticket.store(try requests.start(operation, path: path, client: client, tag: tag, start), ordering: .relaxed)
    }

    /// Stops the operation: withdraws its last request (if not started) and refuses the rest.
    func cancel(_ requests: FileSystemRequests) {
        cancelled.store(true, ordering: .relaxed)
        let ticket = ticket.load(ordering: .relaxed)
        if ticket != 0 { requests.cancel(ticket: ticket) }
    }
}

extension LoopFileSystem {
    /// The loop's request pool. Loop thread only.
    var requests: FileSystemRequests { loop.engine.fileSystemRequests }

    /// The async face of a multi-request operation: runs `start` (its callback face, given the
    /// operation's steps) on the loop's thread and waits for the completion; a cancelled task
    /// cancels the steps.
    func performSteps<Value: Sendable>(
        caller: StaticString = #function,
        _ start: @escaping @Sendable (FileSystemSteps, @escaping (Result<Value, LoopError>) -> Void) throws(LoopError) -> Void
    ) async throws(LoopError) -> Value {
        let steps = FileSystemSteps()
        let loop = loop
        return try await loop.suspendOnLoopThread(caller: caller) { (waiter, continuation: LoopContinuation<Value>) in
            if waiter.isCancelled { steps.cancel(loop.engine.fileSystemRequests) }
            do throws(LoopError) {
                try start(steps) { result in continuation.resume(with: result) }
            } catch {
                continuation.resume(throwing: error)
            }
        } cancel: { _ in
            steps.cancel(loop.engine.fileSystemRequests)
        }
    }
}

/// Runs `start` (the next request of an operation whose first one has started) and hands a
/// failure to start to `completion`, which then runs at once.
func continuing<Value>(_ completion: (Result<Value, LoopError>) -> Void, _ start: () throws(LoopError) -> Void) {
    do throws(LoopError) {
        try start()
    } catch {
        completion(.failure(error))
    }
}

extension LoopError {
    /// The system's error code when this is a file-system error, or nil.
    var fileSystemCode: Int32? {
        if case .fileSystem(_, _, let code) = self { return code }
        return nil
    }
}
