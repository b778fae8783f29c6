import UVLoop

/// A composite operation that runs its children one after another, in the order given. Children
/// may be any operations, composites included, nested to any depth.
///
/// Each child starts on the loop's thread once the previous one has completed (its completion
/// has run), whether it succeeded, failed or was cancelled. The composite's value is the
/// ``CompositeResults`` of its named children.
///
/// Cancelling the sequence cancels the running child (it finishes with the cancelled flag) and
/// completes the children after it without running them: each of those gets an outcome with no
/// value, no error and the cancelled flag, and its own transform and completion are still called.
///
/// ```swift
/// let load = WorkerOperation(name: "load") { "the quick brown fox" }
/// let count = WorkerOperation(name: "count") { 4 }
/// let sequence = try SequenceOperation(name: "sequence", [load, count])   // load, then count
/// let results = try sequence.start(on: loop).wait().value!
/// let words = results.outcome(named: "count", as: Int.self)?.value        // 4
/// ```
public struct SequenceOperation: LoopOperation {
    /// The name under which an enclosing composite keeps this operation's outcome.
    public let name: String?
    /// Runs on the loop's thread once every child has completed, and may change the outcome.
    public var transform: (@Sendable (inout Outcome<CompositeResults>) -> Void)?
    /// Runs on the loop's thread with the final outcome, after the transform.
    public var completion: (@Sendable (Outcome<CompositeResults>) -> Void)?
    private let plan: CompositePlan

    /// A sequence of `operations`.
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
        self.plan = try CompositePlan(mode: .sequence, name: name, operations: operations)
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
