import Synchronization

/// The reading of a loop's manual clock: moved only by the loop's thread (when a test advances
/// time), read from any thread, so that ``Loop/now`` and ``LoopClock/now`` work wherever the code
/// under test runs.
final class ManualTime: Sendable {
    private let nanoseconds = Atomic<UInt64>(0)

    /// Whether the loop was made by async code (inside a task): such a loop's thread is whichever
    /// thread the task ran on then, and no code of the task can step it while the task waits.
    let madeInsideATask = withUnsafeCurrentTask { $0 != nil }

    /// The clock's reading. Any thread.
    var now: UInt64 { nanoseconds.load(ordering: .acquiring) }

    /// Moves the clock forward to `value` (never back). Loop thread only: the one writer.
    func advance(to value: UInt64) {
        if value > now { nanoseconds.store(value, ordering: .releasing) }
    }
}
