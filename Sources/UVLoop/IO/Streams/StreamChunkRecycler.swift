/// Arrays for the large chunks that the streams' async face reads, reused on one loop.
///
/// A task that reads a stream gets each chunk as a `[UInt8]` of its own, copied out of the loop's
/// read buffer. Made and freed once per read, a large array is the worst case for the C
/// allocator: glibc gives the top of its heap back to the system once more than 128 KiB of it is
/// free, and the next read faults the same pages in again, zeroed by the kernel, which costs
/// more than the copy. So the async writes hand the large arrays they have written here
/// (`recycle`), and the next large reads are copied into them (`chunk(copying:)`).
///
/// Bounded: at most `keptArrays` arrays of at most one read buffer each (2 MiB per loop). Only
/// arrays of at least `smallestRecycled` bytes are kept, and a read takes one only when the
/// array's capacity is at most twice what it holds, so a chunk never carries much more memory
/// than its bytes. An array that a task still holds is not reused: emptying the loop's copy makes
/// a new buffer (the allocation the next large read would have made anyway), and the task keeps
/// its bytes. Loop thread only.
final class StreamChunkRecycler {
    /// Below this, malloc's own caches serve a read's array without faulting pages in.
    static let smallestRecycled = 16 * 1024
    /// Enough for one turn's reads of the connections a loop serves at once in a busy server.
    static let keptArrays = 32

    private var spares: [[UInt8]] = []

    /// The bytes of one read as an array of their own, in a kept array when one fits.
    @inline(__always)
    func chunk(copying bytes: UnsafeRawBufferPointer) -> [UInt8] {
        guard bytes.count >= Self.smallestRecycled, let capacity = spares.last?.capacity,
            capacity >= bytes.count, capacity <= 2 * bytes.count
        else { return Array(bytes) }
        var array = spares.removeLast()
        array.append(contentsOf: bytes)
        reuses &+= 1
        return array
    }

    /// Keeps `array`'s buffer for a later read if it is large and there is room; leaves `array`
    /// empty either way.
    @inline(__always)
    func recycle(_ array: inout [UInt8]) {
        guard array.capacity >= Self.smallestRecycled, array.capacity <= StreamReadBuffer.size * 2,
            spares.count < Self.keptArrays
        else {
            array = []
            return
        }
        var kept: [UInt8] = []
        swap(&kept, &array)
        kept.removeAll(keepingCapacity: true)
        spares.append(kept)
    }

    /// How many arrays are kept (tests).
    var keptCount: Int { spares.count }
    /// How many reads were copied into a kept array (tests).
    private(set) var reuses = 0
}
