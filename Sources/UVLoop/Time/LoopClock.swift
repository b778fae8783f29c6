/// A loop's clock as a Swift `Clock`: what `Task.sleep(until:tolerance:clock:)`, `ContinuousClock`-
/// style APIs and clock-generic libraries (swift-async-algorithms' `debounce`, `throttle` and
/// `AsyncTimerSequence`) take.
///
/// Its time is the loop's time (``Loop/now``), and sleeping on it is sleeping on one of the loop's
/// timers (``Loop/sleep(until:isolation:)``): nanosecond deadlines on the monotonic clock, or,
/// on a loop with a manual clock, time that moves only when a test advances it. Code written
/// against `some Clock<Duration>` then runs under test exactly as the test steps it.
///
/// Reading ``now`` and sleeping are callable from any thread and any task. Sleeping throws
/// `CancellationError` when the task is cancelled, and ``LoopError/shutDown`` (or
/// ``LoopError/detached``) once the loop has stopped accepting work.
///
/// ```swift
/// let thread = try Loop.startThread()
/// let clock = thread.loop.clock
/// let start = clock.now
/// try await Task.sleep(for: .milliseconds(5), clock: clock)
/// print(start.duration(to: clock.now) >= .milliseconds(5))    // true
/// ```
public struct LoopClock: Clock {
    /// The clock's instants: points on the loop's clock.
    public typealias Instant = LoopInstant

    /// The loop whose time this is.
    public let loop: Loop

    /// The clock of `loop`; the same as `loop.clock`.
    /// - Parameter loop: the loop whose time and timers the clock uses.
    public init(loop: Loop) {
        self.loop = loop
    }

    /// The loop's current time (``Loop/now``). Any thread.
    public var now: LoopInstant { loop.now }

    /// One nanosecond: deadlines are kept to the nanosecond.
    public var minimumResolution: Duration { .nanoseconds(1) }

    /// Suspends the calling task until `deadline` on the loop's clock.
    /// - Parameters:
    ///   - deadline: when to resume.
    ///   - tolerance: ignored: the loop's timers fire as soon as they are due.
    /// - Throws: `CancellationError` when the task is cancelled; ``LoopError/shutDown`` (or
    ///   ``LoopError/detached``) when the loop no longer accepts work or shuts down first.
    public func sleep(until deadline: LoopInstant, tolerance: Duration? = nil) async throws {
        try await loop.sleep(until: deadline)
    }
}

extension Loop {
    /// This loop's time as a Swift `Clock`, for APIs that take one. See ``LoopClock``.
    public var clock: LoopClock { LoopClock(loop: self) }
}
