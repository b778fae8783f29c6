/// The loop's scheduled timers, in (deadline, sequence) order: a slab of slots that hold each
/// timer's work, and entries (`TimerEntry`) that point into it, in one of three places. Loop
/// thread only.
///
/// - A run: a FIFO of entries that arrived in firing order (each no earlier than the one before
///   it), however far off. Timers spread over an interval, timeouts of one length, a wheel bucket
///   coming due: most entries arrive in order, and cost O(1) to add and to pop.
/// - A timing wheel (`TimerWheel`) for entries out of order and due after the current tick
///   (about 1 ms): O(1) to schedule, and unordered until their tick comes, when they move to the
///   run or the heap.
/// - A heap (`TimerHeap`) for the entries out of order and due by the current tick: O(log n) to
///   push and to pop.
///
/// Cancel is O(1): it takes the work out of the slot (so what the closure captured is released at
/// once) and clears the slot's bit in a bitmap of scheduled timers. The entry stays behind, dead,
/// until it comes due or dead entries outnumber live ones; then all entries are compacted in
/// O(n), reading only the bitmap (one bit per slot: it stays in cache when the slots do not). So
/// cancelling costs amortized O(1), and the queue never holds more than about twice as many
/// entries as scheduled timers. A cancel-heavy workload (timeouts that are almost always
/// cancelled) thus never orders, let alone walks, its timers.
///
/// Rescheduling (moving a pending timer to a new deadline) adds a new entry for the same slot; the
/// old one stays behind, stale, and is dropped like a dead entry. Slots with more than one entry
/// are marked in a second bitmap, and only for those is the entry's sequence compared with the
/// slot's live one (kept in `moves`), so timers that are never rescheduled pay one bit test.
///
/// Whether a timer is pending, fired or cancelled is not kept here but in `TimerSlots`, where any
/// thread can change it; a slot is reused (next generation) only once its entry is gone.
///
/// Mutating methods never call user code and never release user closures: they hand the work back
/// to the caller, which runs or drops it after the access ends, so a callback may schedule or
/// cancel other timers re-entrantly.
///
/// Its aspects are in files of their own: scheduling (`TimerQueue+Scheduling`), removing and
/// popping (`TimerQueue+Removing`), the slots' bookkeeping (`TimerQueue+Slots`) and compaction
/// (`TimerQueue+Compaction`). Its stored parts are internal so that they can; only these files
/// touch them.
struct TimerQueue: ~Copyable {
    /// The entries of a rescheduled slot: the live one's sequence number, and how many (live and
    /// stale) are still in the queue. The slot is freed only once the last one has left.
    struct Moves {
        var liveSequence: UInt64
        var entries: UInt32
    }

    struct Slot {
        /// Nil while the slot is free or holds a dead entry.
        var work: TimerWork?
        /// How a repeating timer repeats; `.none` for a one-shot timer.
        var repetition: TimerRepetition
    }

    /// Statuses and the slots of other threads; shared with the loop's `LoopTimer`s.
    let shared: TimerSlots
    var run = NoncopyableArray<TimerEntry>()
    /// Entries before this index have left the run.
    var runStart = 0
    var heap = TimerHeap()
    var wheel = TimerWheel()
    var slots = NoncopyableArray<Slot>()
    /// The loop thread's own free slots, refilled from `shared` in batches; beyond
    /// `freeSlotsKept`, handed back to it while other threads take slots.
    var freeSlots = NoncopyableArray<UInt32>()
    /// The slots whose timer has a live entry: scheduled and neither cancelled nor popped. A
    /// repeating timer whose callback is running has no entry and is not in here, but keeps its
    /// work.
    var scheduled = SlotBitmap()
    /// The slots whose entry is dead (its timer was cancelled or fired early): compaction frees
    /// them in descending order, so that they are handed out again in ascending order and a burst
    /// of new timers touches memory front to back.
    var dead = SlotBitmap()
    /// The slots that may have stale entries besides their live one (see `Moves`).
    var rescheduled = SlotBitmap()
    /// For each slot in `rescheduled`: which entry is live, and how many it has. Meaningless for
    /// other slots, whose single entry is live exactly when the slot is in `scheduled`.
    var moves = NoncopyableArray<Moves>()
    /// Deadlines for pending timers that had no entry when they were rescheduled (on their way
    /// from another thread, or repeating and running their callback): they apply when the timer is
    /// scheduled or re-armed.
    var movedDeadlines: [UInt32: UInt64] = [:]
    /// The sequence number the next entry gets: timers scheduled from now on compare later.
    var nextSequence: UInt64 = 0

    /// The number of scheduled timers.
    var count = 0
    /// Dead entries; their slots are freed with them.
    var deadCount = 0
    /// The timers that do not keep the loop alive (`LoopTimer.setReferenced(false)`): slot to
    /// timer id. Usually empty; an entry whose timer has ended is dropped when next looked at
    /// (see `TimerQueue+Reference`).
    var unreferenced: [UInt32: UInt64] = [:]
    /// `!unreferenced.isEmpty`, what the scheduling path checks (a load of this struct's
    /// field, no look into the map's storage). Both come after the fields the queue uses on every
    /// operation, whose layout they leave as it was.
    var hasUnreferenced = false
    /// The loop's idle handle is unreferenced: its only work is due timers, all unreferenced
    /// (see `LoopEngine.updateIdleReference`).
    var idleUnreferenced = false

    static let refillBatch = 256
    static let freeSlotsKept = 4096

    init(shared: TimerSlots) {
        self.shared = shared
    }

    /// Entries in the queue, live, dead and stale (for tests of compaction).
    var entryCount: Int { run.count - runStart + heap.count + wheel.count }

    /// The earliest scheduled deadline, exactly. To find it this may take wheel buckets out ahead
    /// of the clock (harmless: later entries for those ticks go to the run or the heap), so the
    /// loop itself uses `deadlineBound` and `hasDue(at:)`; this is for the manual clock and tests.
    var earliestDeadline: UInt64? {
        mutating get {
            while true {
                let near = nearestDeadline
                guard let tick = wheel.nextTick else { return near }
                if let near, near < tick << TimerWheel.tickShift { return near }
                advanceWheel(to: tick)
            }
        }
    }

    /// No timer is due before this (nil: none is scheduled). Cheap; exact unless the earliest
    /// timer is still in the wheel, whose bucket start it then returns.
    var deadlineBound: UInt64? {
        mutating get {
            let near = nearestDeadline
            guard let tick = wheel.nextTick else { return near }
            return min(near ?? .max, tick << TimerWheel.tickShift)
        }
    }

    /// Whether a timer is due at `now`; takes due wheel buckets out first.
    mutating func hasDue(at now: UInt64) -> Bool {
        if TimerWheel.tick(of: now) > wheel.now { advanceWheel(to: TimerWheel.tick(of: now)) }
        return nearestDeadline.map { $0 <= now } ?? false
    }

    /// The earliest deadline in the run and the heap; drops dead entries from their fronts first.
    var nearestDeadline: UInt64? {
        mutating get {
            dropDeadFronts()
            let head = runStart < run.count ? run[runStart].deadline : nil
            let top = heap.top?.deadline
            switch (head, top) {
            case (let head?, let top?): return min(head, top)
            case (let head?, nil): return head
            case (nil, let top?): return top
            case (nil, nil): return nil
            }
        }
    }

    /// Takes the run's head off (its entry has been popped or dropped).
    mutating func popRun() {
        runStart += 1
        if runStart == run.count {
            run.removeAll(keepingCapacity: true)
            runStart = 0
        }
    }
}
