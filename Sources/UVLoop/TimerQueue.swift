/// What a scheduled timer runs when it fires.
enum TimerWork: Sendable {
    case closure(@Sendable () -> Void)
    /// An `await loop.sleep(for:)`: resumed when it fires, failed when the loop shuts down.
    case sleeper(SleepWaiter)
    /// A `loop.ticks(every:)` sequence: handed each tick, finished when the loop shuts down.
    case ticker(TickWaiter)
}

/// The loop's pending timers: an indexed 4-ary min-heap on (deadline, sequence) plus a slab of
/// slots that hold each timer's work. Start and pop are O(log n) with no allocation once the
/// arrays have grown.
///
/// Cancel is O(1): it takes the work out of the slot (so what the closure captured is released at
/// once) and leaves a dead entry in the heap, skipped when it reaches the top. When dead entries
/// outnumber live ones the heap is rebuilt without them in O(n), so cancelling costs amortized O(1)
/// and the heap never holds more than twice the live timers. A cancel-heavy workload (timeouts
/// that are almost always cancelled) thus never walks the heap on cancel.
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

    /// Fields in this order pack into 32 bytes (the optional work's tag byte shares a word with
    /// the heap index); the other orders take 40.
    struct Slot {
        /// The timer's work; nil once cancelled or fired early (a dead heap entry).
        var work: TimerWork?
        /// Position in `heap`, or -1 while the timer's callback runs (popped, not yet freed).
        var heapIndex: Int32
        var timer: LoopTimer?
    }

    private(set) var heap: [Entry] = []
    private var slots: [Slot] = []
    private var freeSlots: [Int32] = []
    /// The sequence number the next insertion gets: timers scheduled from now on compare later.
    private(set) var nextSequence: UInt64 = 0

    /// Entries in `heap` whose timer was cancelled or fired early (their slot has no work).
    private var deadCount = 0

    /// The number of live (pending) timers.
    var count: Int { heap.count - deadCount }

    /// The earliest live deadline; drops dead entries from the top first.
    var earliestDeadline: UInt64? {
        mutating get {
            while let first = heap.first, slots[Int(first.slot)].work == nil {
                removeEntry(at: 0)
                _ = free(slot: first.slot)
                deadCount -= 1
            }
            return heap.first?.deadline
        }
    }

    mutating func insert(_ timer: LoopTimer, deadline: UInt64, work: TimerWork) {
        let slot: Int32
        if let reused = freeSlots.popLast() {
            slot = reused
            slots[Int(slot)] = Slot(work: work, heapIndex: -1, timer: timer)
        } else {
            slot = Int32(slots.count)
            slots.append(Slot(work: work, heapIndex: -1, timer: timer))
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

    /// Takes a pending timer off the schedule; returns its work for the caller to drop (or run).
    /// Returns nil when the timer is not scheduled, or is running its callback right now (then the
    /// firing code frees it when the callback returns). The heap entry stays behind, dead.
    mutating func remove(_ timer: LoopTimer) -> TimerWork? {
        let slot = timer.slot.load(ordering: .relaxed)
        guard slot >= 0, slots[Int(slot)].timer === timer, slots[Int(slot)].heapIndex >= 0,
              let work = slots[Int(slot)].work else { return nil }
        slots[Int(slot)].work = nil
        deadCount += 1
        if deadCount > 64 && deadCount > heap.count / 2 { dropDeadEntries() }
        return work
    }

    /// Rebuilds the heap from its live entries (Floyd's heap construction, O(n)).
    private mutating func dropDeadEntries() {
        var live: [Entry] = []
        live.reserveCapacity(heap.count - deadCount)
        for entry in heap {
            if slots[Int(entry.slot)].work == nil {
                _ = free(slot: entry.slot)
            } else {
                live.append(entry)
            }
        }
        heap = live
        deadCount = 0
        for index in heap.indices { slots[Int(heap[index].slot)].heapIndex = Int32(index) }
        if heap.count > 1 {
            for index in stride(from: (heap.count - 2) / 4, through: 0, by: -1) { siftDown(from: index) }
        }
    }

    /// Pops the earliest timer if it is due at `now` and was scheduled before `sequenceLimit`;
    /// its slot stays allocated (heap index -1) until `free(slot:)`.
    mutating func popDue(now: UInt64, sequenceLimit: UInt64) -> Entry? {
        while let first = heap.first, first.deadline <= now, first.sequence < sequenceLimit {
            removeEntry(at: 0)
            if slots[Int(first.slot)].work == nil {
                _ = free(slot: first.slot)
                deadCount -= 1
                continue
            }
            return first
        }
        return nil
    }

    func timer(at slot: Int32) -> LoopTimer { slots[Int(slot)].timer! }

    func work(at slot: Int32) -> TimerWork? { slots[Int(slot)].work }

    /// Frees a slot and returns its work for the caller to run or drop.
    mutating func free(slot: Int32) -> TimerWork? {
        let work = slots[Int(slot)].work
        slots[Int(slot)].timer?.slot.store(-1, ordering: .relaxed)
        slots[Int(slot)] = Slot(work: nil, heapIndex: -1, timer: nil)
        freeSlots.append(slot)
        return work
    }

    /// Empties the queue, returning every pending timer with its work, in firing order.
    mutating func removeAll() -> [(LoopTimer, TimerWork?)] {
        var ordered = heap.filter { slots[Int($0.slot)].work != nil }
        ordered.sort { $0.fires(before: $1) }
        let result = ordered.map { entry in (slots[Int(entry.slot)].timer!, slots[Int(entry.slot)].work) }
        for entry in ordered { slots[Int(entry.slot)].timer?.slot.store(-1, ordering: .relaxed) }
        for entry in heap { slots[Int(entry.slot)].timer?.slot.store(-1, ordering: .relaxed) }
        heap.removeAll()
        slots.removeAll()
        freeSlots.removeAll()
        deadCount = 0
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
