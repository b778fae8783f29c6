/// A set of memory addresses that are multiples of 16, kept as one bit per 16 bytes of the
/// 64 KiB regions that hold at least one of them: what a process-wide record of many live heap
/// objects costs least as (a bit where a hash set keeps a word and its empty buckets), and where
/// adding, removing and asking cost a binary search over the regions and a bit operation, with
/// no hashing.
///
/// An address that is not a multiple of 16 is never a member. A region whose last member goes
/// keeps its bits while only a few regions are empty (so that a member added and removed over
/// and over does not make and free a region each time), and is given back beyond that.
/// Not thread-safe: callers hold a lock.
struct AddressBitmap {
    private static let regionShift = 16
    private static let granularityShift = 4
    private static let wordsPerRegion = (1 << (regionShift - granularityShift)) / 64
    /// How many regions with no member are kept for reuse.
    static let emptyRegionsKept = 16

    private struct Region {
        let number: UInt
        var words: [UInt64]
        var count = 0

        init(number: UInt) {
            self.number = number
            words = [UInt64](repeating: 0, count: AddressBitmap.wordsPerRegion)
        }
    }

    /// Sorted by number.
    private var regions: [Region] = []
    private var emptyRegions = 0

    init() {}

    /// How many regions have bits (for tests).
    var regionCount: Int { regions.count }

    /// Whether `address` is a member.
    func contains(_ address: UInt) -> Bool {
        guard let (word, bit) = Self.position(address), case (true, let index) = find(address >> Self.regionShift) else {
            return false
        }
        return regions[index].words[word] & bit != 0
    }

    /// Adds `address`, a multiple of 16.
    /// - Returns: whether it was not a member before.
    @discardableResult
    mutating func insert(_ address: UInt) -> Bool {
        guard let (word, bit) = Self.position(address) else {
            preconditionFailure("UVLoop internal error: an address kept by AddressBitmap must be a multiple of 16")
        }
        let number = address >> Self.regionShift
        let index: Int
        switch find(number) {
        case (true, let found): index = found
        case (false, let insertion):
            regions.insert(Region(number: number), at: insertion)
            emptyRegions += 1
            index = insertion
        }
        guard regions[index].words[word] & bit == 0 else { return false }
        regions[index].words[word] |= bit
        if regions[index].count == 0 { emptyRegions -= 1 }
        regions[index].count += 1
        return true
    }

    /// Removes `address`.
    /// - Returns: whether it was a member.
    @discardableResult
    mutating func remove(_ address: UInt) -> Bool {
        guard let (word, bit) = Self.position(address), case (true, let index) = find(address >> Self.regionShift),
            regions[index].words[word] & bit != 0
        else { return false }
        regions[index].words[word] &= ~bit
        regions[index].count -= 1
        if regions[index].count == 0 {
            if emptyRegions >= Self.emptyRegionsKept {
                regions.remove(at: index)
            } else {
                emptyRegions += 1
            }
        }
        return true
    }

    /// The word and bit of `address` within its region; nil when it is not a multiple of 16.
    private static func position(_ address: UInt) -> (Int, UInt64)? {
        guard address & ((1 << granularityShift) - 1) == 0 else { return nil }
        let slot = Int(truncatingIfNeeded: (address & ((1 << regionShift) - 1)) >> granularityShift)
        return (slot >> 6, 1 << UInt64(slot & 63))
    }

    /// Where region `number` is (true and its index), or where it would be inserted (false).
    private func find(_ number: UInt) -> (Bool, Int) {
        var low = 0
        var high = regions.count
        while low < high {
            let middle = (low + high) / 2
            let found = regions[middle].number
            if found == number { return (true, middle) }
            if found < number { low = middle + 1 } else { high = middle }
        }
        return (false, low)
    }
}
