
/// A zero-allocation posting path: values of one `Sendable` type, sent from any thread, delivered
/// in order to one receiver on the loop's thread.
///
/// Each value is stored inline in a buffer that both sides reuse, so in steady state `send`
/// allocates nothing (a closure post allocates the closure's context). The inbox has its own
/// `uv_async_t`; a burst of sends wakes the loop once. Values sent by one thread are received in
/// sending order; the order relative to `Loop.post` and to other inboxes is not specified.
/// Each wake-up delivers at most the loop's `postBudget` values before the loop polls again.
///
/// ```swift
/// let counter = LoopBound(0, loop: loop)
/// let inbox = try loop.makeInbox(of: Int.self) { value in counter.value += value }
/// try inbox.send(42)          // any thread, no allocation
/// ```
public final class Inbox<Message: Sendable>: Sendable {
    /// The loop whose thread receives the messages.
    public let loop: Loop
    private let queue: InboxQueue<Message>
    private let wake: WakeHandle

    fileprivate init(loop: Loop, queue: InboxQueue<Message>, wake: WakeHandle) {
        self.loop = loop
        self.queue = queue
        self.wake = wake
    }

    /// Sends `message` to the receiver. Callable from any thread; never runs the receiver inline.
    /// - Throws: `LoopError.shutDown` once the inbox or its loop is closed: the message was not sent.
    @inline(__always)
    public func send(_ message: Message) throws(LoopError) {
        try queue.state.withLock { [wake] (state: inout InboxQueue<Message>.State) throws(LoopError) in
            guard state.isOpen else { throw LoopError.shutDown }
            state.messages.append(message)
            if state.wakePending { return }
            state.wakePending = true
            // Sent under the lock: `finish()` closes the inbox under it before closing the handle.
            wake.send()
        }
    }

    /// Closes the inbox: later sends throw; messages already sent are still delivered.
    /// Callable from any thread; idempotent. The loop's shutdown closes every inbox too.
    public func close() {
        queue.state.withLock { [wake] state in
            guard state.isOpen else { return }
            state.isOpen = false
            wake.send()
        }
    }

    deinit { close() }
}

/// The shared half of an inbox: the messages and the wake flag.
final class InboxQueue<Message: Sendable>: Sendable {
    struct State {
        var messages: [Message] = []
        var wakePending = false
        var isOpen = true
    }

    let state = NativeMutex(State())
}

/// The loop-thread half of an inbox: swaps messages out and hands them to the receiver.
final class InboxConsumer<Message: Sendable> {
    private let queue: InboxQueue<Message>
    private let receiver: (Message) -> Void
    private let budget: Int
    private var batch: [Message] = []
    private var batchIndex = 0
    var wake: WakeHandle?
    private var closed = false

    init(queue: InboxQueue<Message>, budget: Int, receiver: @escaping (Message) -> Void) {
        self.queue = queue
        self.budget = budget
        self.receiver = receiver
    }

    /// Delivers at most `budget` messages (all when `everything`); re-wakes itself for the rest.
    func deliver(everything: Bool = false) -> Bool {
        var isOpen = true
        repeat {
            if batchIndex == batch.count {
                batch.removeAll(keepingCapacity: true)
                batchIndex = 0
                isOpen = queue.state.withLock { state in
                    swap(&state.messages, &batch)
                    state.wakePending = false
                    return state.isOpen
                }
            }
            let limit = everything || batch.count - batchIndex <= budget ? batch.count : batchIndex + budget
            while batchIndex < limit {
                let message = batch[batchIndex]
                batchIndex += 1
                receiver(message)
            }
        } while everything && (batchIndex < batch.count || !queue.state.withLock { $0.messages.isEmpty })
        if batchIndex < batch.count { wake?.send() }
        return isOpen
    }

    /// Delivers what is left and closes the handle; the closer the loop runs at shutdown.
    func finish() {
        guard !closed else { return }
        closed = true
        queue.state.withLock { $0.isOpen = false }
        _ = deliver(everything: true)
        wake?.close()
        wake = nil
    }
}

extension Loop {
    /// Creates an inbox whose messages `receiver` handles on the loop's thread.
    ///
    /// Callable from any thread (from another thread it waits for the loop to create the handle).
    /// - Throws: `LoopError.shutDown` once the loop has begun shutting down.
    public func makeInbox<Message: Sendable>(
        of type: Message.Type = Message.self, receiver: @escaping @Sendable (Message) -> Void
    ) throws(LoopError) -> Inbox<Message> {
        let make: @Sendable () throws(LoopError) -> Inbox<Message> = { [self] () throws(LoopError) in
            let phase = queue.phase
            guard phase == .open else { throw phase.refusal }
            let state = confined.value
            let queue = InboxQueue<Message>()
            let consumer = InboxConsumer(queue: queue, budget: state.postBudget, receiver: receiver)
            let key = ObjectIdentifier(consumer)
            let wake = try WakeHandle(loop: native) { [weak state] in
                guard !consumer.deliver() else { return }
                consumer.finish()
                state?.inboxClosers[key] = nil
            }
            consumer.wake = wake
            if !native.isOwned { wake.unref() }
            state.inboxClosers[key] = { consumer.finish() }
            return Inbox(loop: self, queue: queue, wake: wake)
        }
        if isOnLoopThread { return try make() }
        do {
            return try invoke { try make() }
        } catch let error as LoopError {
            throw error
        } catch {
            preconditionFailure("UVLoop: unexpected error \(error)")
        }
    }
}
