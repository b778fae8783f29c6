extension Loop {
    /// A sequence that yields the loop's time every `interval`, driven by one repeating timer of
    /// this loop.
    ///
    /// ```swift
    /// var count = 0
    /// for await tick in try loop.ticks(every: .milliseconds(100)) {
    ///     print("tick at", tick)
    ///     count += 1
    ///     if count == 3 { break }          // leaving the loop cancels the timer
    /// }
    /// ```
    ///
    /// Callable from any thread. Each iteration (``LoopTicks/makeAsyncIterator()``, which
    /// `for await` calls) starts its own timer on the loop; the first tick comes one interval
    /// after it. A consumer that falls behind gets the oldest tick it missed, then skips to the
    /// next one due: ticks never pile up. The sequence ends (``LoopTicks/Iterator/next()`` returns
    /// `nil`) when the consuming task is cancelled, and when the loop shuts down. Cancelling the
    /// task, or dropping the iterator (leaving the `for await` loop), cancels the timer.
    ///
    /// - Parameters:
    ///   - interval: the time between ticks; at least 1 nanosecond.
    ///   - policy: how the timer keeps its grid; see ``LoopTimer/RepeatPolicy``.
    /// - Returns: the sequence; no timer runs until it is iterated.
    /// - Throws: ``LoopError/invalidArgument(_:)`` when `interval` is not positive.
    public func ticks(
        every interval: Duration, policy: LoopTimer.RepeatPolicy = .fixedRate
    ) throws(LoopError) -> LoopTicks {
        guard interval.saturatingNanoseconds > 0 else {
            throw LoopError.invalidArgument("ticks(every:) needs an interval of at least 1 ns (got \(interval))")
        }
        return LoopTicks(loop: self, interval: interval, policy: policy)
    }
}

/// The ticks of a repeating timer on a ``Loop``, as an `AsyncSequence`; see
/// ``Loop/ticks(every:policy:)``.
///
/// Elements are the loop's time when each tick fired (under a manual clock: exactly each deadline).
public struct LoopTicks: AsyncSequence, Sendable {
    /// The loop's time when a tick fired.
    public typealias Element = LoopInstant
    /// Ticks never fail: the sequence ends instead (cancellation, shutdown).
    public typealias Failure = Never

    /// The loop whose timer drives the sequence.
    public let loop: Loop
    /// The time between ticks.
    public let interval: Duration
    /// How the timer keeps its grid.
    public let policy: LoopTimer.RepeatPolicy

    /// Starts a timer for this iteration; see ``Loop/ticks(every:policy:)``. On a loop that no
    /// longer accepts work the iterator is already finished.
    public func makeAsyncIterator() -> Iterator {
        let repetition = TimerRepetition(interval: UInt64(interval.saturatingNanoseconds), policy: policy)
        let waiter = TickWaiter(timer: loop.makeTimer())
        do {
            try loop.insert(waiter.timer, after: interval, repetition: repetition, work: .ticker(waiter))
        } catch {
            waiter.finish()
        }
        return Iterator(subscription: TickSubscription(waiter: waiter, loop: loop))
    }

    /// One consumer's view of the ticks. Not `Sendable`: one task iterates it.
    public struct Iterator: AsyncIteratorProtocol {
        /// The loop's time when a tick fired.
        public typealias Element = LoopInstant
        /// Ticks never fail: the sequence ends instead (cancellation, shutdown).
        public typealias Failure = Never

        let subscription: TickSubscription

        /// The next tick, or `nil` once the task is cancelled or the loop has shut down.
        ///
        /// A tick that fired while nobody waited is returned at once; ticks missed beyond that
        /// one are skipped.
        public mutating func next() async -> LoopInstant? {
            subscription.loop.preconditionSteppedWhileAwaiting("LoopTicks.next()")
            return await subscription.waiter.next(isolation: nil)
        }

        /// The next tick, or `nil` once the task is cancelled or the loop has shut down. Waits on the
        /// caller's actor (`isolation`, the caller's by default), so that a consumer on the loop
        /// stays on it.
        /// - Parameter actor: the caller's actor; leave the default.
        public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async -> LoopInstant? {
            subscription.loop.preconditionSteppedWhileAwaiting("LoopTicks.next()")
            return await subscription.waiter.next(isolation: actor)
        }
    }
}

@available(*, unavailable)
extension LoopTicks.Iterator: Sendable {}

/// Owns an iteration's timer: when the iterator is dropped, the timer is cancelled.
final class TickSubscription: Sendable {
    let waiter: TickWaiter
    /// The loop whose ticks these are.
    let loop: Loop

    init(waiter: TickWaiter, loop: Loop) {
        self.waiter = waiter
        self.loop = loop
    }

    deinit {
        waiter.cancel()
    }
}
