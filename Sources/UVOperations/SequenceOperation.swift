import UVLoop

/// A composite operation that runs its children one after another, in the order given (the
/// seed's sequence). Children may be any operations, composites included, nested to any depth.
///
/// Each child starts on the loop's thread once the previous one has completed (its completion
/// has run), whether it succeeded, failed or was cancelled. The composite's value is the
/// `CompositeResults` of its named children.
///
/// Cancelling the sequence cancels the running child (it finishes with the cancelled flag) and
/// completes the children after it without running them: each of those gets an outcome with no
/// value, no error and the cancelled flag, and its own transform and completion are still called.
///
/// ```swift
/// let sequence = try SequenceOperation(name: "sequence", [operation1, operation2])
/// let request = try sequence.start(on: loop)
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
    public func transform(_ transform: @escaping @Sendable (inout Outcome<CompositeResults>) -> Void) -> Self {
        var copy = self
        copy.transform = transform
        return copy
    }

    /// A copy of this operation with `completion` as its completion.
    public func onCompletion(_ completion: @escaping @Sendable (Outcome<CompositeResults>) -> Void) -> Self {
        var copy = self
        copy.completion = completion
        return copy
    }

    /// See `LoopOperation.runnable`.
    public var runnable: RunnableOperation<CompositeResults> {
        plan.runnable(name: name, transform: transform, completion: completion)
    }
}
