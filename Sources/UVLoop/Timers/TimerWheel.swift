/// The timers due after the current tick, in buckets by how far off they are: a hierarchical
/// timing wheel. Scheduling appends to a bucket (O(1), no comparisons); nothing is ordered until
/// its bucket comes due, and a timer cancelled before then is never ordered at all.
///
/// Time is counted in ticks of 2^20 ns (about 1 ms; entries due within the current tick go to
/// the run or the heap, which keep nanosecond order). Level
/// `L` has 64 buckets of 64^L ticks. An entry due at tick `t` sits on the level of the highest
/// 6-bit group in which `t` differs from the wheel's current tick `now`, in the bucket that this
/// group of `t` selects. So a level's non-empty buckets all lie after `now`, in index order, and
/// all lie before those of the levels above. Eight levels cover every 64-bit deadline.
///
/// `takeNextBucket` moves `now` to the start of the earliest non-empty bucket (one occupancy mask
/// per level finds it) and hands over its entries: the caller takes out those due by the new
/// `now` and inserts the others again, one level lower at least (an entry moves down at most
/// seven times). Empty buckets are skipped, so a loop that slept for an hour catches up in a few
/// steps.
struct TimerWheel: ~Copyable {
    static let tickShift: UInt64 = 20
    private static let levelShift = 6
    private static let levels = 8

    private var buckets = NoncopyableArray<NoncopyableArray<TimerEntry>>()
    /// Per level, one bit per non-empty bucket.
    private var occupied = NoncopyableArray<UInt64>()
    /// The current tick: every entry in the wheel is due after it.
    private(set) var now: UInt64 = 0
    /// Entries in the wheel, dead ones included.
    private(set) var count = 0

    init() {
        for _ in 0..<(Self.levels << Self.levelShift) { buckets.append(NoncopyableArray()) }
        for _ in 0..<Self.levels { occupied.append(0) }
    }

    @inline(__always)
    static func tick(of deadline: UInt64) -> UInt64 { deadline >> tickShift }

    /// Adds `entry` if it is due after the current tick; returns false (leaving it out) if not.
    @inline(__always)
    mutating func insert(_ entry: TimerEntry) -> Bool {
        let tick = Self.tick(of: entry.deadline)
        guard tick > now else { return false }
        let level = (63 - (tick ^ now).leadingZeroBitCount) / Self.levelShift
        let index = Int(truncatingIfNeeded: tick >> UInt64(level * Self.levelShift)) & 63
        buckets[level << Self.levelShift | index].append(entry)
        occupied[level] |= 1 &<< UInt64(index)
        count += 1
        return true
    }

    /// The first tick of the earliest non-empty bucket: no entry in the wheel is due before it.
    var nextTick: UInt64? {
        for level in 0..<Self.levels where occupied[level] != 0 {
            return bucketStart(level: level, index: occupied[level].trailingZeroBitCount)
        }
        return nil
    }

    /// Moves `now` forward to `tick` when the wheel holds nothing due by then (an empty wheel
    /// follows the clock, so that new entries land on low levels).
    mutating func catchUp(to tick: UInt64) {
        if tick > now, nextTick.map({ $0 > tick }) ?? true { now = tick }
    }

    /// If the earliest non-empty bucket starts at or before `target`: moves `now` to its start
    /// and returns its entries, which the caller must insert again or take out of the wheel.
    /// Otherwise moves `now` to `target` (nothing is due by then) and returns nil.
    mutating func takeNextBucket(notAfter target: UInt64) -> NoncopyableArray<TimerEntry>? {
        for level in 0..<Self.levels where occupied[level] != 0 {
            let index = occupied[level].trailingZeroBitCount
            let start = bucketStart(level: level, index: index)
            guard start <= target else { break }
            now = start
            occupied[level] &= ~(1 &<< UInt64(index))
            let entries = buckets.exchange(at: level << Self.levelShift | index, with: NoncopyableArray())
            count -= entries.count
            return entries
        }
        if target > now { now = target }
        return nil
    }

    /// The tick that bucket `index` of `level` starts at, given the current tick.
    private func bucketStart(level: Int, index: Int) -> UInt64 {
        let above = UInt64((level + 1) * Self.levelShift)
        return (now >> above) << above | UInt64(index) << UInt64(level * Self.levelShift)
    }

    /// Drops every entry for which `isKept` is false: O(entries), in bucket order. A bucket
    /// left empty keeps its storage for the next entries that land in it (a burst of timeouts
    /// cancelled and scheduled again costs no allocation and no fresh pages); what a wheel keeps
    /// is bounded by the most each bucket ever held.
    mutating func keepOnly(_ isKept: (TimerEntry) -> Bool) {
        for level in 0..<Self.levels {
            var mask = occupied[level]
            while mask != 0 {
                let index = mask.trailingZeroBitCount
                mask &= mask &- 1
                let bucket = level << Self.levelShift | index
                let before = buckets[bucket].count
                buckets[bucket].keepAll { isKept($0) }
                count -= before - buckets[bucket].count
                if buckets[bucket].isEmpty { occupied[level] &= ~(1 &<< UInt64(index)) }
            }
        }
    }

    /// Empties the wheel, appending every entry to `list`.
    mutating func removeAll(into list: inout [TimerEntry]) {
        for bucket in 0..<buckets.count {
            for position in 0..<buckets[bucket].count { list.append(buckets[bucket][position]) }
            buckets[bucket].removeAll(keepingCapacity: false)
        }
        for level in 0..<Self.levels { occupied[level] = 0 }
        count = 0
    }
}
