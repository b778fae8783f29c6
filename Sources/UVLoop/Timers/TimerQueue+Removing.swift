// Removing: cancelling a scheduled timer, popping the due ones in (deadline, sequence) order,
// freeing a popped timer's slot, emptying the queue.

extension TimerQueue {
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
}
