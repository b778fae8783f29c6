import UVLoop

/// A composite operation that starts all its children at once; they complete in any order.
/// Children may be any operations, composites included, nested to any depth.
///
/// Worker children share libuv's thread pool, so at most its size run at the same moment; the
/// rest wait in its queue. The composite completes once every child has completed; its value is
/// the ``CompositeResults`` of its named children.
///
/// Cancelling the group cancels every child: those running finish with the cancelled flag, those
/// still waiting in the pool's queue are withdrawn and never run (no value, no error, cancelled).
///
/// ```swift
/// let words = WorkerOperation(name: "words") { 4 }
/// let letters = WorkerOperation(name: "letters") { 16 }
/// let group = try ConcurrentOperation(name: "group", [words, letters])   // both at once
/// let results = try group.start(on: loop).wait().value!
/// let letterCount = results.outcome(named: "letters", as: Int.self)?.value   // 16
/// ```
public struct ConcurrentOperation: LoopOperation {
    /// The name under which an enclosing composite keeps this operation's outcome.
    public let name: String?
    /// Runs on the loop's thread once every child has completed, and may change the outcome.
    public var transform: (@Sendable (inout Outcome<CompositeResults>) -> Void)?
    /// Runs on the loop's thread with the final outcome, after the transform.
    public var completion: (@Sendable (Outcome<CompositeResults>) -> Void)?
    private let plan: CompositePlan

    /// A group of `operations` that run concurrently.
    /// - Parameters:
    ///   - name: the name under which an enclosing composite keeps the outcome.
    ///   - operations: the children, any operations (composites included).
    ///   - transform: runs on the loop's thread once every child has completed, and may change the
    ///     outcome.
    ///   - completion: runs on the loop's thread with the final outcome, after the transform.
    /// - Throws: `LoopError.invalidArgument` when two of `operations` have the same name.
    public init(
        name: String? = nil, _ operations: [any LoopOperation],
        transform: (@Sendable (inout Outcome<CompositeResults>) -> Void)? = nil,
        completion: (@Sendable (Outcome<CompositeResults>) -> Void)? = nil
    ) throws(LoopError) {
        self.name = name
        self.plan = try CompositePlan(mode: .concurrent, name: name, operations: operations)
        self.transform = transform
        self.completion = completion
    }

    /// A copy of this operation with `transform` as its transform.
    /// - Parameter transform: runs on the loop's thread once every child has completed, and may
    ///   change the outcome.
    public func transform(_ transform: @escaping @Sendable (inout Outcome<CompositeResults>) -> Void) -> Self {
        var copy = self
        copy.transform = transform
        return copy
    }

    /// A copy of this operation with `completion` as its completion.
    /// - Parameter completion: runs on the loop's thread with the final outcome.
    public func onCompletion(_ completion: @escaping @Sendable (Outcome<CompositeResults>) -> Void) -> Self {
        var copy = self
        copy.completion = completion
        return copy
    }

    /// How the operation runs; see ``LoopOperation/runnable``.
    public var runnable: RunnableOperation<CompositeResults> {
        plan.runnable(name: name, transform: transform, completion: completion)
    }
}
