import Synchronization

/// Counts events from any thread.
///
/// Relaxed: read it after something that orders the counting threads before the reader (a join,
/// a gate, a loop's hand-off).
public final class Counter: Sendable {
    private let count = Atomic<Int>(0)

    public init() {}

    /// Adds `amount` (1 by default) and returns the new total.
    @discardableResult
    public func increment(by amount: Int = 1) -> Int { count.add(amount, ordering: .relaxed).newValue }

    public var value: Int { count.load(ordering: .relaxed) }
}
