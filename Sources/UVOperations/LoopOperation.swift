import UVLoop

/// An operation that a `Loop` can run: a ``WorkerOperation``, a ``SequenceOperation`` or a
/// ``ConcurrentOperation``, or a type of your own built from them.
///
/// Operations are values that describe work; ``start(on:session:)`` runs one and returns the
/// ``OperationRequest`` that tracks that run. The same operation may be started any number of
/// times, on any loops, from any thread; each start is independent.
public protocol LoopOperation<Value>: Sendable {
    /// What the operation produces.
    associatedtype Value: Sendable

    /// How the operation runs. UVOperations' own operation types provide it; a type of your own
    /// returns the `runnable` of the operation it is made of.
    ///
    /// Consuming, so that starting a temporary operation moves its closures into the request
    /// instead of copying them (a plain getter or a stored property satisfies it).
    var runnable: RunnableOperation<Value> { consuming get }
}

extension LoopOperation {
    /// Starts the operation on `loop` and returns the request that tracks it.
    ///
    /// Callable from any thread. A worker's closure runs on libuv's thread pool; transforms and
    /// completions run on `loop`'s thread, never inside this call. The request joins `session`
    /// (by default ``OperationSession/shared``) until it completes; pass nil to keep it out of
    /// every session.
    ///
    /// Consuming, so that a temporary operation's closures move into the request instead of being
    /// retained and released (the operation stays usable: a caller that keeps it passes a copy).
    /// - Parameters:
    ///   - loop: the loop whose thread runs the transforms and completions.
    ///   - session: the session whose ``OperationSession/cancelAll()`` reaches the request.
    /// - Returns: the request that tracks this run.
    /// - Throws: `LoopError.shutDown` (or `LoopError.detached`) when `loop` no longer accepts work:
    ///   the operation did not start and none of its closures will run.
    @inlinable @discardableResult
    public consuming func start(on loop: Loop, session: OperationSession? = .shared) throws(LoopError) -> OperationRequest<Value> {
        try runnable.start(on: loop, session: session, onFinish: nil)
    }

    /// Starts the operation from the loop's own thread, with a completion that may capture
    /// loop-thread state (a class that is not `Sendable`), and returns the request that tracks it.
    ///
    /// ```swift
    /// final class Cache { var entries: [String: Int] = [:] }   // lives on the loop's thread
    /// let cache = Cache()
    /// try WorkerOperation { 6 * 7 }
    ///     .start(on: loop.assumeIsolated()) { outcome in cache.entries["answer"] = outcome.value }
    /// ```
    ///
    /// Otherwise like ``start(on:session:)``. `onCompletion` runs on the loop's thread once per
    /// start, after the operation's own transform and completion, whatever the outcome (a
    /// cancelled operation's included); a thread waiting in ``OperationRequest/wait()`` may wake
    /// before it has run. Call it on the loop's thread (`Loop.assumeIsolated()`
    /// checks).
    /// - Parameters:
    ///   - loop: the loop, seen from its own thread.
    ///   - session: the session whose ``OperationSession/cancelAll()`` reaches the request.
    ///   - onCompletion: runs on the loop's thread with the final outcome.
    /// - Returns: the request that tracks this run.
    /// - Throws: `LoopError.shutDown` (or `LoopError.detached`) when the loop no longer accepts
    ///   work: the operation did not start and none of its closures will run.
    @discardableResult
    @available(*, noasync, message: "use start(on:session:) with a Sendable completion from async code")
    public consuming func start(
        on loop: IsolatedLoop, session: OperationSession? = .shared,
        onCompletion: @escaping (Outcome<Value>) -> Void
    ) throws(LoopError) -> OperationRequest<Value> {
        let completion = loop.sendable("LoopOperation.start(on:session:onCompletion:)", onCompletion)
        return try runnable.start(on: loop.loop, session: session, onFinish: completion)
    }

    /// Starts the operation on `loop` and suspends until it completes; see ``start(on:session:)``.
    /// Cancelling the calling task cancels the operation (the outcome then says so).
    /// - Parameters:
    ///   - loop: the loop whose thread runs the transforms and completions.
    ///   - session: the session whose ``OperationSession/cancelAll()`` reaches the request.
    /// - Returns: the outcome, after the completion has run.
    /// - Throws: `LoopError.shutDown` (or `LoopError.detached`) when `loop` no longer accepts work.
    public func run(on loop: Loop, session: OperationSession? = .shared) async throws(LoopError) -> Outcome<Value> {
        await (try start(on: loop, session: session)).outcome
    }
}

/// How an operation runs: a worker with its transform and completion, or a composite of other
/// operations. Produced by UVOperations' operation types (``LoopOperation/runnable``); opaque
/// otherwise.
public struct RunnableOperation<Value: Sendable>: Sendable {
    /// The name under which an enclosing composite keeps this operation's outcome.
    public let name: String?
    @usableFromInline let kind: Kind
    @usableFromInline let transform: (@Sendable (inout Outcome<Value>) -> Void)?
    @usableFromInline let completion: (@Sendable (Outcome<Value>) -> Void)?

    @usableFromInline
    enum Kind: Sendable {
        /// Runs on a thread-pool thread.
        case worker(@Sendable () throws -> Value)
        /// Runs its children; `wrap` turns their results into this operation's value (the
        /// identity: a composite's `Value` is `CompositeResults`).
        case composite(CompositePlan, wrap: @Sendable (CompositeResults) -> Value)
    }

    @inlinable
    init(
        name: String?, kind: Kind,
        transform: (@Sendable (inout Outcome<Value>) -> Void)?, completion: (@Sendable (Outcome<Value>) -> Void)?
    ) {
        self.name = name
        self.kind = kind
        self.transform = transform
        self.completion = completion
    }

    /// Creates the request, enters it in `session`, and starts it.
    @inlinable
    consuming func start(
        on loop: Loop, session: OperationSession?, onFinish: (@Sendable (Outcome<Value>) -> Void)?
    ) throws(LoopError) -> OperationRequest<Value> {
        let request = OperationRequest(loop: loop, runnable: self, session: session, onFinish: onFinish)
        request.joinSession()
        do {
            try request.begin()
        } catch {
            request.leaveSession()
            throw error
        }
        return request
    }

    /// Completes the operation without running it, on the loop's thread: its children first (for
    /// a composite), then its transform and completion, exactly as if it had run.
    func skip(_ reason: SkipReason) -> Outcome<Value> {
        if case .composite(let plan, _) = kind {
            for child in plan.children { _ = child.skip(reason) }
        }
        var outcome: Outcome<Value>
        switch reason {
        case .cancelled: outcome = Outcome(result: nil, isCancelled: true)
        case .refused(let error): outcome = Outcome(result: .failure(error))
        }
        transform?(&outcome)
        completion?(outcome)
        return outcome
    }
}

/// Why an operation inside a composite completes without running.
enum SkipReason: Sendable {
    /// The composite was cancelled before the operation's turn came.
    case cancelled
    /// The loop refused the work (it is shutting down); the outcome carries the error.
    case refused(LoopError)
}

/// An operation of any value type, as a composite holds its children.
protocol ErasedRunnable: Sendable {
    var name: String? { get }
    /// Starts the operation as a child (in no session); `onFinish` runs on the loop's thread.
    func startChild(
        on loop: Loop, onFinish: @escaping @Sendable (Outcome<any Sendable>) -> Void
    ) throws(LoopError) -> any CancellableRequest
    /// See `RunnableOperation.skip(_:)`.
    func skip(_ reason: SkipReason) -> Outcome<any Sendable>
}

extension RunnableOperation: ErasedRunnable {
    func startChild(
        on loop: Loop, onFinish: @escaping @Sendable (Outcome<any Sendable>) -> Void
    ) throws(LoopError) -> any CancellableRequest {
        try start(on: loop, session: nil) { outcome in onFinish(outcome.erased) }
    }

    func skip(_ reason: SkipReason) -> Outcome<any Sendable> {
        let outcome: Outcome<Value> = skip(reason)
        return outcome.erased
    }
}

/// A request as sessions and composites see it: something to cancel.
@usableFromInline
protocol CancellableRequest: AnyObject, Sendable {
    @discardableResult func cancel() -> Bool
}
