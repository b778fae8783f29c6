import Glibc
import Synchronization

/// A zero-allocation posting path: values of one `Sendable` type, sent from any thread, delivered
/// in order to one receiver on the loop's thread.
///
/// Each value is stored inline in a fixed ring that both sides reuse, so `send` never allocates
/// and takes no lock (a closure post allocates the closure's context). The inbox has its own
/// wake-up handle (an eventfd, one file descriptor per open inbox); a burst of sends wakes the
/// loop once. Values sent by one thread are received in sending order; the order relative to
/// `Loop.post` and to other inboxes is not specified.
/// Each wake-up delivers at most the loop's `postBudget` values before the loop polls again.
///
/// The ring holds `capacity` values. When it is full, a send from another thread waits (yielding
/// its CPU) until the loop has taken some; a send from the loop's own thread cannot wait for
/// itself, so it throws `LoopError.inboxFull` instead.
///
/// ```swift
/// let counter = LoopBound(0, loop: loop)
/// let inbox = try loop.makeInbox(of: Int.self) { value in counter.value += value }
/// try inbox.send(42)          // any thread, no allocation, no lock
/// ```
public final class Inbox<Message: Sendable>: Sendable {
    /// The loop whose thread receives the messages.
    public let loop: Loop
    @usableFromInline let ring: InboxRing<Message>
    @usableFromInline let wake: WakeHandle

    /// How many sent values the inbox holds before `send` must wait for the loop.
    public var capacity: Int { ring.capacity }

    @usableFromInline
    init(loop: Loop, ring: InboxRing<Message>, wake: WakeHandle) {
        self.loop = loop
        self.ring = ring
        self.wake = wake
    }

    /// Sends `message` to the receiver. Callable from any thread; never runs the receiver inline.
    ///
    /// When the inbox is full, a send from another thread waits until the loop has made room.
    /// - Throws: `LoopError.shutDown` once the inbox or its loop is closed (the message was not
    ///   sent); `LoopError.inboxFull` when the inbox is full and the caller is the loop's thread.
    @inlinable
    public func send(_ message: Message) throws(LoopError) {
        while true {
            switch ring.push(message) {
            case .pushed:
                ring.wakeIfNeeded(wake)
                return
            case .closed:
                throw LoopError.shutDown
            case .full:
                try waitForRoom()
            }
        }
    }

    /// A send found the ring full: make sure the loop is draining it, then let it run.
    @usableFromInline
    func waitForRoom() throws(LoopError) {
        if loop.isOnLoopThread { throw LoopError.inboxFull(capacity: ring.capacity) }
        ring.wakeIfNeeded(wake)
        sched_yield()
    }

    /// Closes the inbox: later sends throw; messages already sent are still delivered.
    /// Callable from any thread; idempotent. The loop's shutdown closes every inbox too.
    public func close() {
        guard !ring.isClosed.pointee.exchange(true, ordering: .sequentiallyConsistent) else { return }
        // The consumer finishes (final drain, handle close) in its next callback: wake it unless a
        // wake-up is already pending (or the handle is already closed, which leaves the flag set).
        ring.wakeIfNeeded(wake)
    }

    deinit { close() }
}

extension Loop {
    /// Creates an inbox whose messages `receiver` handles on the loop's thread.
    ///
    /// Callable from any thread (from another thread it waits for the loop to create the handle).
    /// `capacity` is how many sent values the inbox holds before senders wait: a power of two;
    /// the ring takes `capacity` times the size of an optional message plus 8 bytes.
    /// - Throws: `LoopError.shutDown` once the loop has begun shutting down;
    ///   `LoopError.invalidArgument` for a capacity that is not a power of two from 2 to 2^30.
    @inlinable
    public func makeInbox<Message: Sendable>(
        of type: Message.Type = Message.self, capacity: Int = 16_384,
        receiver: @escaping @Sendable (Message) -> Void
    ) throws(LoopError) -> Inbox<Message> {
        try Self.checkInboxCapacity(capacity)
        let ring = InboxRing<Message>(capacity: capacity)
        let consumer = InboxConsumer(ring: ring, budget: postBudget, receiver: receiver)
        // Closures made here, in the caller's module, so that the consumer's loop is specialised
        // for the message type (unspecialised, each message cost several generic metadata lookups).
        let wake = try attachInbox(
            deliver: { wake in consumer.deliver(wake: wake) },
            finish: { wake in consumer.finish(wake: wake) },
            hasWaiting: { consumer.hasWaiting })
        return Inbox(loop: self, ring: ring, wake: wake)
    }

    @usableFromInline
    static func checkInboxCapacity(_ capacity: Int) throws(LoopError) {
        guard capacity >= 2, capacity <= 1 << 30, capacity & (capacity - 1) == 0 else {
            throw LoopError.invalidArgument(
                "inbox capacity \(capacity) must be a power of two between 2 and 2^30, such as 1024 or 16384")
        }
    }

    /// Creates an inbox's wake handle on the loop's thread and registers it with the loop.
    /// `deliver` runs on each wake-up and returns whether the inbox is still open; `finish` runs
    /// once, when the inbox or the loop closes; `hasWaiting` tells a stepped loop's
    /// `runUntilIdle()` that messages still wait.
    @usableFromInline
    func attachInbox(
        deliver: @escaping @Sendable (WakeHandle) -> Bool, finish: @escaping @Sendable (WakeHandle) -> Void,
        hasWaiting: @escaping @Sendable () -> Bool
    ) throws(LoopError) -> WakeHandle {
        let make: @Sendable () throws(LoopError) -> WakeHandle = { [self] () throws(LoopError) in
            guard queue.phase == .open else { throw queue.refusal }
            let state = confined.value
            let finished = LoopConfined(false)
            let key = ObjectIdentifier(finished)
            var handle: WakeHandle?
            let finishOnce = { [weak state] in
                guard !finished.value, let wake = handle else { return }
                finished.value = true
                finish(wake)
                handle = nil
                state?.inboxes[key] = nil
            }
            let wake = try WakeHandle(loop: native) {
                guard let wake = handle, !deliver(wake) else { return }
                finishOnce()
            }
            handle = wake
            if !native.isOwned { wake.unref() }
            state.inboxes[key] = (close: finishOnce, hasWaiting: hasWaiting)
            return wake
        }
        if isOnLoopThread { return try make() }
        return try invoke { Result { () throws(LoopError) in try make() } }.get()
    }

    /// The loop's per-wake-up budget, which an inbox's consumer also follows.
    @usableFromInline
    var postBudget: Int { confined.value.postBudget }
}
