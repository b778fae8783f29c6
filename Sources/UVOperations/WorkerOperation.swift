import UVLoop

/// An operation whose worker closure runs on libuv's thread pool.
///
/// The worker returns a value or throws: the outcome then carries the value or the error, never
/// both. The optional transform may change the outcome before the optional completion receives
/// it; both run on the loop's thread, in that order, exactly once per start, whatever happens
/// (a worker cancelled before it started still gets them called, with an empty cancelled outcome).
///
/// ```swift
/// let operation = WorkerOperation(name: "double") { 21 }
///     .transform { outcome in outcome.value = outcome.value.map { $0 * 2 } }
///     .onCompletion { outcome in print("completed:", outcome) }   // on the loop's thread
/// let request = try operation.start(on: loop)
/// let outcome = try request.wait()              // from another thread: value 42
/// ```
public struct WorkerOperation<Value: Sendable>: LoopOperation {
    /// The name under which an enclosing composite keeps this operation's outcome.
    public var name: String?
    /// Runs on a thread-pool thread. It must not wait on the loop's thread (the loop may be
    /// waiting for the pool) nor block for long: the pool has few threads, shared process-wide.
    public var worker: @Sendable () throws -> Value
    /// Runs on the loop's thread after the worker (or after a cancel that kept it from running)
    /// and may change the outcome.
    public var transform: (@Sendable (inout Outcome<Value>) -> Void)?
    /// Runs on the loop's thread with the final outcome, after the transform.
    public var completion: (@Sendable (Outcome<Value>) -> Void)?

    /// An operation that runs `worker` on the thread pool.
    /// - Parameters:
    ///   - name: the name under which an enclosing composite keeps the outcome.
    ///   - transform: runs on the loop's thread after the worker, and may change the outcome.
    ///   - completion: runs on the loop's thread with the final outcome, after the transform.
    ///   - worker: runs on a thread-pool thread; see ``worker``.
    @inlinable
    public init(
        name: String? = nil,
        transform: (@Sendable (inout Outcome<Value>) -> Void)? = nil,
        completion: (@Sendable (Outcome<Value>) -> Void)? = nil,
        worker: @escaping @Sendable () throws -> Value
    ) {
        self.name = name
        self.worker = worker
        self.transform = transform
        self.completion = completion
    }

    /// A copy of this operation with `transform` as its transform.
    /// - Parameter transform: runs on the loop's thread after the worker, and may change the
    ///   outcome.
    @inlinable
    public func transform(_ transform: @escaping @Sendable (inout Outcome<Value>) -> Void) -> Self {
        var copy = self
        copy.transform = transform
        return copy
    }

    /// A copy of this operation with `completion` as its completion.
    /// - Parameter completion: runs on the loop's thread with the final outcome.
    @inlinable
    public func onCompletion(_ completion: @escaping @Sendable (Outcome<Value>) -> Void) -> Self {
        var copy = self
        copy.completion = completion
        return copy
    }

    /// How the operation runs; see ``LoopOperation/runnable``.
    @inlinable
    public var runnable: RunnableOperation<Value> {
        consuming get {
            RunnableOperation(name: name, kind: .worker(worker), transform: transform, completion: completion)
        }
    }
}
