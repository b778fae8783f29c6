import Synchronization

/// A handle to work scheduled on a `Loop`'s clock: cancel it, fire it early, or ask whether it is
/// still pending. Usable from any thread; every method is idempotent.
///
/// A one-shot timer ends in exactly one of two ways, decided atomically: it runs (at its deadline
/// or through `fire()`), or it is cancelled. A repeating timer runs until it is cancelled or fired.
public final class LoopTimer: Sendable {
    /// How a repeating timer chooses its next deadline.
    public enum RepeatPolicy: Sendable, Equatable {
        /// The next deadline is the previous deadline plus the interval, so ticks stay on a grid
        /// (a tick that could not run on time runs late; ticks missed entirely are skipped, not
        /// bunched up).
        case fixedRate
        /// The next deadline is the interval after the callback returned, so a slow callback
        /// pushes later ticks back.
        case fixedDelay
    }

    static let pending: UInt8 = 0
    static let fired: UInt8 = 1
    static let cancelled: UInt8 = 2

    /// The loop whose clock and thread the timer runs on.
    public let loop: Loop
    let status = Atomic<UInt8>(LoopTimer.pending)
    /// The timer's slot in the loop's `TimerQueue`; touched on the loop's thread only.
    let slot = Atomic<Int32>(-1)
    /// Zero for a one-shot timer.
    let interval: UInt64
    let policy: RepeatPolicy

    init(loop: Loop, interval: UInt64, policy: RepeatPolicy) {
        self.loop = loop
        self.interval = interval
        self.policy = policy
    }

    /// Whether the timer may still run: neither cancelled nor (for a one-shot timer) fired.
    public var isPending: Bool { status.load(ordering: .acquiring) == LoopTimer.pending }

    /// Cancels the timer.
    ///
    /// Returns `true` exactly when this call prevented the timer from running (again): after a
    /// `true`, the closure never runs. What the closure captured is released at once when called
    /// on the loop's thread, otherwise on the loop's next turn (never on the calling thread).
    /// Returns `false` when the timer already ran, was fired, or was cancelled before.
    /// A repeating timer may cancel itself from inside its own callback.
    @discardableResult
    public func cancel() -> Bool {
        guard status.compareExchange(
            expected: LoopTimer.pending, desired: LoopTimer.cancelled, ordering: .acquiringAndReleasing
        ).exchanged else { return false }
        loop.discard(self)
        return true
    }

    /// Runs the timer's closure now, on the loop's thread, and takes it off the schedule.
    ///
    /// On the loop's thread the closure runs inline, before `fire()` returns; from another thread
    /// `fire()` waits until the loop thread has run it. Returns `true` if this call ran it; `false`
    /// if the timer already ran, was cancelled, or the loop has shut down. A timer never runs twice
    /// through `fire()`, and a repeating timer that is fired stops repeating.
    @discardableResult
    public func fire() -> Bool {
        if loop.isOnLoopThread { return loop.fireNow(self) }
        guard isPending else { return false }
        return (try? loop.invoke { [self] in loop.fireNow(self) }) ?? false
    }
}
