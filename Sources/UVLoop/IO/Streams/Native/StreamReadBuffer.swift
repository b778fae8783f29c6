import CLibUV
import Glibc

/// The buffer every stream of one loop reads into: libuv asks for it right before each `read` and
/// hands it back in the read callback, which finishes before the next read of any stream on the
/// loop, so one buffer serves them all. What a read callback is lent is valid only during that
/// callback. Loop thread only; freed when the last stream and the loop let go of it.
final class StreamReadBuffer {
    static let size = 64 * 1024

    let base: UnsafeMutablePointer<CChar>
    let count = StreamReadBuffer.size

    init() {
        base = .allocate(capacity: StreamReadBuffer.size)
    }

    deinit { base.deallocate() }
}
