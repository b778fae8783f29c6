/// The addresses of the libuv handles UVLoop has open, across every loop of the process: so that
/// an owner walking its loop (`uv_walk`) can tell UVLoop's handles from its own.
///
/// Handles are added when `LibUVHandle` creates them and removed in their close callback, just
/// before their memory is freed. Their memory is allocated 16-byte aligned, and the record is a
/// bit per 16 bytes of the memory regions that hold them (`AddressBitmap`): every connection
/// adds and removes one, so an entry costs less than a hash set's and needs no hashing. One lock
/// for the process, held for a binary search and a bit operation.
enum OwnHandles {
    /// The alignment of every handle's memory: the record's granularity.
    static let alignment = 16

    private static let addresses = NativeMutex(AddressBitmap())

    static func insert(_ handle: UnsafeMutableRawPointer) {
        _ = addresses.withLock { $0.insert(UInt(bitPattern: handle)) }
    }

    static func remove(_ handle: UnsafeMutableRawPointer) {
        _ = addresses.withLock { $0.remove(UInt(bitPattern: handle)) }
    }

    static func contains(_ handle: UnsafeRawPointer) -> Bool {
        addresses.withLock { $0.contains(UInt(bitPattern: handle)) }
    }
}
