import Synchronization

/// The reading of a loop's manual clock: moved only by the loop's thread (when a test advances
/// time), read from any thread, so that ``Loop/now`` and ``LoopClock/now`` work wherever the code
/// under test runs.
final class ManualTime: Sendable {
    private let nanoseconds = Atomic<UInt64>(0)

    /// The clock's reading. Any thread.
    var now: UInt64 { nanoseconds.load(ordering: .acquiring) }

    /// Moves the clock forward to `value` (never back). Loop thread only: the one writer.
    func advance(to value: UInt64) {
        if value > now { nanoseconds.store(value, ordering: .releasing) }
    }
}
