/// How a scheduled timer repeats, in one word: the interval in nanoseconds shifted left by one,
/// and the low bit set for `.fixedDelay`. Zero for a one-shot timer.
struct TimerRepetition: Equatable {
    private let raw: UInt64

    /// A one-shot timer.
    static let none = TimerRepetition(raw: 0)

    private init(raw: UInt64) {
        self.raw = raw
    }

    /// `interval` is positive and at most `Int64.max` nanoseconds, so it fits in 63 bits.
    init(interval: UInt64, policy: LoopTimer.RepeatPolicy) {
        misusePrecondition(interval > 0 && interval <= UInt64(Int64.max), "UVLoop: a repeat interval must be positive")
        raw = interval << 1 | (policy == .fixedDelay ? 1 : 0)
    }

    var isRepeating: Bool { raw != 0 }

    /// The deadline after a tick due at `previous` whose callback returned at `now`.
    func nextDeadline(after previous: UInt64, now: UInt64) -> UInt64 {
        let interval = raw >> 1
        if raw & 1 == 1 {
            // Fixed delay: the interval after the callback returned.
            return now.addingClamped(interval)
        }
        // Fixed rate: on the grid, skipping ticks missed entirely rather than bunching them up.
        let next = previous.addingClamped(interval)
        if next > now { return next }
        let missed = (now - previous) / interval
        return previous.addingClamped(interval.multipliedClamped(missed + 1))
    }
}
