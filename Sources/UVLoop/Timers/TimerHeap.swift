/// A 4-ary min-heap of timer entries in (deadline, schedule order): O(log n) to push and to pop.
///
/// The entries alone live in one array, with no positions kept anywhere else, so a sift touches
/// nothing but the heap. Four children per node make the heap half as deep as a binary one. Loop
/// thread only (it belongs to the `TimerQueue`).
struct TimerHeap: ~Copyable {
    private var entries = NoncopyableArray<TimerEntry>()

    var isEmpty: Bool { entries.isEmpty }

    var count: Int { entries.count }

    /// The earliest entry, left in place.
    var top: TimerEntry? { entries.isEmpty ? nil : entries[0] }

    mutating func push(_ entry: TimerEntry) {
        entries.append(entry)
        siftUp(from: entries.count - 1)
    }

    /// Removes the earliest entry; the heap must not be empty.
    mutating func removeTop() {
        let last = entries.removeLast()
        guard !entries.isEmpty else { return }
        entries[0] = last
        siftDown(from: 0)
    }

    /// Keeps the entries for which `isKept` is true, then restores the order with Floyd's heap
    /// construction: O(n) in all.
    mutating func keepOnly(_ isKept: (TimerEntry) -> Bool) {
        var kept = 0
        for index in 0..<entries.count where isKept(entries[index]) {
            entries[kept] = entries[index]
            kept += 1
        }
        entries.removeLast(entries.count - kept)
        if entries.count > 1 {
            for index in stride(from: (entries.count - 2) / 4, through: 0, by: -1) { siftDown(from: index) }
        }
    }

    /// Appends every entry, in no particular order, to `list`.
    func appendEntries(to list: inout [TimerEntry]) {
        for index in 0..<entries.count { list.append(entries[index]) }
    }

    /// Removes every entry and gives the storage back.
    mutating func removeAll() {
        entries.removeAll(keepingCapacity: false)
    }

    private mutating func siftUp(from start: Int) {
        var index = start
        let entry = entries[index]
        while index > 0 {
            let parent = (index - 1) / 4
            let parentEntry = entries[parent]
            guard entry.fires(before: parentEntry) else { break }
            entries[index] = parentEntry
            index = parent
        }
        entries[index] = entry
    }

    private mutating func siftDown(from start: Int) {
        var index = start
        let entry = entries[index]
        let count = entries.count
        while true {
            let firstChild = 4 * index + 1
            if firstChild >= count { break }
            var best = firstChild
            let lastChild = min(firstChild + 4, count)
            var child = firstChild + 1
            while child < lastChild {
                if entries[child].fires(before: entries[best]) { best = child }
                child += 1
            }
            guard entries[best].fires(before: entry) else { break }
            entries[index] = entries[best]
            index = best
        }
        entries[index] = entry
    }
}
