import CLibUV
import Glibc

/// A `uv_write_t` and the buffer that holds the bytes it writes: the part of a write that the
/// kernel did not take at once. Pooled per connection (`StreamHandleContext`), so a queued write
/// costs no allocation once a request of its size exists. Loop thread only.
///
/// The request and the buffer are freed in `deinit`, which runs only after libuv has called the
/// write callback (the request is retained while libuv holds it).
final class StreamWriteRequest {
    /// Buffers up to this size are kept for the next write; larger ones are freed after theirs.
    static let retainedCapacity = 64 * 1024

    let request: UnsafeMutablePointer<uv_write_t>
    private(set) var storage: UnsafeMutableRawPointer?
    private var capacity = 0
    private var count = 0
    private var completion: ((LoopError?) -> Void)?

    init() {
        request = .allocate(capacity: 1)
        UnsafeMutableRawPointer(request).initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<uv_write_t>.size)
    }

    deinit {
        free(storage)
        request.deallocate()
    }

    /// Copies `bytes` into the buffer (growing it if needed) and remembers `completion`.
    func fill(with bytes: UnsafeRawBufferPointer, completion: ((LoopError?) -> Void)?) {
        if capacity < bytes.count {
            free(storage)
            guard let grown = malloc(bytes.count) else { fatalError("UVLoop: out of memory for a queued write of \(bytes.count) bytes") }
            storage = grown
            capacity = bytes.count
        }
        storage!.copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        count = bytes.count
        self.completion = completion
    }

    /// Takes back the byte count and the completion once the write is over; drops a buffer
    /// larger than `retainedCapacity`.
    func empty() -> (Int, ((LoopError?) -> Void)?) {
        defer {
            count = 0
            completion = nil
            if capacity > Self.retainedCapacity {
                free(storage)
                storage = nil
                capacity = 0
            }
        }
        return (count, completion)
    }
}

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
