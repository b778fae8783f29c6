import Glibc
import Synchronization

/// The loop-thread half of an inbox: takes messages out of the ring and hands them to the receiver.
///
/// `@unchecked Sendable` is safe because, after `Loop.makeInbox` creates it, only the loop's thread
/// uses it: `deliver` runs in the inbox's wake callback and `finish` in that callback or in the
/// loop's shutdown, and the loop's thread first reaches it through `invoke` (or is the creating
/// thread), which publishes it. It is Sendable only so that the closures that reach it can cross
/// into `invoke`.
///
/// `@usableFromInline` with inlinable methods so that its loop is specialised for the message
/// type in the module that made the inbox.
@usableFromInline
final class InboxConsumer<Message: Sendable>: @unchecked Sendable {
    @usableFromInline let ring: InboxRing<Message>
    @usableFromInline let receiver: @Sendable (Message) -> Void
    @usableFromInline let budget: Int
    /// How many of the newest messages a look in the prepare phase leaves while senders stream
    /// (see `settle`): 64 cells span 24 to 64 cache lines, so the loop reads lines the senders
    /// have finished with.
    @usableFromInline let streamingLag: Int
    /// The next position to read.
    @usableFromInline var dequeuePosition = 0
    /// The loop has delivered since it last found the ring empty and cleared the wake-pending
    /// flag: it looks again in the prepare phase (`settle`). Loop thread only.
    @usableFromInline var isUnsettled = false

    /// Whether messages may be waiting for delivery: one is published and not yet delivered, or
    /// the loop has yet to settle the inbox. Loop thread only.
    @usableFromInline
    var hasWaiting: Bool {
        isUnsettled || ring.isPublished(at: dequeuePosition)
    }

    /// The messages sent and not yet delivered (counting a send still being published). Loop
    /// thread only.
    @usableFromInline
    var waitingCount: Int {
        max(0, ring.enqueuePosition.pointee.load(ordering: .relaxed) &- dequeuePosition)
    }

    @inlinable
    init(ring: InboxRing<Message>, budget: Int, receiver: @escaping @Sendable (Message) -> Void) {
        self.ring = ring
        self.budget = budget
        streamingLag = Swift.min(64, ring.capacity / 4)
        self.receiver = receiver
    }

    /// Delivers at most `budget` messages: what a wake-up does. The wake-pending flag stays set, so
    /// later senders skip their wake-up (a system call each); the loop settles the inbox in its
    /// prepare phase (`settle`), which clears the flag only once a look finds nothing new.
    /// - Returns: `.busy`, or `.closed` once the inbox has closed.
    @inlinable
    func deliver() -> InboxSettling {
        isUnsettled = true
        _ = deliverBatch(limit: budget)
        if ring.isClosed.pointee.load(ordering: .sequentiallyConsistent) { return .closed }
        return .busy
    }

    /// The prepare phase's look at an unsettled inbox, right before the loop polls. Messages that
    /// arrived since the last look are delivered, and the flag stays set: while senders keep
    /// sending, the loop polls without blocking and takes their messages turn after turn, and
    /// they send no wake-up. A look that finds nothing new clears the flag and looks once more;
    /// from then on a sender wakes the loop.
    /// - Returns: `.busy` while messages keep coming (the poll must not block), `.settled` once
    ///   the flag is clear and the ring empty, `.closed` once the inbox has closed.
    @inlinable
    func settle() -> InboxSettling {
        // While senders stream, the look stops `streamingLag` messages short of the newest one
        // claimed: taking the cells they are writing would pull those cache lines away from them
        // on every message. The rest come at the next look, a turn later; a stream that has
        // stopped is taken whole.
        let waiting = ring.enqueuePosition.pointee.load(ordering: .relaxed) &- dequeuePosition
        let limit = waiting > streamingLag ? Swift.min(budget, waiting &- streamingLag) : budget
        let (delivered, exhausted) = deliverBatch(limit: limit)
        if ring.isClosed.pointee.load(ordering: .sequentiallyConsistent) { return .closed }
        if delivered > 0 || exhausted { return .busy }
        ring.wakePending.pointee.store(false, ordering: .sequentiallyConsistent)
        // Pairs with the senders' fence (and `close()`'s): either this look sees their message
        // (or the close), or they see the flag clear and wake the loop.
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        if ring.isClosed.pointee.load(ordering: .sequentiallyConsistent) { return .closed }
        if ring.isPublished(at: dequeuePosition) {
            // A sender published after the last look and may have skipped its wake-up.
            ring.wakePending.pointee.store(true, ordering: .sequentiallyConsistent)
            return .busy
        }
        isUnsettled = false
        return .settled
    }

    /// Delivers the published messages in order, at most `limit` of them.
    /// - Returns: how many it took (tombstones included), and whether it stopped at `limit`.
    @inlinable
    func deliverBatch(limit: Int) -> (delivered: Int, exhausted: Bool) {
        var position = dequeuePosition
        var remaining = limit
        while remaining > 0, let message = ring.pop(at: position) {
            position &+= 1
            remaining -= 1
            // Stored before the receiver runs: a receiver that shuts the loop down runs `finish`
            // re-entrantly, which continues from here.
            dequeuePosition = position
            if let message { receiver(message) }
        }
        return (limit - remaining, remaining == 0)
    }

    /// Delivers everything sent before the close and closes the handle; run once, when the inbox
    /// was closed or the loop shuts down.
    @usableFromInline
    func finish(wake: WakeHandle) {
        ring.isClosed.pointee.store(true, ordering: .sequentiallyConsistent)
        // Every cell claimed before this read is published soon (as a message or a tombstone); a
        // sender that claims a later one sees `isClosed` and backs out.
        let end = ring.enqueuePosition.pointee.load(ordering: .sequentiallyConsistent)
        var position = dequeuePosition
        while position != end {
            guard let message = ring.pop(at: position) else {
                sched_yield() // a sender between claiming this cell and publishing it
                continue
            }
            position &+= 1
            dequeuePosition = position
            if let message { receiver(message) }
        }
        // No sender may be inside `WakeHandle.send()` once the handle closes (it writes to the
        // eventfd that closing releases): from here on the flag stays set, so no new sender
        // tries, and those that did are waited for.
        ring.wakePending.pointee.store(true, ordering: .sequentiallyConsistent)
        while ring.wakersInFlight.pointee.load(ordering: .sequentiallyConsistent) != 0 { sched_yield() }
        wake.close()
    }
}
