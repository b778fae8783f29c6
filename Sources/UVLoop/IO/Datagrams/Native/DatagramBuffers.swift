import CLibUV
import Glibc

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
