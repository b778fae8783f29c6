/// What a scheduled timer runs when it fires.
enum TimerWork: Sendable {
    case closure(@Sendable () -> Void)
    /// An `await loop.sleep(for:)`: resumed when it fires, failed when the loop shuts down.
    case sleeper(SleepWaiter)
    /// A `loop.ticks(every:)` sequence: handed each tick, finished when the loop shuts down.
    case ticker(TickWaiter)
}

/// The loop's pending timers: an indexed 4-ary min-heap on (deadline, sequence) plus a slab of
/// slots that hold each timer's work. Start, cancel and pop are O(log n) with no allocation once
/// the arrays have grown; cancel finds its entry through the slot's heap index.
///
/// Mutating methods never call user code and never release user closures: they hand the work back
/// to the caller, which runs or drops it after the access ends, so a callback may schedule or
/// cancel other timers re-entrantly.
struct TimerQueue {
    struct Entry {
        var deadline: UInt64
        var sequence: UInt64
        var slot: Int32

        @inline(__always)
        func fires(before other: Entry) -> Bool {
            deadline < other.deadline || (deadline == other.deadline && sequence < other.sequence)
        }
    }

    struct Slot {
        /// Position in `heap`, or -1 while the timer's callback runs (popped, not yet freed).
        var heapIndex: Int32
        var work: TimerWork?
        var timer: LoopTimer?
    }

    private(set) var heap: [Entry] = []
    private var slots: [Slot] = []
    private var freeSlots: [Int32] = []
    /// The sequence number the next insertion gets: timers scheduled from now on compare later.
    private(set) var nextSequence: UInt64 = 0

    var count: Int { heap.count }

    var earliestDeadline: UInt64? { heap.first?.deadline }

    mutating func insert(_ timer: LoopTimer, deadline: UInt64, work: TimerWork) {
        let slot: Int32
        if let reused = freeSlots.popLast() {
            slot = reused
            slots[Int(slot)] = Slot(heapIndex: -1, work: work, timer: timer)
        } else {
            slot = Int32(slots.count)
            slots.append(Slot(heapIndex: -1, work: work, timer: timer))
        }
        timer.slot.store(slot, ordering: .relaxed)
        push(Entry(deadline: deadline, sequence: nextSequence, slot: slot))
        nextSequence &+= 1
    }

    /// Puts a repeating timer whose callback just ran back on the schedule, as a new insertion.
    mutating func reinsert(slot: Int32, deadline: UInt64) {
        push(Entry(deadline: deadline, sequence: nextSequence, slot: slot))
        nextSequence &+= 1
    }

    /// Takes a pending timer off the schedule and frees its slot; returns its work for the caller
    /// to drop. Returns nil when the timer is not scheduled, or is running its callback right now
    /// (then the firing code frees it when the callback returns).
    mutating func remove(_ timer: LoopTimer) -> TimerWork? {
        let slot = timer.slot.load(ordering: .relaxed)
        guard slot >= 0, slots[Int(slot)].timer === timer else { return nil }
        let index = slots[Int(slot)].heapIndex
        guard index >= 0 else { return nil }
        removeEntry(at: Int(index))
        return free(slot: slot)
    }

    /// Pops the earliest timer if it is due at `now` and was scheduled before `sequenceLimit`;
    /// its slot stays allocated (heap index -1) until `free(slot:)`.
    mutating func popDue(now: UInt64, sequenceLimit: UInt64) -> Entry? {
        guard let first = heap.first, first.deadline <= now, first.sequence < sequenceLimit else {
            return nil
        }
        removeEntry(at: 0)
        return first
    }

    func timer(at slot: Int32) -> LoopTimer { slots[Int(slot)].timer! }

    func work(at slot: Int32) -> TimerWork? { slots[Int(slot)].work }

    /// Frees a slot and returns its work for the caller to run or drop.
    mutating func free(slot: Int32) -> TimerWork? {
        let work = slots[Int(slot)].work
        slots[Int(slot)].timer?.slot.store(-1, ordering: .relaxed)
        slots[Int(slot)] = Slot(heapIndex: -1, work: nil, timer: nil)
        freeSlots.append(slot)
        return work
    }

    /// Empties the queue, returning every pending timer with its work, in firing order.
    mutating func removeAll() -> [(LoopTimer, TimerWork?)] {
        var ordered = heap
        ordered.sort { $0.fires(before: $1) }
        let result = ordered.map { entry in (slots[Int(entry.slot)].timer!, slots[Int(entry.slot)].work) }
        for entry in ordered { slots[Int(entry.slot)].timer?.slot.store(-1, ordering: .relaxed) }
        heap.removeAll()
        slots.removeAll()
        freeSlots.removeAll()
        return result
    }

    // MARK: heap

    private mutating func push(_ entry: Entry) {
        heap.append(entry)
        siftUp(from: heap.count - 1)
    }

    private mutating func removeEntry(at index: Int) {
        slots[Int(heap[index].slot)].heapIndex = -1
        let last = heap.removeLast()
        guard index < heap.count else { return }
        heap[index] = last
        slots[Int(last.slot)].heapIndex = Int32(index)
        if index > 0 && last.fires(before: heap[(index - 1) / 4]) {
            siftUp(from: index)
        } else {
            siftDown(from: index)
        }
    }

    private mutating func siftUp(from start: Int) {
        var index = start
        let entry = heap[index]
        while index > 0 {
            let parent = (index - 1) / 4
            let parentEntry = heap[parent]
            guard entry.fires(before: parentEntry) else { break }
            heap[index] = parentEntry
            slots[Int(parentEntry.slot)].heapIndex = Int32(index)
            index = parent
        }
        heap[index] = entry
        slots[Int(entry.slot)].heapIndex = Int32(index)
    }

    private mutating func siftDown(from start: Int) {
        var index = start
        let entry = heap[index]
        let count = heap.count
        while true {
            let firstChild = 4 * index + 1
            if firstChild >= count { break }
            var best = firstChild
            let lastChild = min(firstChild + 4, count)
            var child = firstChild + 1
            while child < lastChild {
                if heap[child].fires(before: heap[best]) { best = child }
                child += 1
            }
            guard heap[best].fires(before: entry) else { break }
            heap[index] = heap[best]
            slots[Int(heap[index].slot)].heapIndex = Int32(index)
            index = best
        }
        heap[index] = entry
        slots[Int(entry.slot)].heapIndex = Int32(index)
    }
}
