// Scheduling: taking a slot, adding a timer's entry to the run, the wheel or the heap, moving a
// pending timer to a new deadline.

extension TimerQueue {
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

    mutating func store(
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

    mutating func grow(toCover slot: UInt32) {
        while slots.count <= Int(slot) { slots.append(Slot(work: nil, repetition: .none)) }
        scheduled.reserve(slots.count)
        dead.reserve(slots.count)
        rescheduled.reserve(slots.count)
    }

    mutating func enqueue(slot: UInt32, deadline: UInt64) {
        scheduled.insert(slot)
        count += 1
        place(slot: slot, deadline: deadline)
    }

    /// Adds an entry for `slot`, which becomes the slot's live one.
    mutating func place(slot: UInt32, deadline: UInt64) {
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
    func extendsRun(_ entry: TimerEntry) -> Bool {
        runStart == run.count || !entry.fires(before: run[run.count - 1])
    }

    /// Appends to the run, first moving it to the front of its storage if that is full and at
    /// least half of it has left (amortized O(1): each entry moved is paid for by one that left).
    @inline(__always)
    mutating func appendToRun(_ entry: TimerEntry) {
        if run.count == run.capacity && runStart > 0 && runStart >= run.count / 2 {
            run.removeFirst(runStart)
            runStart = 0
        }
        run.append(entry)
    }

    /// Adds an entry due by the wheel's current tick to the run or, out of order, the heap.
    mutating func addNear(_ entry: TimerEntry) {
        if extendsRun(entry) {
            appendToRun(entry)
        } else {
            heap.push(entry)
        }
    }

    /// Moves the wheel's current tick forward to `tick`, taking out the buckets it reaches: due
    /// entries go to the run or the heap, dead ones are dropped, the rest move down the wheel.
    mutating func advanceWheel(to tick: UInt64) {
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
}
