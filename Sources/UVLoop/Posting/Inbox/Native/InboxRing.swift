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
/// cell. If the inbox closed in between, it publishes the cell empty (a tombstone: the sequence
/// `-(p + 1)`, which producers read as "not free yet", like a published cell) and throws. The
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
    /// The cells, `cellStride` bytes apart: each a sequence number (`Atomic<Int>`, at offset 0)
    /// followed by its message (`Message`, at `messageOffset`; initialized only while published),
    /// like C's `{seq, value}` cells, so that one cache line carries both. Sequences and messages
    /// are reached through separate pointers: a Swift access to a whole cell would overlap the
    /// other side's atomic access to its sequence. A message is written by the producer that
    /// claimed the cell before it publishes the sequence, read by the consumer after it has seen
    /// it, never touched by two threads at once.
    @usableFromInline let cells: UnsafeMutableRawPointer
    /// The counters and flags both sides touch, each on its own cache line: the producers'
    /// compare-and-swap on `enqueuePosition` would otherwise evict, on every send, the line the
    /// consumer reads this object's constant fields from, and the consumer's store to
    /// `wakePending` the line the producers claim cells on.
    @usableFromInline let sharedLines: UnsafeMutableRawPointer
    /// The next position a producer claims. Producers only; the consumer reads it when closing.
    @usableFromInline let enqueuePosition: UnsafeMutablePointer<Atomic<Int>>
    /// A wake-up has been sent, or the consumer is draining and will look again before it
    /// sleeps: later sends skip `WakeHandle.send()`. Set for good when the handle closes.
    @usableFromInline let wakePending: UnsafeMutablePointer<Atomic<Bool>>
    /// Senders that may be about to call `WakeHandle.send()`; closing the handle waits for zero.
    @usableFromInline let wakersInFlight: UnsafeMutablePointer<Atomic<Int>>
    /// Set once; a producer that sees it after claiming a cell publishes a tombstone and throws.
    @usableFromInline let isClosed: UnsafeMutablePointer<Atomic<Bool>>

    /// The bytes from one cell to the next.
    @inlinable static var cellStride: Int {
        let alignment = Swift.max(MemoryLayout<Atomic<Int>>.alignment, MemoryLayout<Message>.alignment)
        let end = messageOffset + MemoryLayout<Message>.size
        return (end + alignment - 1) / alignment * alignment
    }

    /// Where a cell's message starts, after its sequence number.
    @inlinable static var messageOffset: Int {
        let alignment = MemoryLayout<Message>.alignment
        return (MemoryLayout<Atomic<Int>>.size + alignment - 1) / alignment * alignment
    }

    /// The bytes between two shared counters: two cache lines, because x86-64 fetches lines in
    /// adjacent pairs (what C++ calls `hardware_destructive_interference_size` is 128 there too).
    @usableFromInline static var sharedLineSize: Int { 128 }

    @inlinable
    init(capacity: Int) {
        precondition(capacity > 0 && capacity & (capacity - 1) == 0, "UVLoop: inbox capacity must be a power of two")
        self.capacity = capacity
        mask = capacity - 1
        let alignment = Swift.max(64, MemoryLayout<Atomic<Int>>.alignment, MemoryLayout<Message>.alignment)
        cells = .allocate(byteCount: capacity * Self.cellStride, alignment: alignment)
        for index in 0..<capacity {
            let cell = cells + index * Self.cellStride
            cell.bindMemory(to: Atomic<Int>.self, capacity: 1).initialize(to: Atomic(index))
            _ = (cell + Self.messageOffset).bindMemory(to: Message.self, capacity: 1)
        }
        let line = Self.sharedLineSize
        sharedLines = .allocate(byteCount: 3 * line, alignment: line)
        enqueuePosition = sharedLines.bindMemory(to: Atomic<Int>.self, capacity: 1)
        enqueuePosition.initialize(to: Atomic(0))
        wakePending = (sharedLines + line).bindMemory(to: Atomic<Bool>.self, capacity: 1)
        wakePending.initialize(to: Atomic(false))
        wakersInFlight = (sharedLines + line + MemoryLayout<Atomic<Int>>.stride)
            .bindMemory(to: Atomic<Int>.self, capacity: 1)
        wakersInFlight.initialize(to: Atomic(0))
        isClosed = (sharedLines + 2 * line).bindMemory(to: Atomic<Bool>.self, capacity: 1)
        isClosed.initialize(to: Atomic(false))
    }

    @inlinable
    deinit {
        for index in 0..<capacity {
            // A published cell still holds its message (nobody is left to deliver it): its
            // sequence is one past a position that maps to this cell.
            let sequence = sequenceCell(at: index).pointee.load(ordering: .acquiring)
            if sequence > 0, (sequence &- 1) & mask == index { messageCell(at: index).deinitialize(count: 1) }
            sequenceCell(at: index).deinitialize(count: 1)
        }
        cells.deallocate()
        enqueuePosition.deinitialize(count: 1)
        wakePending.deinitialize(count: 1)
        wakersInFlight.deinitialize(count: 1)
        isClosed.deinitialize(count: 1)
        sharedLines.deallocate()
    }

    /// The sequence number of the cell at `index`.
    @inlinable @inline(__always)
    func sequenceCell(at index: Int) -> UnsafeMutablePointer<Atomic<Int>> {
        (cells + (index &* Self.cellStride)).assumingMemoryBound(to: Atomic<Int>.self)
    }

    /// The message of the cell at `index`.
    @inlinable @inline(__always)
    func messageCell(at index: Int) -> UnsafeMutablePointer<Message> {
        (cells + (index &* Self.cellStride &+ Self.messageOffset)).assumingMemoryBound(to: Message.self)
    }

    /// Claims a cell and stores `message` in it, or says why it could not.
    @inlinable @inline(__always)
    func push(_ message: Message) -> PushResult {
        var position = enqueuePosition.pointee.load(ordering: .relaxed)
        while true {
            let index = position & mask
            let sequence = sequenceCell(at: index).pointee.load(ordering: .acquiring)
            if sequence == position {
                let (exchanged, current) = enqueuePosition.pointee.weakCompareExchange(
                    expected: position, desired: position &+ 1, ordering: .relaxed)
                if exchanged {
                    // Sequentially consistent, so that a close either happened before this read
                    // (then this producer backs out) or its drain waits for this cell.
                    if isClosed.pointee.load(ordering: .sequentiallyConsistent) {
                        sequenceCell(at: index).pointee.store(-(position &+ 1), ordering: .releasing)
                        return .closed
                    }
                    messageCell(at: index).initialize(to: message)
                    sequenceCell(at: index).pointee.store(position &+ 1, ordering: .releasing)
                    return .pushed
                }
                position = current
            } else if sequence < position {
                if isClosed.pointee.load(ordering: .relaxed) { return .closed }
                return .full
            } else {
                position = enqueuePosition.pointee.load(ordering: .relaxed)
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
        guard !wakePending.pointee.load(ordering: .relaxed) else { return }
        wakersInFlight.pointee.wrappingAdd(1, ordering: .sequentiallyConsistent)
        if !wakePending.pointee.exchange(true, ordering: .sequentiallyConsistent) { wake.send() }
        wakersInFlight.pointee.wrappingSubtract(1, ordering: .releasing)
    }

    /// Whether the cell at `position` holds a published message or a tombstone: what `pop(at:)`
    /// would take. Consumer only.
    @inlinable
    func isPublished(at position: Int) -> Bool {
        let sequence = sequenceCell(at: position & mask).pointee.load(ordering: .acquiring)
        return sequence == position &+ 1 || sequence == -(position &+ 1)
    }

    /// The consumer's half: the message at `position` once it is published (`.some(nil)` for a
    /// tombstone), or `nil` when the producer that claimed it has not published it yet.
    @inlinable
    func pop(at position: Int) -> Message?? {
        let index = position & mask
        let sequence = sequenceCell(at: index).pointee.load(ordering: .acquiring)
        let message: Message?
        if sequence == position &+ 1 {
            message = messageCell(at: index).move()
        } else if sequence == -(position &+ 1) {
            message = nil
        } else {
            return nil
        }
        sequenceCell(at: index).pointee.store(position &+ capacity, ordering: .releasing)
        return .some(message)
    }
}
