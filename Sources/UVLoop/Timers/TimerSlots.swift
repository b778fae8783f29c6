import Synchronization

/// The slot numbers and status words of one loop's timers, shared by every thread that schedules
/// a timer or holds a `LoopTimer`.
///
/// A timer is a slot number plus the slot's generation when it was scheduled: `LoopTimer.id`,
/// slot in the high 32 bits, generation in the low 32. The slot's status word holds the generation
/// in its high 32 bits and the status in its low 2; a timer is pending exactly while the word is
/// its generation with status `pending`. Once a timer has run or been cancelled, its slot is
/// reused with the next generation, so a stale handle can neither see the new timer as its own nor
/// cancel it. A slot whose generation would pass `generationLimit` is retired (never handed out
/// again), so no generation repeats: that costs 8 bytes after 4 billion reuses of one slot.
///
/// The loop's thread takes slots from its own free list (in `TimerQueue`), refilled here in
/// batches, so that scheduling on the loop's thread takes no lock, and timers end on the loop's
/// thread, so their slots are freed into that list. Other threads take one slot at a time, under the
/// lock, from the shared list (creating one when it is empty), and flag that they did: the loop's
/// thread then hands back what it holds beyond a reserve, so that timers scheduled from other
/// threads reuse slots too (the table stays within the reserve plus the timers in flight), while
/// a loop-only workload never moves its free slots through the lock.
final class TimerSlots: Sendable {
    static let pending: UInt64 = 0
    static let fired: UInt64 = 1
    static let cancelled: UInt64 = 2
    /// A slot that was never handed out.
    static let unused: UInt64 = 3
    static let statusMask: UInt64 = 3

    let statuses = TimerStatusTable(initialWord: TimerSlots.unused)
    /// The largest generation a slot may have; lower only in tests (of retirement).
    let generationLimit: UInt64
    private let shared = NativeMutex(Shared())
    /// Another thread took a slot since the loop's thread last handed some back.
    private let wanted = Atomic<Bool>(false)

    private struct Shared {
        var free: [UInt32] = []
        /// Slot numbers below this have been created (their status words exist).
        var created: UInt32 = 0
    }

    init(generationLimit: UInt32 = .max) {
        self.generationLimit = UInt64(generationLimit)
    }

    // MARK: allocation

    /// A new timer, pending, for a thread other than the loop's.
    func allocate() -> UInt64 {
        while true {
            let slot = shared.withLock { shared -> UInt32 in
                wanted.store(true, ordering: .relaxed)
                return shared.free.popLast() ?? create(1, in: &shared)
            }
            if let id = activate(slot) { return id }
        }
    }

    /// Moves up to `batch` free slots into the loop thread's free list, creating slots if none is
    /// free. They come out of `local.removeLast()` in ascending order, so that a fresh loop fills its
    /// arrays front to back.
    func refill(_ local: inout NoncopyableArray<UInt32>, batch: Int) {
        shared.withLock { shared in
            if shared.free.isEmpty {
                let first = create(UInt32(batch), in: &shared)
                for slot in (first..<first + UInt32(batch)).reversed() { local.append(slot) }
            } else {
                let count = min(batch, shared.free.count)
                for slot in shared.free[(shared.free.count - count)...] { local.append(slot) }
                shared.free.removeLast(count)
            }
        }
    }

    /// Whether another thread took a slot since the last `takeBack`.
    @inline(__always)
    var isWanted: Bool { wanted.load(ordering: .relaxed) }

    /// Takes free slots back from the loop thread's list, leaving it the `keeping` it would hand
    /// out first. The two lists act as one stack (this one below), so slots freed together are
    /// handed out together, in order.
    func takeBack(_ local: inout NoncopyableArray<UInt32>, keeping: Int) {
        let surplus = local.count - keeping
        guard surplus > 0 else { return }
        shared.withLock { shared in
            for index in 0..<surplus { shared.free.append(local[index]) }
        }
        local.removeFirst(surplus)
        wanted.store(false, ordering: .relaxed)
    }

    /// Frees a slot that another thread allocated but could not schedule.
    func free(_ slot: UInt32) {
        shared.withLock { $0.free.append(slot) }
    }

    /// Starts the slot's next generation, pending; nil when the slot is retired. Only the thread
    /// that took the slot from a free list calls this (nobody else writes a free slot's word: a
    /// stale handle's compare-exchange expects `pending`).
    @inline(__always)
    func activate(_ slot: UInt32) -> UInt64? {
        let generation = (statuses.load(slot) >> 32) &+ 1
        guard generation <= generationLimit else { return nil }
        statuses.store(slot, generation << 32 | Self.pending)
        return UInt64(slot) << 32 | generation
    }

    private func create(_ count: UInt32, in shared: inout Shared) -> UInt32 {
        let first = shared.created
        misusePrecondition(count <= TimerStatusTable.slotLimit - first, "UVLoop: too many timers")
        statuses.prepare(first)
        statuses.prepare(first + count - 1)
        shared.created += count
        return first
    }

    // MARK: status

    /// The status word of a pending timer `id`.
    @inline(__always)
    static func pendingWord(_ id: UInt64) -> UInt64 { id << 32 }

    @inline(__always)
    static func slot(_ id: UInt64) -> UInt32 { UInt32(truncatingIfNeeded: id >> 32) }

    @inline(__always)
    func isPending(_ id: UInt64) -> Bool {
        statuses.load(Self.slot(id)) == Self.pendingWord(id)
    }

    /// Whether the slot's current timer is pending (loop thread, for a slot it holds).
    @inline(__always)
    func isPending(slot: UInt32) -> Bool {
        statuses.load(slot) & Self.statusMask == Self.pending
    }

    /// Ends timer `id` with `status` if it is pending; true when this call ended it.
    @inline(__always)
    func finish(_ id: UInt64, as status: UInt64) -> Bool {
        statuses.compareExchange(Self.slot(id), expected: Self.pendingWord(id), desired: Self.pendingWord(id) | status)
    }

    /// Ends the slot's current timer with `status` if it is pending (loop thread, for a slot it holds).
    @inline(__always)
    func finish(slot: UInt32, as status: UInt64) -> Bool {
        let word = statuses.load(slot)
        guard word & Self.statusMask == Self.pending else { return false }
        return statuses.compareExchange(slot, expected: word, desired: word | status)
    }

    /// Whether timer `id` was ended by `fire()` (and its slot not reused since).
    @inline(__always)
    func wasFired(_ id: UInt64) -> Bool {
        statuses.load(Self.slot(id)) == Self.pendingWord(id) | Self.fired
    }

    /// Whether `id` is the slot's current timer (pending or not).
    @inline(__always)
    func isCurrent(_ id: UInt64) -> Bool {
        statuses.load(Self.slot(id)) >> 32 == id & 0xFFFF_FFFF
    }
}
