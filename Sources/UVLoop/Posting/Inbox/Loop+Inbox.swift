import Glibc
import Synchronization

extension Loop {
    /// Creates an inbox whose messages `receiver` handles on the loop's thread.
    ///
    /// Callable from any thread (from another thread it waits for the loop to create the handle).
    /// See ``Inbox`` for the ordering and waiting rules.
    /// - Parameters:
    ///   - type: the type of the messages.
    ///   - capacity: how many sent values the inbox holds before senders wait: a power of two;
    ///     the ring takes `capacity` times the size of an optional message plus 8 bytes.
    ///   - receiver: called on the loop's thread with each message, in sending order per thread.
    /// - Returns: the inbox, open until ``Inbox/close()`` or the loop's shutdown.
    /// - Throws: ``LoopError/shutDown`` once the loop has begun shutting down;
    ///   ``LoopError/invalidArgument(_:)`` for a capacity that is not a power of two of at least
    ///   2, or whose ring would take more than ``Loop/maximumInboxBytes``.
    @inlinable
    public func makeInbox<Message: Sendable>(
        of type: Message.Type = Message.self, capacity: Int = 16_384,
        receiver: @escaping @Sendable (Message) -> Void
    ) throws(LoopError) -> Inbox<Message> {
        try Self.checkInboxCapacity(capacity, cellBytes: InboxRing<Message>.cellStride)
        let ring = InboxRing<Message>(capacity: capacity)
        let consumer = InboxConsumer(ring: ring, budget: postBudget, receiver: receiver)
        // Closures made here, in the caller's module, so that the consumer's loop is specialised
        // for the message type (unspecialised, each message would cost generic metadata lookups).
        let wake = try attachInbox(
            deliver: { consumer.deliver() }, settle: { consumer.settle() },
            finish: { wake in consumer.finish(wake: wake) },
            hasWaiting: { consumer.hasWaiting }, waitingCount: { consumer.waitingCount })
        return Inbox(loop: self, ring: ring, wake: wake)
    }

    /// The most memory one inbox's ring may take: 1 GiB.
    public static let maximumInboxBytes = 1 << 30

    @usableFromInline
    static func checkInboxCapacity(_ capacity: Int, cellBytes: Int) throws(LoopError) {
        guard capacity >= 2, capacity & (capacity - 1) == 0 else {
            throw LoopError.invalidArgument(
                "inbox capacity \(capacity) must be a power of two of at least 2, such as 1024 or 16384")
        }
        let largest = maximumInboxBytes / cellBytes
        guard capacity <= largest else {
            let largestPowerOfTwo = largest == 0 ? 0 : 1 << (Int.bitWidth - 1 - largest.leadingZeroBitCount)
            throw LoopError.invalidArgument(
                "inbox capacity \(capacity) of \(cellBytes)-byte cells would take more than the 1 GiB an inbox may use (Loop.maximumInboxBytes); use a capacity of at most \(largestPowerOfTwo), or send smaller messages (a reference to a large value)")
        }
    }

    /// Creates an inbox's wake handle on the loop's thread and registers it with the loop.
    /// `deliver` runs on each wake-up, `settle` in each prepare phase until it returns `.settled`
    /// (see `InboxSettling`); `finish` runs once, when the inbox or the loop closes;
    /// `hasWaiting` tells a stepped loop's `runUntilIdle()` that messages still wait.
    @usableFromInline
    func attachInbox(
        deliver: @escaping @Sendable () -> InboxSettling, settle: @escaping @Sendable () -> InboxSettling,
        finish: @escaping @Sendable (WakeHandle) -> Void,
        hasWaiting: @escaping @Sendable () -> Bool, waitingCount: @escaping @Sendable () -> Int
    ) throws(LoopError) -> WakeHandle {
        let make: @Sendable () throws(LoopError) -> WakeHandle = { [self] () throws(LoopError) in
            try lifecycle.admitWork()
            let finished = LoopConfined(false)
            let key = ObjectIdentifier(finished)
            var handle: WakeHandle?
            let finishOnce = { [weak engine] in
                guard !finished.value, let wake = handle else { return }
                finished.value = true
                finish(wake)
                handle = nil
                engine?.inboxes.remove(key)
            }
            let wake = try WakeHandle(loop: native) { [weak engine] in
                guard handle != nil, let engine else { return }
                engine.inboxDelivered(key, deliver())
            }
            handle = wake
            if !native.isOwned { wake.unref() }
            engine.inboxes.add(key, InboxEntry(
                settle: settle, close: finishOnce, hasWaiting: hasWaiting, waitingCount: waitingCount))
            return wake
        }
        if isOnLoopThread { return try make() }
        return try invoke { Result { () throws(LoopError) in try make() } }.get()
    }

    /// The loop's per-wake-up budget, which an inbox's consumer also follows.
    @usableFromInline
    var postBudget: Int { engine.postBudget }
}
