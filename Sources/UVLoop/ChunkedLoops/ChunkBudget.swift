/// What bounds one chunk of a chunked loop: time on the loop's clock, or a number of items.
///
/// A chunk is the slice of a chunked loop that runs in one loop iteration, between two polls for
/// I/O. Between chunks the loop fires timers, drains posted work and polls for I/O, so the budget
/// bounds how long a chunked loop can delay everything else.
///
/// - ``time(_:)`` ends a chunk once its duration has passed on the loop's clock. The clock is read
///   only every few items (the stride adapts so that reads happen about every 50 µs of work, or
///   more often for budgets under 800 µs), so a chunk may overrun its budget by about one stride.
///   A chunk also ends early when a pending timer comes due, so the timer fires right after it.
///   Under a manual clock, time passes only when the test moves it (for example from the body with
///   `advanceClockWithoutRunning(by:)` from the `UVLoopTesting` module); otherwise a time budget
///   never runs out and the whole loop runs in one chunk: use ``items(_:)`` to bound chunks in
///   such tests.
/// - ``items(_:)`` ends a chunk after a fixed number of items and never reads the clock; a timer
///   that comes due during a chunk fires after it.
///
/// An invalid budget (a zero or negative duration or count) is reported when the chunked loop is
/// started: ``Loop/startChunkedLoop(count:budget:body:progress:completion:)`` throws
/// ``LoopError/invalidArgument(_:)``.
public struct ChunkBudget: Sendable, Hashable, CustomStringConvertible {
    enum Kind: Hashable {
        case time(Duration)
        case items(Int)
    }

    let kind: Kind

    /// Chunks of at most `duration` on the loop's clock; `duration` must be at least 1 nanosecond.
    /// - Parameter duration: the longest a chunk runs, overrun by at most one stride of items.
    public static func time(_ duration: Duration) -> ChunkBudget { ChunkBudget(kind: .time(duration)) }

    /// Chunks of at most `count` items; `count` must be at least 1.
    /// - Parameter count: the most items one chunk runs.
    public static func items(_ count: Int) -> ChunkBudget { ChunkBudget(kind: .items(count)) }

    /// Two milliseconds of the loop's clock: short enough that timers and I/O stay responsive,
    /// long enough that the per-chunk cost (one loop iteration and one progress call) stays small
    /// next to the work.
    public static let `default` = ChunkBudget.time(.milliseconds(2))

    /// A readable description, for logs and test failures.
    public var description: String {
        switch kind {
        case .time(let duration): return ".time(\(duration))"
        case .items(let count): return ".items(\(count))"
        }
    }

    /// The budget in loop-clock nanoseconds or items, or the error a start call throws for it.
    func validated() throws(LoopError) -> ChunkLimit {
        switch kind {
        case .time(let duration):
            let nanoseconds = duration.saturatingNanoseconds
            guard nanoseconds > 0 else {
                throw .invalidArgument(
                    "a chunked loop's time budget must be at least 1 nanosecond (got \(duration)); use .items(n) to bound chunks by count")
            }
            return .nanoseconds(UInt64(nanoseconds))
        case .items(let count):
            guard count > 0 else {
                throw .invalidArgument("a chunked loop's chunk must hold at least 1 item (got .items(\(count)))")
            }
            return .items(count)
        }
    }
}

/// A validated `ChunkBudget`, in the units the chunk runner counts.
enum ChunkLimit: Equatable {
    case nanoseconds(UInt64)
    case items(Int)
}
