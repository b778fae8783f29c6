import Synchronization

/// The shared half of an `Inbox`: a bounded, lock-free, multi-producer single-consumer ring
/// (Dmitry Vyukov's bounded queue), plus the flags that make a burst of sends cost one wake-up and
/// that close the inbox without losing a message.
///
/// Each cell carries a sequence number. A producer claims position `p` by advancing `enqueuePosition`
/// with one compare-and-swap, writes the message, and publishes it by storing `p + 1` into the
/// cell's sequence (release); the consumer reads a cell once its sequence says it is published
/// (acquire) and frees it by storing `p + capacity`. No lock, and in steady state no allocation.
///
/// Closing never loses an accepted message: a producer checks `isClosed` after it has claimed its
/// cell. If the inbox closed in between, it publishes the cell empty (a tombstone) and throws. The
/// consumer's final drain reads `enqueuePosition` after setting `isClosed`, and waits for every cell
/// claimed before that point to be published. A cell claimed later belongs to a producer that will
/// see the flag.
///
/// `@unchecked Sendable` is safe because every field shared between threads is atomic except the
/// cells' messages, and a message is handed from one thread to the other only through its cell's
/// sequence number (a release store after writing, an acquire load before reading), so no two
/// threads ever touch one message at once. The cell pointers themselves never change.
///
/// `@usableFromInline` so that `Inbox.send` is specialised for the message type in the sender's
/// module: unspecialised, each send would look up generic metadata at run time.
@usableFromInline
final class InboxRing<Message: Sendable>: @unchecked Sendable {
    /// What a producer's attempt to claim a cell found.
    @usableFromInline
    enum PushResult {
        case pushed
        case full
        case closed
    }

    @usableFromInline let capacity: Int
    @usableFromInline let mask: Int
    /// Each cell's sequence number. Apart from the messages: a Swift access to a whole cell
    /// (sequence and message) would overlap the other side's atomic access to its sequence.
    @usableFromInline let sequences: UnsafeMutablePointer<Atomic<Int>>
    /// Each cell's message: written by the producer that claimed the cell before it publishes the
    /// sequence, read by the consumer after it has seen it, never touched by two threads at once.
    @usableFromInline let messages: UnsafeMutablePointer<Message?>

    /// The next position a producer claims. Producers only; the consumer reads it when closing.
    @usableFromInline let enqueuePosition = Atomic<Int>(0)
    /// Set once; a producer that sees it after claiming a cell publishes a tombstone and throws.
    @usableFromInline let isClosed = Atomic<Bool>(false)
    /// A wake-up has been sent and the consumer has not started draining yet: later sends skip
    /// `uv_async_send`. Set for good when the handle closes.
    @usableFromInline let wakePending = Atomic<Bool>(false)
    /// Senders that may be about to call `uv_async_send`; closing the handle waits for zero.
    @usableFromInline let wakersInFlight = Atomic<Int>(0)

    @inlinable
    init(capacity: Int) {
        precondition(capacity > 0 && capacity & (capacity - 1) == 0, "UVLoop: inbox capacity must be a power of two")
        self.capacity = capacity
        mask = capacity - 1
        sequences = .allocate(capacity: capacity)
        messages = .allocate(capacity: capacity)
        for index in 0..<capacity { (sequences + index).initialize(to: Atomic(index)) }
        messages.initialize(repeating: nil, count: capacity)
    }

    @inlinable
    deinit {
        sequences.deinitialize(count: capacity)
        sequences.deallocate()
        messages.deinitialize(count: capacity)
        messages.deallocate()
    }

    /// Claims a cell and stores `message` in it, or says why it could not.
    @inlinable
    func push(_ message: Message) -> PushResult {
        var position = enqueuePosition.load(ordering: .relaxed)
        while true {
            let index = position & mask
            let sequence = sequences[index].load(ordering: .acquiring)
            if sequence == position {
                let (exchanged, current) = enqueuePosition.weakCompareExchange(
                    expected: position, desired: position &+ 1, ordering: .relaxed)
                if exchanged {
                    // Sequentially consistent, so that a close either happened before this read
                    // (then this producer backs out) or its drain waits for this cell.
                    let closed = isClosed.load(ordering: .sequentiallyConsistent)
                    messages[index] = closed ? nil : message
                    sequences[index].store(position &+ 1, ordering: .releasing)
                    return closed ? .closed : .pushed
                }
                position = current
            } else if sequence < position {
                if isClosed.load(ordering: .relaxed) { return .closed }
                return .full
            } else {
                position = enqueuePosition.load(ordering: .relaxed)
            }
        }
    }

    /// Wakes the consumer unless a wake-up is already pending. Called after every push, and by
    /// `Inbox.close()` (so that the consumer finishes).
    @inlinable @inline(__always)
    func wakeIfNeeded(_ wake: WakeHandle) {
        // The push must be visible before the flag is read: the consumer clears the flag and then
        // looks at the ring, so either it sees this message or this sender sees the flag clear.
        atomicMemoryFence(ordering: .sequentiallyConsistent)
        guard !wakePending.load(ordering: .relaxed) else { return }
        wakersInFlight.add(1, ordering: .sequentiallyConsistent)
        if !wakePending.exchange(true, ordering: .sequentiallyConsistent) { wake.send() }
        wakersInFlight.subtract(1, ordering: .releasing)
    }

    /// The consumer's half: the message at `position` once it is published (`.some(nil)` for a
    /// tombstone), or `nil` when the producer that claimed it has not published it yet.
    @inlinable
    func pop(at position: Int) -> Message?? {
        let index = position & mask
        guard sequences[index].load(ordering: .acquiring) == position &+ 1 else { return nil }
        let message = messages[index].take()
        sequences[index].store(position &+ capacity, ordering: .releasing)
        return .some(message)
    }
}
