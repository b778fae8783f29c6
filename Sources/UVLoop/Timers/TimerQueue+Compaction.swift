// Compaction: dropping dead entries at the fronts, and all of them at once when dead entries
// outnumber live ones.

extension TimerQueue {
    /// Drops dead entries at the front of the run and the top of the heap, freeing their slots.
    mutating func dropDeadFronts() {
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
    mutating func dropDeadEntries() {
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
}
