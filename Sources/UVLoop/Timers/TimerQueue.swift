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
    private var run = NoncopyableArray<TimerEntry>()
    /// Entries before this index have left the run.
    private var runStart = 0
    private var heap = TimerHeap()
    private var wheel = TimerWheel()
    private var slots = NoncopyableArray<Slot>()
    /// The loop thread's own free slots, refilled from `shared` in batches; beyond
    /// `freeSlotsKept`, handed back to it while other threads take slots.
    private var freeSlots = NoncopyableArray<UInt32>()
    /// The slots whose timer has a live entry: scheduled and neither cancelled nor popped. A
    /// repeating timer whose callback is running has no entry and is not in here, but keeps its
    /// work.
    private var scheduled = SlotBitmap()
    /// The slots whose entry is dead (its timer was cancelled or fired early): compaction frees
    /// them in descending order, so that they are handed out again in ascending order and a burst
    /// of new timers touches memory front to back.
    private var dead = SlotBitmap()
    /// The slots that may have stale entries besides their live one (see `Moves`).
    private var rescheduled = SlotBitmap()
    /// For each slot in `rescheduled`: which entry is live, and how many it has. Meaningless for
    /// other slots, whose single entry is live exactly when the slot is in `scheduled`.
    private var moves = NoncopyableArray<Moves>()
    /// Deadlines for pending timers that had no entry when they were rescheduled (on their way
    /// from another thread, or repeating and running their callback): they apply when the timer is
    /// scheduled or re-armed.
    private var movedDeadlines: [UInt32: UInt64] = [:]
    /// The sequence number the next entry gets: timers scheduled from now on compare later.
    private(set) var nextSequence: UInt64 = 0

    /// The number of scheduled timers.
    private(set) var count = 0
    /// Dead entries; their slots are freed with them.
    private var deadCount = 0

    private static let refillBatch = 256
    private static let freeSlotsKept = 4096

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
    private var nearestDeadline: UInt64? {
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

    // MARK: scheduling

    /// A new timer id, pending and not scheduled yet (see `TimerSlots`).
    mutating func allocate() -> UInt64 {
        while true {
            if freeSlots.isEmpty { shared.refill(&freeSlots, batch: Self.refillBatch) }
            if let id = shared.activate(freeSlots.removeLast()) { return id }
        }
    }

    /// Allocates and schedules a timer; returns its id. `now` is the loop's time.
    mutating func schedule(
        deadline: UInt64, now: UInt64, repetition: TimerRepetition, work: consuming TimerWork
    ) -> UInt64 {
        let id = allocate()
        store(TimerSlots.slot(id), deadline: deadline, now: now, repetition: repetition, work: work)
        return id
    }

    /// Schedules timer `id`, allocated earlier on any thread; `now` is the loop's time. If the
    /// timer is no longer pending, frees its slot instead and hands the work back: to drop when it
    /// was cancelled on its way here, to run when `fire()` claimed it on the loop's thread before
    /// its scheduling arrived (its handle overtook the scheduling post, through an inbox or
    /// shared memory).
    mutating func insert(
        _ id: UInt64, deadline: UInt64, now: UInt64, repetition: TimerRepetition, work: consuming TimerWork
    ) -> (work: TimerWork, wasFired: Bool)? {
        let slot = TimerSlots.slot(id)
        guard shared.isPending(id) else {
            // Read before `free`, which may hand the slot to another thread for a new timer.
            let wasFired = shared.wasFired(id)
            free(slot)
            return (work, wasFired)
        }
        store(slot, deadline: deadline, now: now, repetition: repetition, work: work)
        return nil
    }

    private mutating func store(
        _ slot: UInt32, deadline: UInt64, now: UInt64, repetition: TimerRepetition, work: consuming TimerWork
    ) {
        if wheel.count == 0 { wheel.catchUp(to: TimerWheel.tick(of: now)) }
        if Int(slot) >= slots.count { grow(toCover: slot) }
        slots[Int(slot)] = Slot(work: work, repetition: repetition)
        enqueue(slot: slot, deadline: deadline)
    }

    /// Puts a repeating timer whose callback just ran back on the schedule, as a new insertion.
    mutating func reinsert(slot: UInt32, deadline: UInt64) {
        enqueue(slot: slot, deadline: deadline)
    }

    /// Moves pending timer `id` to `deadline`, keeping its work; returns false if it has ended.
    /// A timer with an entry gets a new one (the old turns stale); one without (on its way here,
    /// or a repeating timer inside its callback) keeps the deadline until it is scheduled: the
    /// caller asks `takeMovedDeadline` then.
    mutating func reschedule(_ id: UInt64, deadline: UInt64) -> Bool {
        guard shared.isPending(id) else { return false }
        let slot = TimerSlots.slot(id)
        guard Int(slot) < slots.count, scheduled.contains(slot) else {
            movedDeadlines[slot] = deadline
            return true
        }
        if !rescheduled.contains(slot) {
            rescheduled.insert(slot)
            while moves.count <= Int(slot) { moves.append(Moves(liveSequence: 0, entries: 0)) }
            moves[Int(slot)] = Moves(liveSequence: 0, entries: 1)
        }
        // The old entry is stale from here on: it counts as dead until it is dropped.
        deadCount += 1
        place(slot: slot, deadline: deadline)
        if deadCount > 64 && deadCount > count { dropDeadEntries() }
        return true
    }

    /// The deadline a timer was moved to while it had no entry, if any; forgets it.
    @inline(__always)
    mutating func takeMovedDeadline(slot: UInt32) -> UInt64? {
        movedDeadlines.isEmpty ? nil : movedDeadlines.removeValue(forKey: slot)
    }

    private mutating func grow(toCover slot: UInt32) {
        while slots.count <= Int(slot) { slots.append(Slot(work: nil, repetition: .none)) }
        scheduled.reserve(slots.count)
        dead.reserve(slots.count)
        rescheduled.reserve(slots.count)
    }

    private mutating func enqueue(slot: UInt32, deadline: UInt64) {
        scheduled.insert(slot)
        count += 1
        place(slot: slot, deadline: deadline)
    }

    /// Adds an entry for `slot`, which becomes the slot's live one.
    private mutating func place(slot: UInt32, deadline: UInt64) {
        let entry = TimerEntry(deadline: deadline, sequence: nextSequence, slot: slot)
        nextSequence &+= 1
        if rescheduled.contains(slot) {
            moves[Int(slot)].liveSequence = entry.sequence
            moves[Int(slot)].entries += 1
        }
        if extendsRun(entry) {
            // In order: it never needs sorting, however far off it is.
            appendToRun(entry)
        } else if !wheel.insert(entry) {
            addNear(entry)
        }
    }

    @inline(__always)
    private func extendsRun(_ entry: TimerEntry) -> Bool {
        runStart == run.count || !entry.fires(before: run[run.count - 1])
    }

    /// Appends to the run, first moving it to the front of its storage if that is full and at
    /// least half of it has left (amortized O(1): each entry moved is paid for by one that left).
    @inline(__always)
    private mutating func appendToRun(_ entry: TimerEntry) {
        if run.count == run.capacity && runStart > 0 && runStart >= run.count / 2 {
            run.removeFirst(runStart)
            runStart = 0
        }
        run.append(entry)
    }

    /// Adds an entry due by the wheel's current tick to the run or, out of order, the heap.
    private mutating func addNear(_ entry: TimerEntry) {
        if extendsRun(entry) {
            appendToRun(entry)
        } else {
            heap.push(entry)
        }
    }

    /// Moves the wheel's current tick forward to `tick`, taking out the buckets it reaches: due
    /// entries go to the run or the heap, dead ones are dropped, the rest move down the wheel.
    private mutating func advanceWheel(to tick: UInt64) {
        while let bucket = wheel.takeNextBucket(notAfter: tick) {
            for position in 0..<bucket.count {
                let entry = bucket[position]
                if !isLive(entry) {
                    dropStale(entry.slot)
                } else if !wheel.insert(entry) {
                    addNear(entry)
                }
            }
        }
    }

    // MARK: removing

    /// Takes timer `id` off the schedule (its status already says cancelled or fired); returns its
    /// work for the caller to drop (or run). Returns nil when the timer is not scheduled (already
    /// gone, or still on its way from another thread), or is running its callback right now (then
    /// the firing code frees it when the callback returns). The entry stays behind, dead.
    ///
    /// `current`: the caller has just ended the timer on the loop's thread, so its slot cannot have
    /// been reused (only this thread frees and reuses slots) and the generation check is skipped.
    mutating func remove(_ id: UInt64, current: Bool = false) -> TimerWork? {
        let slot = TimerSlots.slot(id)
        guard Int(slot) < slots.count, scheduled.contains(slot), current || shared.isCurrent(id) else { return nil }
        clearScheduled(slot)
        dead.insert(slot)
        deadCount += 1
        let work = takeWork(slot)
        if deadCount > 64 && deadCount > count { dropDeadEntries() }
        return work
    }

    /// Pops the earliest timer if it is due at `now` and was scheduled before `sequenceLimit`;
    /// its slot stays allocated until `release(slot:)` (or `reinsert`).
    mutating func popDue(now: UInt64, sequenceLimit: UInt64) -> TimerEntry? {
        if TimerWheel.tick(of: now) > wheel.now { advanceWheel(to: TimerWheel.tick(of: now)) }
        while true {
            let fromRun: Bool
            let entry: TimerEntry
            if runStart < run.count {
                let head = run[runStart]
                if let top = heap.top, top.fires(before: head) {
                    fromRun = false
                    entry = top
                } else {
                    fromRun = true
                    entry = head
                }
            } else if let top = heap.top {
                fromRun = false
                entry = top
            } else {
                return nil
            }
            guard entry.deadline <= now, entry.sequence < sequenceLimit else { return nil }
            if fromRun { popRun() } else { heap.removeTop() }
            if isLive(entry) {
                clearScheduled(entry.slot)
                if rescheduled.contains(entry.slot) { entryLeft(entry.slot) }
                return entry
            }
            dropStale(entry.slot)
        }
    }

    func repetition(at slot: UInt32) -> TimerRepetition { slots[Int(slot)].repetition }

    /// The work of a popped slot, while its callback runs; nil if the slot holds none.
    func work(at slot: UInt32) -> TimerWork? {
        Int(slot) < slots.count ? slots[Int(slot)].work : nil
    }

    /// Frees the slot of a popped timer and returns its work for the caller to run or drop. A slot
    /// with stale entries left is freed when the last of them is dropped.
    mutating func release(slot: UInt32) -> TimerWork? {
        let work = slots[Int(slot)].work == nil ? nil : takeWork(slot)
        if rescheduled.contains(slot) {
            dead.insert(slot)
        } else {
            free(slot)
        }
        return work
    }

    /// Frees the slot of a timer that was allocated (on any thread) but will never be scheduled.
    mutating func abandon(_ id: UInt64) {
        free(TimerSlots.slot(id))
    }

    /// Empties the queue, returning every scheduled timer's slot with its work, in firing order.
    mutating func removeAll() -> [(slot: UInt32, work: TimerWork)] {
        var entries: [TimerEntry] = []
        for index in runStart..<run.count { entries.append(run[index]) }
        heap.appendEntries(to: &entries)
        wheel.removeAll(into: &entries)
        var live = entries.filter { isLive($0) }
        live.sort { $0.fires(before: $1) }
        var result: [(slot: UInt32, work: TimerWork)] = []
        for entry in live {
            clearScheduled(entry.slot)
            result.append((entry.slot, takeWork(entry.slot)))
            free(entry.slot)
        }
        rescheduled.removeAll()
        freeDeadSlots()
        run.removeAll(keepingCapacity: false)
        runStart = 0
        heap.removeAll()
        return result
    }

    // MARK: slots

    @inline(__always)
    private mutating func clearScheduled(_ slot: UInt32) {
        scheduled.remove(slot)
        count -= 1
    }

    /// Empties a slot and returns its work (nothing user-visible is released here: the caller
    /// drops the returned work).
    private mutating func takeWork(_ slot: UInt32) -> TimerWork {
        slots.exchange(at: Int(slot), with: Slot(work: nil, repetition: .none)).work!
    }

    /// Whether `entry` is its timer's live entry: the timer is scheduled and, if it was
    /// rescheduled, this is its latest entry.
    @inline(__always)
    private func isLive(_ entry: TimerEntry) -> Bool {
        Self.isLive(entry, scheduled: scheduled, rescheduled: rescheduled, moves: moves)
    }

    /// `isLive` on the parts it reads, for closures that run while the wheel or heap is changing.
    @inline(__always)
    private static func isLive(
        _ entry: TimerEntry, scheduled: borrowing SlotBitmap, rescheduled: borrowing SlotBitmap,
        moves: borrowing NoncopyableArray<Moves>
    ) -> Bool {
        scheduled.contains(entry.slot)
            && (!rescheduled.contains(entry.slot) || moves[Int(entry.slot)].liveSequence == entry.sequence)
    }

    /// Accounts for a dead or stale entry of `slot` that was just dropped, freeing the slot once
    /// no entry of a dead timer is left.
    @inline(__always)
    private mutating func dropStale(_ slot: UInt32) {
        guard rescheduled.contains(slot) else {
            dead.remove(slot)
            deadCount -= 1
            free(slot)
            return
        }
        deadCount -= 1
        entryLeft(slot)
    }

    /// One entry of rescheduled `slot` left the queue; after the last one the slot is an ordinary
    /// slot again, and freed if its timer has ended.
    private mutating func entryLeft(_ slot: UInt32) {
        moves[Int(slot)].entries -= 1
        guard moves[Int(slot)].entries == 0 else { return }
        rescheduled.remove(slot)
        if dead.contains(slot) {
            dead.remove(slot)
            free(slot)
        }
    }

    /// Frees the slots of every dead entry (all dropped), highest first: `allocate` hands them out
    /// again lowest first.
    private mutating func freeDeadSlots() {
        dead.removeAll(into: &freeSlots)
        deadCount = 0
        handBackIfWanted()
    }

    private mutating func free(_ slot: UInt32) {
        if !movedDeadlines.isEmpty { movedDeadlines[slot] = nil }
        freeSlots.append(slot)
        handBackIfWanted()
    }

    @inline(__always)
    private mutating func handBackIfWanted() {
        if shared.isWanted && freeSlots.count > Self.freeSlotsKept {
            shared.takeBack(&freeSlots, keeping: Self.freeSlotsKept)
        }
    }

    // MARK: compaction

    /// Drops dead entries at the front of the run and the top of the heap, freeing their slots.
    private mutating func dropDeadFronts() {
        while runStart < run.count, !isLive(run[runStart]) {
            dropStale(run[runStart].slot)
            popRun()
        }
        while let top = heap.top, !isLive(top) {
            dropStale(top.slot)
            heap.removeTop()
        }
    }

    /// Removes every dead and stale entry, keeping the run's order, and rebuilds the heap: O(n),
    /// reading the entries in order and one bit per entry (two, and the slot's `Moves`, for the
    /// slots of rescheduled timers). Afterwards every timer has one entry again.
    private mutating func dropDeadEntries() {
        wheel.keepOnly { Self.isLive($0, scheduled: scheduled, rescheduled: rescheduled, moves: moves) }
        var kept = 0
        for index in runStart..<run.count where isLive(run[index]) {
            run[kept] = run[index]
            kept += 1
        }
        run.removeLast(run.count - kept)
        runStart = 0
        heap.keepOnly { Self.isLive($0, scheduled: scheduled, rescheduled: rescheduled, moves: moves) }
        rescheduled.removeAll()
        freeDeadSlots()
    }

    // MARK: the run

    private mutating func popRun() {
        runStart += 1
        if runStart == run.count {
            run.removeAll(keepingCapacity: true)
            runStart = 0
        }
    }
}
