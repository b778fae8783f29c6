import CLibUV
import Glibc

/// A `uv_udp_send_t` and the buffer that holds the datagram it sends: a send the kernel could not
/// take at once. Pooled per socket (`UDPHandleContext`), so a queued send costs no allocation
/// once a request of its size exists. Loop thread only.
///
/// The request and the buffer are freed in `deinit`, which runs only after libuv has called the
/// send callback (the request is retained while libuv holds it).
final class DatagramSendRequest {
    /// Buffers up to this size are kept for the next send; larger ones are freed after theirs.
    static let retainedCapacity = 2 * 1024

    let request: UnsafeMutablePointer<uv_udp_send_t>
    private(set) var storage: UnsafeMutableRawPointer?
    private var capacity = 0
    private var completion: ((LoopError?) -> Void)?

    init() {
        request = .allocate(capacity: 1)
        UnsafeMutableRawPointer(request).initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<uv_udp_send_t>.size)
    }

    deinit {
        free(storage)
        request.deallocate()
    }

    /// Copies `bytes` into the buffer (growing it if needed) and remembers `completion`.
    func fill(with bytes: UnsafeRawBufferPointer, completion: ((LoopError?) -> Void)?) {
        if capacity < bytes.count {
            free(storage)
            guard let grown = malloc(bytes.count) else { fatalError("UVLoop: out of memory for a queued datagram of \(bytes.count) bytes") }
            storage = grown
            capacity = bytes.count
        }
        if let source = bytes.baseAddress, bytes.count > 0 {
            storage!.copyMemory(from: source, byteCount: bytes.count)
        }
        self.completion = completion
    }

    /// Takes back the completion once the send is over; drops a buffer larger than
    /// `retainedCapacity`.
    func empty() -> ((LoopError?) -> Void)? {
        defer {
            completion = nil
            if capacity > Self.retainedCapacity {
                free(storage)
                storage = nil
                capacity = 0
            }
        }
        return completion
    }
}

/// The buffer every datagram socket of one loop receives into: libuv asks for it right before
/// each receive and hands the datagrams back in callbacks that finish before the next receive of
/// any socket on the loop, so one buffer serves them all. What a receive handler is lent is valid
/// only during that call. Loop thread only; freed when the last socket and the loop let go of it.
///
/// It holds `slots` datagrams of up to 64 KiB each, for batched receives (`recvmmsg`, which libuv
/// 1.44 gives one 64 KiB slot per datagram, at most 20 of them); a socket that receives one
/// datagram at a time uses the front of it. Pages the kernel never writes are never touched.
final class DatagramReceiveBuffer {
    /// The slot libuv gives each datagram of a batch (its `UV__UDP_DGRAM_MAXSIZE`).
    static let slotSize = 64 * 1024
    /// The datagrams one batched receive takes at most (libuv's `UV__MMSG_MAXWIDTH`).
    static let slots = 20
    static let size = slotSize * slots

    let base: UnsafeMutablePointer<CChar>
    let count = DatagramReceiveBuffer.size

    init() {
        base = .allocate(capacity: DatagramReceiveBuffer.size)
    }

    deinit { base.deallocate() }
}
