/// The addresses of the libuv handles UVLoop has open, across every loop of the process: so that
/// an owner walking its loop (`uv_walk`) can tell UVLoop's handles from its own.
///
/// Handles are added when `LibUVHandle` creates them and removed in their close callback, just
/// before their memory is freed; both are rare (a loop's own handles, an inbox), so one lock for
/// the process costs nothing that matters.
enum OwnHandles {
    private static let addresses = NativeMutex<Set<UInt>>([])

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
