import CLibUV
import Glibc

/// A libuv send request (`uv_write_t`, `uv_udp_send_t`) and the buffer that holds a copy of the
/// bytes it sends: what the kernel did not take at once. Pooled (a stream's per loop, a datagram
/// socket's per socket), so a queued send costs no allocation once a request of its size exists.
/// Loop thread only.
///
/// The request and the buffer are freed in `deinit`, which runs only after libuv has called the
/// request's callback (the request is retained while libuv holds it).
final class CopiedSendRequest<Request> {
    /// Buffers up to this size are kept for the next send; larger ones are freed after theirs.
    let retainedCapacity: Int
    let request: UnsafeMutablePointer<Request>
    private(set) var storage: UnsafeMutableRawPointer?
    private var capacity = 0
    private var count = 0
    private var completion: ((LoopError?) -> Void)?

    init(retainedCapacity: Int) {
        self.retainedCapacity = retainedCapacity
        request = .allocate(capacity: 1)
        UnsafeMutableRawPointer(request).initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<Request>.size)
    }

    deinit {
        free(storage)
        request.deallocate()
    }

    /// Copies `bytes` into the buffer (growing it if needed) and remembers `completion`.
    func fill(with bytes: UnsafeRawBufferPointer, completion: ((LoopError?) -> Void)?) {
        if capacity < bytes.count {
            free(storage)
            guard let grown = malloc(bytes.count) else { fatalError("UVLoop: out of memory for a queued send of \(bytes.count) bytes") }
            storage = grown
            capacity = bytes.count
        }
        if let source = bytes.baseAddress, bytes.count > 0 {
            storage!.copyMemory(from: source, byteCount: bytes.count)
        }
        count = bytes.count
        self.completion = completion
    }

    /// Takes back the byte count and the completion once the send is over; drops a buffer larger
    /// than `retainedCapacity`.
    func empty() -> (Int, ((LoopError?) -> Void)?) {
        defer {
            count = 0
            completion = nil
            if capacity > retainedCapacity {
                free(storage)
                storage = nil
                capacity = 0
            }
        }
        return (count, completion)
    }
}

/// A queued part of a stream write (`uv_write_t`): buffers up to 64 KiB are kept for the next.
typealias StreamWriteRequest = CopiedSendRequest<uv_write_t>

/// A queued datagram (`uv_udp_send_t`): buffers up to 2 KiB are kept for the next.
typealias DatagramSendRequest = CopiedSendRequest<uv_udp_send_t>
