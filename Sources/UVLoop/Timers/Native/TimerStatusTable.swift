import Synchronization

/// One atomic word per timer slot of a loop, in memory that never moves, so that any thread
/// holding a `LoopTimer` can read and change its timer's status without a lock.
///
/// The words live in chunks of growing size: chunk `k` holds 4,096 << `k` slots, so 20 chunks
/// cover every `UInt32` slot number, a fixed table of 20 chunk pointers never has to grow, and a
/// loop with few timers allocates 32 KiB. A chunk is created on first need (`prepare`) and freed
/// only with the table.
///
/// `@unchecked Sendable` is safe because every word is an `Atomic`, and a chunk's pointer is
/// published with a releasing compare-exchange after its words are initialized: a thread reaches a
/// slot only through a slot number handed out after `prepare` returned for it (the handing out
/// orders the two), and loads the pointer with acquiring ordering. Chunks are freed in `deinit`,
/// when no thread holds the table (each `LoopTimer` holds its loop, which holds the table).
final class TimerStatusTable: @unchecked Sendable {
    private static let firstChunkShift = 12
    private static let chunkLimit = 20
    /// One more than the largest slot number the chunks cover (4,096 * (2^20 - 1)).
    static let slotLimit: UInt32 = (1 << firstChunkShift) * ((1 << chunkLimit) - 1)

    private let chunks: UnsafeMutablePointer<Atomic<UnsafeMutablePointer<Atomic<UInt64>>?>>
    /// The word every slot holds before it is first used.
    private let initialWord: UInt64

    init(initialWord: UInt64) {
        self.initialWord = initialWord
        chunks = .allocate(capacity: Self.chunkLimit)
        for index in 0..<Self.chunkLimit { (chunks + index).initialize(to: Atomic(nil)) }
    }

    deinit {
        for index in 0..<Self.chunkLimit {
            if let chunk = chunks[index].load(ordering: .acquiring) {
                chunk.deinitialize(count: Self.chunkSize(index))
                chunk.deallocate()
            }
        }
        chunks.deinitialize(count: Self.chunkLimit)
        chunks.deallocate()
    }

    private static func chunkSize(_ index: Int) -> Int { 1 << (firstChunkShift + index) }

    /// The chunk that holds `slot`, and the slot's offset in it.
    @inline(__always)
    private static func position(of slot: UInt32) -> (chunk: Int, offset: Int) {
        let shifted = UInt64(slot) &+ (1 << firstChunkShift)
        let chunk = (63 - shifted.leadingZeroBitCount) - firstChunkShift
        return (chunk, Int(shifted) - chunkSize(chunk))
    }

    /// Makes sure the chunk that holds `slot` exists. Any thread; slot numbers must not be handed
    /// out before this returns for them.
    func prepare(_ slot: UInt32) {
        let chunk = Self.position(of: slot).chunk
        guard chunks[chunk].load(ordering: .acquiring) == nil else { return }
        let size = Self.chunkSize(chunk)
        let words = UnsafeMutablePointer<Atomic<UInt64>>.allocate(capacity: size)
        for offset in 0..<size { (words + offset).initialize(to: Atomic(initialWord)) }
        if !chunks[chunk].compareExchange(expected: nil, desired: words, ordering: .acquiringAndReleasing).exchanged {
            // Another thread published the chunk first.
            words.deinitialize(count: size)
            words.deallocate()
        }
    }

    @inline(__always)
    private func word(_ slot: UInt32) -> UnsafeMutablePointer<Atomic<UInt64>> {
        let (chunk, offset) = Self.position(of: slot)
        return chunks[chunk].load(ordering: .acquiring)! + offset
    }

    @inline(__always)
    func load(_ slot: UInt32) -> UInt64 {
        word(slot).pointee.load(ordering: .acquiring)
    }

    @inline(__always)
    func store(_ slot: UInt32, _ value: UInt64) {
        word(slot).pointee.store(value, ordering: .releasing)
    }

    @inline(__always)
    func compareExchange(_ slot: UInt32, expected: UInt64, desired: UInt64) -> Bool {
        word(slot).pointee.compareExchange(expected: expected, desired: desired, ordering: .acquiringAndReleasing).exchanged
    }
}
