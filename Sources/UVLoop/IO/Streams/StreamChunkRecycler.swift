/// Arrays for the large chunks that the streams' async face reads, reused on one loop.
///
/// A task that reads a stream gets each chunk as a `[UInt8]` of its own, copied out of the loop's
/// read buffer. Made and freed once per read, a large array is the worst case for the C
/// allocator: glibc gives the top of its heap back to the system once more than 128 KiB of it is
/// free, and the next read faults the same pages in again, zeroed by the kernel, which costs
/// more than the copy. So the async writes hand the large arrays they have written here
/// (`recycle`), and the next large reads are copied into them (`chunk(copying:)`).
///
/// Bounded: at most `keptArrays` arrays of at most two read buffers each (4 MiB per loop). Only
/// arrays of at least `smallestRecycled` bytes are kept, and a read takes one only when the
/// array's capacity is at most twice what it holds, so a chunk never carries much more memory
/// than its bytes. A written array that a task still holds (the chunk it just echoed, say) is
/// kept as it is, and a read takes it only once nothing else holds it, so the task's bytes never
/// change and keeping costs no allocation. Loop thread only.
final class StreamChunkRecycler {
    /// Below this, malloc's own caches serve a read's array without faulting pages in.
    static let smallestRecycled = 16 * 1024
    /// Enough for one turn's reads of the connections a loop serves at once in a busy server.
    static let keptArrays = 32

    private var spares: [[UInt8]] = []

    /// The bytes of one read as an array of their own, in a kept array when one fits and nothing
    /// else holds it.
    @inline(__always)
    func chunk(copying bytes: UnsafeRawBufferPointer) -> [UInt8] {
        guard bytes.count >= Self.smallestRecycled, !spares.isEmpty else { return Array(bytes) }
        return reusedChunk(copying: bytes) ?? Array(bytes)
    }

    private func reusedChunk(copying bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        // The most recently kept first: the likeliest to be free and in the cache.
        var index = spares.count - 1
        while index >= 0 {
            let capacity = spares[index].capacity
            if capacity >= bytes.count, capacity <= 2 * bytes.count {
                // Moved out, so that this is the only reference the recycler holds.
                spares.swapAt(index, spares.count - 1)
                var array = spares.removeLast()
                if ArrayUniqueness.isUnique(&array) {
                    array.removeAll(keepingCapacity: true)
                    array.append(contentsOf: bytes)
                    reuses &+= 1
                    return array
                }
                spares.append(array)
            }
            index -= 1
        }
        return nil
    }

    /// Keeps `array` for a later read if it is large (when all the room is taken, the oldest kept
    /// array makes room: a task may hold on to every chunk it wrote); leaves `array` empty.
    @inline(__always)
    func recycle(_ array: inout [UInt8]) {
        guard array.capacity >= Self.smallestRecycled, array.capacity <= StreamReadBuffer.size * 2 else {
            array = []
            return
        }
        if spares.count == Self.keptArrays { spares.removeFirst() }
        var kept: [UInt8] = []
        swap(&kept, &array)
        spares.append(kept)
    }

    /// How many arrays are kept (tests).
    var keptCount: Int { spares.count }
    /// How many reads were copied into a kept array (tests).
    private(set) var reuses = 0
}
