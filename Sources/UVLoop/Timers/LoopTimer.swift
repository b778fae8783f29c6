/// A handle to work scheduled on a ``Loop``'s clock: cancel it, fire it early, or ask whether it
/// is still pending. Usable from any thread; every method is idempotent.
///
/// Get one from ``Loop/schedule(after:_:)``, ``Loop/schedule(at:_:)`` or
/// ``Loop/scheduleRepeating(every:after:policy:_:)-(_,_,_,()->Void)``. ``reschedule(after:)`` moves
/// it to a new deadline. A one-shot timer ends in exactly one of two ways, decided atomically: it runs (at its deadline or through ``fire()``), or it is cancelled.
/// A repeating timer runs until it is cancelled or fired. Dropping the handle changes nothing.
///
/// The handle is a small value (the loop and a generation-checked slot of the loop's timer table),
/// so scheduling allocates nothing for it. Copies are the same timer, and compare equal. A handle
/// kept after its timer ended stays safe: the slot is reused with a new generation, which the old
/// handle never matches (``isPending`` is false, ``cancel()`` and ``fire()`` return false).
public struct LoopTimer: Sendable, Hashable {
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

    /// The loop whose clock and thread the timer runs on.
    public let loop: Loop
    /// The slot (high 32 bits) and its generation (low 32 bits); see `TimerSlots`.
    let id: UInt64

    init(loop: Loop, id: UInt64) {
        self.loop = loop
        self.id = id
    }

    /// Whether the timer may still run: neither cancelled nor (for a one-shot timer) run or fired.
    /// Callable from any thread.
    public var isPending: Bool { loop.timerSlots.isPending(id) }

    /// Cancels the timer. Callable from any thread.
    ///
    /// Returns `true` exactly when this call prevented the timer from running (again): after a
    /// `true`, the closure never runs. What the closure captured is released at once when called
    /// on the loop's thread, otherwise on the loop's next turn (never on the calling thread).
    /// Returns `false` when the timer already ran, was fired, or was cancelled before.
    /// A repeating timer may cancel itself from inside its own callback.
    /// - Returns: whether this call kept the timer from running (again).
    @discardableResult
    public func cancel() -> Bool {
        guard loop.timerSlots.finish(id, as: TimerSlots.cancelled) else { return false }
        loop.discard(self)
        return true
    }

    /// Runs the timer's closure now, on the loop's thread, and takes it off the schedule.
    ///
    /// Callable from any thread. On the loop's thread the closure runs inline, before `fire()`
    /// returns; from another thread `fire()` waits until the loop thread has run it. A timer never
    /// runs twice through `fire()`, and a repeating timer that is fired stops repeating.
    ///
    /// One exception to "inline": a timer scheduled on another thread travels to the loop as a
    /// post. If its handle reaches the loop's thread by a faster way (an ``Inbox``, shared memory)
    /// and `fire()` is called there before that post has run, the closure is not on the loop yet:
    /// `fire()` returns `true`, and the closure runs as soon as the post does, not at its deadline.
    /// - Returns: `true` if this call ran the closure; `false` if the timer already ran, was
    ///   cancelled, or the loop has shut down.
    @discardableResult
    public func fire() -> Bool {
        if loop.isOnLoopThread { return loop.fireNow(self) }
        guard isPending else { return false }
        return (try? loop.invoke { [self] in loop.fireNow(self) }) ?? false
    }

    /// Moves the timer's next run to `delay` from now, keeping its closure, its handle and (for a
    /// repeating timer) its interval: libuv's `uv_timer_again`, for a timeout that every sign of
    /// life pushes back. Callable from any thread.
    ///
    /// Moving a timer costs about what scheduling one does, with no cancel and no new handle; it
    /// may move the deadline later or earlier. A repeating timer's later runs follow from the new
    /// deadline by its ``RepeatPolicy``; called from inside its own callback, it sets when the
    /// next run comes. A timer moved to a deadline that has passed runs on the loop's next turn.
    ///
    /// ```swift
    /// let closed = LoopBound(false, loop: loop)
    /// let idle = try loop.schedule(after: .seconds(30)) { closed.value = true }
    /// // Each message received pushes the idle timeout back:
    /// idle.reschedule(after: .seconds(30))
    /// ```
    ///
    /// On the loop's thread the move happens before this returns. From another thread it travels
    /// to the loop like a post, in order with the calling thread's other posts; the delay counts
    /// from this call (under a manual clock: from when the loop receives it). If the timer runs,
    /// is fired or is cancelled before the move arrives, the move does nothing.
    /// - Parameter delay: the time until the next run, on the loop's clock; a negative delay counts
    ///   as zero, and one too large to represent is clamped to the end of time.
    /// - Returns: `false` if the timer has already ended (ran, was fired or cancelled, or the loop
    ///   has shut down), so there was nothing to move; otherwise `true`.
    @discardableResult
    public func reschedule(after delay: Duration) -> Bool {
        loop.reschedule(self, to: .after(delay.delayNanoseconds))
    }

    /// Moves the timer's next run to `deadline` on the loop's clock (at once, on the loop's next
    /// turn, if it has passed). Otherwise the same as ``reschedule(after:)``.
    /// - Parameter deadline: when to run next, on the loop's clock (see ``Loop/now``).
    /// - Returns: `false` if the timer has already ended; otherwise `true`.
    @discardableResult
    public func reschedule(at deadline: LoopInstant) -> Bool {
        loop.reschedule(self, to: .absolute(deadline.nanoseconds))
    }

    /// Two handles are equal when they are the same scheduling of the same loop.
    public static func == (lhs: LoopTimer, rhs: LoopTimer) -> Bool {
        lhs.loop === rhs.loop && lhs.id == rhs.id
    }

    /// Hashes the loop's identity and the timer's slot and generation.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(loop))
        hasher.combine(id)
    }
}
