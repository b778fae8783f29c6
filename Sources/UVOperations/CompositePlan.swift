import UVLoop

/// How a composite runs its children.
enum CompositeMode: Sendable {
    /// One after another, in order: a child starts when the previous one has completed.
    case sequence
    /// All at once; they complete in any order.
    case concurrent
}

/// A composite's children, erased to one type, and how to run them.
@usableFromInline
struct CompositePlan: Sendable {
    let mode: CompositeMode
    let children: [any ErasedRunnable]

    /// - Throws: `LoopError.invalidArgument` when two children share a name (the composite's
    ///   outcome could not tell their outcomes apart).
    init(mode: CompositeMode, name: String?, operations: [any LoopOperation]) throws(LoopError) {
        var children: [any ErasedRunnable] = []
        children.reserveCapacity(operations.count)
        var seen = Set<String>()
        for operation in operations {
            let child = Self.erase(operation)
            if let childName = child.name, !seen.insert(childName).inserted {
                let composite = name.map { "composite '\($0)'" } ?? "an unnamed composite"
                throw .invalidArgument(
                    "two children of \(composite) are named '\(childName)'; give each child a unique name (or none)")
            }
            children.append(child)
        }
        self.mode = mode
        self.children = children
    }

    private static func erase<Operation: LoopOperation>(_ operation: Operation) -> any ErasedRunnable {
        operation.runnable
    }

    /// The runnable of a composite with this plan.
    func runnable(
        name: String?,
        transform: (@Sendable (inout Outcome<CompositeResults>) -> Void)?,
        completion: (@Sendable (Outcome<CompositeResults>) -> Void)?
    ) -> RunnableOperation<CompositeResults> {
        RunnableOperation(name: name, kind: .composite(self, wrap: { $0 }), transform: transform, completion: completion)
    }
}
