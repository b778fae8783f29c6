/// One bit per timer slot: the timer queue's record of which slots hold a scheduled timer, and of
/// which hold a dead entry. A million slots take 128 KiB, which stays in cache while compaction
/// walks entries whose slots do not.
struct SlotBitmap: ~Copyable {
    private var words = NoncopyableArray<UInt64>()

    /// Grows the bitmap to hold `count` slots (new bits clear).
    mutating func reserve(_ count: Int) {
        while words.count * 64 < count { words.append(0) }
    }

    @inline(__always)
    func contains(_ slot: UInt32) -> Bool {
        words[Int(slot >> 6)] & (1 &<< UInt64(slot & 63)) != 0
    }

    @inline(__always)
    mutating func insert(_ slot: UInt32) {
        words[Int(slot >> 6)] |= 1 &<< UInt64(slot & 63)
    }

    @inline(__always)
    mutating func remove(_ slot: UInt32) {
        words[Int(slot >> 6)] &= ~(1 &<< UInt64(slot & 63))
    }

    /// Clears every bit.
    mutating func removeAll() {
        for index in 0..<words.count where words[index] != 0 { words[index] = 0 }
    }

    /// Clears every bit, appending each slot that was set to `list`, highest first.
    mutating func removeAll(into list: inout NoncopyableArray<UInt32>) {
        var index = words.count
        while index > 0 {
            index -= 1
            var bits = words[index]
            if bits == 0 { continue }
            words[index] = 0
            while bits != 0 {
                let bit = 63 - bits.leadingZeroBitCount
                bits &= ~(1 &<< UInt64(bit))
                list.append(UInt32(index * 64 + bit))
            }
        }
    }
}
