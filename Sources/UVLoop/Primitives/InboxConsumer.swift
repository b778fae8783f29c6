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
    /// The next position to read.
    @usableFromInline var dequeuePosition = 0
    /// The last delivery stopped at its budget. Loop thread only, like `dequeuePosition`.
    @usableFromInline var isBacklogged = false

    /// Whether messages may be waiting for delivery: the last delivery stopped at its budget, or
    /// a sender has woken the loop since. Loop thread only.
    @usableFromInline
    var hasWaiting: Bool {
        isBacklogged || ring.wakePending.pointee.load(ordering: .relaxed)
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
        self.receiver = receiver
    }

    /// Delivers at most `budget` messages and returns whether the inbox is still open. When it
    /// used up the budget, it wakes itself again, so the rest follow after the loop has polled.
    ///
    /// The wake-pending flag stays set while the ring is drained and is cleared only once it is
    /// empty: senders that arrive during a drain skip their wake-up (a system call each), since
    /// this drain takes their messages. Clearing it at the start instead, as a plain
    /// wake-and-drain would, costs one wake-up per drain whenever senders keep up with the loop.
    @inlinable
    func deliver(wake: WakeHandle) -> Bool {
        var position = dequeuePosition
        var remaining = budget
        while true {
            while remaining > 0, let message = ring.pop(at: position) {
                position &+= 1
                remaining -= 1
                // Stored before the receiver runs: a receiver that shuts the loop down runs
                // `finish` re-entrantly, which continues from here.
                dequeuePosition = position
                if let message { receiver(message) }
            }
            if remaining == 0 {
                // A full budget may have left messages: they come on the next wake-up, sent here
                // (the flag stays set, so senders need not send one).
                isBacklogged = true
                wake.send()
                return !ring.isClosed.pointee.load(ordering: .sequentiallyConsistent)
            }
            isBacklogged = false
            ring.wakePending.pointee.store(false, ordering: .sequentiallyConsistent)
            // Pairs with the senders' fence (and `close()`'s): either this look sees their message
            // (or the close), or they see the flag clear and wake the loop again.
            atomicMemoryFence(ordering: .sequentiallyConsistent)
            if ring.isClosed.pointee.load(ordering: .sequentiallyConsistent) { return false }
            guard ring.isPublished(at: position) else { return true }
            // A sender published after the last look: drain again, with the flag set again so
            // that the senders after it skip their wake-ups (one that saw it clear wakes the loop
            // once more, which finds the ring empty).
            ring.wakePending.pointee.store(true, ordering: .sequentiallyConsistent)
        }
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
