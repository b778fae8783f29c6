import CLibUV

/// The owners' `uv_loop_t`s that UVLoop is attached on, across the process: attaching one twice
/// would add a second set of handles that the owner's one detach would not close.
///
/// An address is added by `Loop.attach` and removed when the detach has closed UVLoop's handles
/// (or the attaching failed), so the owner may attach the same loop again afterwards, and a new
/// `uv_loop_t` that happens to reuse the memory is a new loop.
enum AttachedLoops {
    private static let addresses = NativeMutex<Set<UInt>>([])

    /// Records `loop`; false when UVLoop is already attached on it.
    static func insert(_ loop: UnsafeMutablePointer<uv_loop_t>) -> Bool {
        addresses.withLock { $0.insert(UInt(bitPattern: loop)).inserted }
    }

    static func remove(_ loop: UnsafeMutablePointer<uv_loop_t>) {
        _ = addresses.withLock { $0.remove(UInt(bitPattern: loop)) }
    }
}
