import CLibUV
import Glibc

/// The buffer every stream of one loop reads into: libuv asks for it right before each `read` and
/// hands it back in the read callback, which finishes before the next read of any stream on the
/// loop, so one buffer serves them all. What a read callback is lent is valid only during that
/// callback. Loop thread only; kept by the loop (`Loop.streamReadBuffer`) and freed with it.
final class StreamReadBuffer {
    static let size = 64 * 1024

    /// Allocated when the loop's first stream opens (`allocateIfNeeded`): a loop without streams
    /// has none.
    private(set) var base: UnsafeMutablePointer<CChar>?

    func allocateIfNeeded() {
        if base == nil { base = .allocate(capacity: StreamReadBuffer.size) }
    }

    deinit { base?.deallocate() }
}
