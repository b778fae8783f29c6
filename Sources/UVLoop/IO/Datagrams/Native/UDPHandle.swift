import CLibUV
import Glibc

/// What a UDP handle reports to its socket's core, on the loop's thread, from libuv's callbacks.
protocol UDPHandleDelegate: AnyObject {
    /// A datagram from `sender` arrived; `bytes` lie in the loop's receive buffer and are valid
    /// only during the call. `truncated`: it was longer than the buffer, and the rest was lost.
    func udpDidReceive(_ bytes: UnsafeRawBufferPointer, from sender: SocketAddress, truncated: Bool)
    /// Receiving failed with `status` (an ICMP error on a connected socket: `UV_ECONNREFUSED`);
    /// libuv goes on receiving.
    func udpReceiveDidFail(_ status: Int32)
    /// A queued send finished with `status` (0, an error, or `UV_ECANCELED` when the handle was
    /// closed first).
    func udpSendDidFinish(completion: ((LoopError?) -> Void)?, status: Int32)
    /// libuv is done with the handle (its close callback); its memory is freed right after.
    func udpDidClose()
}

/// How a send went: taken by the kernel at once, queued, or refused.
enum UDPSendOutcome {
    case sent
    case queued
    case failed(Int32, String)
}

/// One `uv_udp_t`: a `LibUVHandle` (allocated zeroed, initialized, freed only in its close
/// callback). Loop thread only.
///
/// Its `data` field holds a retained `UDPHandleContext` (the delegate, the loop's receive buffer,
/// how much of it one receive may use, and this handle's pool of send requests) from `init` until
/// the close callback, which releases it; so the delegate stays alive as long as libuv may call it.
struct UDPHandle: NativeIOHandle {
    let handle: LibUVHandle<uv_udp_t>
    /// The simulated socket behind a datagram socket of a simulated network's host (see
    /// `SimulatedDatagramSocket.swift`), nil for a real one: each verb below that the simulation
    /// answers checks it first (one predictable branch on a real socket).
    @inline(__always)
    var simulated: SimulatedDatagramSocket? { simulatedReference?.takeUnretainedValue() }
    /// The same, unretained, so that the handle stays a plain value (a core reading its handle
    /// retains and releases nothing). Safe because the handle's context holds the simulated
    /// socket strongly until the close callback, and the handle is not used after it.
    var simulatedReference: Unmanaged<SimulatedDatagramSocket>?

    var pointer: UnsafeMutablePointer<uv_udp_t> { handle.pointer }

    /// Allocates a handle on `loop` and creates its socket of `family` at once (`uv_udp_init_ex`),
    /// so that options can be set before binding. `batched` asks for `recvmmsg` (several
    /// datagrams per system call), which needs `receiveLength` to be the whole buffer.
    init(
        loop: NativeLoop, family: Int32, batched: Bool, receiveBuffer: DatagramReceiveBuffer, receiveLength: Int
    ) throws(LoopError) {
        let flags = UInt32(family) | (batched ? UInt32(UV_UDP_RECVMMSG.rawValue) : 0)
        handle = try LibUVHandle(
            "uv_udp_init_ex", initialize: { uv_udp_init_ex(loop.pointer, $0, flags) },
            context: UDPHandleContext(receiveBuffer: receiveBuffer, receiveLength: receiveLength))
    }

    /// Sets the object libuv's callbacks report to. Call once, right after `init`.
    func setDelegate(_ delegate: any UDPHandleDelegate) {
        Self.context(of: pointer).delegate = delegate
    }

    @inline(__always)
    private static func context(of handle: UnsafeMutableRawPointer) -> UDPHandleContext {
        LibUVHandle<uv_udp_t>.context(of: handle, as: UDPHandleContext.self)
    }

    @inline(__always)
    private static func context(of handle: UnsafeMutablePointer<uv_udp_t>) -> UDPHandleContext {
        context(of: UnsafeMutableRawPointer(handle))
    }

    /// Closes the handle; libuv calls back in a later closing phase (after failing queued sends
    /// with `UV_ECANCELED`). Closing twice does nothing.
    func close() {
        simulated?.close()
        handle.close()
    }

    func unref() { handle.unref() }

    // MARK: binding and connecting

    /// Binds to `address` (`uv_udp_bind`), with `UV_UDP_REUSEADDR` and `UV_UDP_IPV6ONLY` as asked.
    func bind(_ address: SocketAddress, reuseAddress: Bool, ipv6Only: Bool) -> Int32 {
        if let simulated { return simulated.bind(address) }
        var flags: UInt32 = 0
        if reuseAddress { flags |= UInt32(UV_UDP_REUSEADDR.rawValue) }
        if ipv6Only { flags |= UInt32(UV_UDP_IPV6ONLY.rawValue) }
        return address.withNative { uv_udp_bind(pointer, $0, flags) }
    }

    /// Sets `SO_REUSEPORT` on the socket (made by `init`): several sockets may bind one port.
    func setReusePort() -> Int32 {
        if simulated != nil { return UV_ENOTSUP.rawValue }
        var fd: uv_os_fd_t = -1
        let status = uv_fileno(handle.base, &fd)
        guard status == 0 else { return status }
        var one: Int32 = 1
        let result = setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, socklen_t(MemoryLayout<Int32>.size))
        return result == 0 ? 0 : -errno
    }

    /// Connects to `address` (`uv_udp_connect`), or disconnects with nil.
    func connect(_ address: SocketAddress?) -> Int32 {
        if let simulated { return simulated.connect(address) }
        guard let address else { return uv_udp_connect(pointer, nil) }
        return address.withNative { uv_udp_connect(pointer, $0) }
    }

    var localAddress: SocketAddress? {
        if let simulated { return simulated.localAddress }
        return SocketAddress.reading { uv_udp_getsockname(pointer, $0, $1) }
    }

    var remoteAddress: SocketAddress? {
        if let simulated { return simulated.remoteAddress }
        return SocketAddress.reading { uv_udp_getpeername(pointer, $0, $1) }
    }

    // MARK: receiving

    /// Starts receiving into the loop's receive buffer (`uv_udp_recv_start`).
    func startReceiving() -> Int32 {
        if let simulated { return simulated.startReceiving() }
        return uv_udp_recv_start(pointer, { handle, _, buffer in
            let context = UDPHandle.context(of: UnsafeMutableRawPointer(handle!))
            buffer!.pointee = uv_buf_t(base: context.receiveBuffer.base, len: context.receiveLength)
        }, { handle, count, buffer, sender, flags in
            let context = UDPHandle.context(of: handle!)
            guard let delegate = context.delegate else { return }
            if count < 0 { return delegate.udpReceiveDidFail(Int32(count)) }
            // Nothing left to read (count 0, no sender), or the end of a batch (UV_UDP_MMSG_FREE).
            guard let sender, let address = SocketAddress(sender) else { return }
            let truncated = flags & UInt32(UV_UDP_PARTIAL.rawValue) != 0
            delegate.udpDidReceive(UnsafeRawBufferPointer(start: buffer!.pointee.base, count: count), from: address, truncated: truncated)
        })
    }

    /// Stops receiving (`uv_udp_recv_stop`); the kernel keeps what arrives, up to its buffer.
    func stopReceiving() {
        if let simulated { return simulated.stopReceiving() }
        _ = uv_udp_recv_stop(pointer)
    }

    /// Whether libuv receives with `recvmmsg` (asked for and available).
    var isBatched: Bool { simulated == nil && uv_udp_using_recvmmsg(pointer) != 0 }

    // MARK: sending

    /// The bytes queued and not yet sent (`uv_udp_get_send_queue_size`).
    var sendQueueSize: Int { simulated == nil ? uv_udp_get_send_queue_size(pointer) : 0 }

    /// The sends queued and not yet completed (`uv_udp_get_send_queue_count`).
    var sendQueueCount: Int { simulated == nil ? uv_udp_get_send_queue_count(pointer) : 0 }

    /// Sends `bytes` as one datagram to `address` (nil on a connected socket): first with
    /// `uv_udp_try_send` when nothing is queued, then, if the kernel's buffer is full, queued with
    /// `uv_udp_send`, copied into a pooled request. An error of `uv_udp_try_send` other than
    /// `UV_EAGAIN` (`UV_EMSGSIZE`, `UV_ECONNREFUSED`) is returned at once. `tryFirst` false
    /// queues every send (tests use it: a queued send completes a turn later).
    func send(
        _ bytes: UnsafeRawBufferPointer, to address: SocketAddress?, tryFirst: Bool, completion: ((LoopError?) -> Void)?
    ) -> UDPSendOutcome {
        if let simulated { return simulated.send(bytes, to: address) }
        let start = bytes.baseAddress.map { UnsafeMutablePointer(mutating: $0.assumingMemoryBound(to: CChar.self)) }
        if tryFirst, sendQueueCount == 0 {
            var buffer = uv_buf_t(base: start, len: bytes.count)
            let sent: Int32
            if let address {
                sent = address.withNative { uv_udp_try_send(pointer, &buffer, 1, $0) }
            } else {
                sent = uv_udp_try_send(pointer, &buffer, 1, nil)
            }
            if sent >= 0 { return .sent }
            if sent != UV_EAGAIN.rawValue { return .failed(sent, "uv_udp_try_send") }
        }
        let context = Self.context(of: pointer)
        let request = context.takeSendRequest()
        request.fill(with: bytes, completion: completion)
        var buffer = uv_buf_t(base: request.storage?.assumingMemoryBound(to: CChar.self), len: bytes.count)
        // Unmanaged: the request stays retained while libuv holds it; the send callback releases it.
        request.request.pointee.data = Unmanaged.passRetained(request).toOpaque()
        let callback: uv_udp_send_cb = { request, status in
            let owner = Unmanaged<DatagramSendRequest>.fromOpaque(request!.pointee.data!).takeRetainedValue()
            let context = UDPHandle.context(of: request!.pointee.handle!)
            let completion = owner.empty().1
            context.recycle(owner)
            context.delegate?.udpSendDidFinish(completion: completion, status: status)
        }
        let status: Int32
        if let address {
            status = address.withNative { uv_udp_send(request.request, pointer, &buffer, 1, $0, callback) }
        } else {
            status = uv_udp_send(request.request, pointer, &buffer, 1, nil, callback)
        }
        guard status == 0 else {
            Unmanaged<DatagramSendRequest>.fromOpaque(request.request.pointee.data!).release()
            _ = request.empty()
            context.recycle(request)
            return .failed(status, "uv_udp_send")
        }
        return .queued
    }

    // MARK: options

    // A simulated socket takes the unicast options (they change nothing it does) and refuses
    // multicast, which the simulation does not carry.

    func setBroadcast(_ on: Bool) -> Int32 { simulated == nil ? uv_udp_set_broadcast(pointer, on ? 1 : 0) : 0 }

    func setTTL(_ ttl: Int32) -> Int32 { simulated == nil ? uv_udp_set_ttl(pointer, ttl) : 0 }

    func setMulticastTTL(_ ttl: Int32) -> Int32 { simulated == nil ? uv_udp_set_multicast_ttl(pointer, ttl) : UV_ENOTSUP.rawValue }

    func setMulticastLoopback(_ on: Bool) -> Int32 {
        simulated == nil ? uv_udp_set_multicast_loop(pointer, on ? 1 : 0) : UV_ENOTSUP.rawValue
    }

    func setMulticastInterface(_ interface: String?) -> Int32 {
        simulated == nil ? uv_udp_set_multicast_interface(pointer, interface) : UV_ENOTSUP.rawValue
    }

    func setMembership(group: String, interface: String?, join: Bool) -> Int32 {
        if simulated != nil { return UV_ENOTSUP.rawValue }
        return uv_udp_set_membership(pointer, group, interface, join ? UV_JOIN_GROUP : UV_LEAVE_GROUP)
    }
}

/// The Swift side of one UDP handle, held (retained) in its `data` field from `UDPHandle.init`
/// until its close callback: the delegate, the loop's receive buffer, and free send requests.
final class UDPHandleContext: HandleContext {
    var delegate: (any UDPHandleDelegate)?
    /// The simulated socket of a simulated datagram socket, kept until the close callback.
    var simulated: SimulatedDatagramSocket?
    let receiveBuffer: DatagramReceiveBuffer
    /// How much of the buffer one receive is given: the whole buffer for batched receives (libuv
    /// cuts it into 64 KiB slots), else the socket's largest datagram.
    let receiveLength: Int
    private var freeSends: [DatagramSendRequest] = []

    init(receiveBuffer: DatagramReceiveBuffer, receiveLength: Int) {
        self.receiveBuffer = receiveBuffer
        self.receiveLength = receiveLength
    }

    override func handleDidClose() {
        delegate?.udpDidClose()
        delegate = nil
        simulated = nil
    }

    func takeSendRequest() -> DatagramSendRequest {
        freeSends.popLast() ?? DatagramSendRequest(retainedCapacity: 2 * 1024)
    }

    /// Keeps a finished request for the next queued send (at most 64: a burst of queued sends
    /// leaves no more than that behind).
    func recycle(_ request: DatagramSendRequest) {
        if freeSends.count < 64 { freeSends.append(request) }
    }
}
