/// A UDP socket: it sends datagrams to any address (or to the one it is connected to) and
/// receives datagrams with their sender's address. Open one with
/// ``Loop/openDatagramSocket(bindingTo:options:)-628ru``.
///
/// ## Two faces
/// - The callback face runs on the loop's thread: ``startReceiving(_:)`` lends each datagram to
///   a handler without copying it, ``send(_:to:completion:)-(UnsafeRawBufferPointer,_,_)`` hands
///   the datagram to the kernel at once and queues a copy only when the kernel's buffer is full,
///   ``isWritable`` and ``setWritableHandler(_:)`` tell a sender when to pause. Calling these
///   elsewhere stops the program with a message naming the misuse.
/// - The async face is callable from any task: ``datagrams`` is an `AsyncSequence` of
///   ``Datagram`` values, and ``send(_:to:)`` suspends while the send queue is above its
///   high-water mark.
///
/// Use one way of receiving per socket: a receive handler or the ``datagrams`` sequence.
///
/// ## What UDP does and does not promise
/// Each send is one datagram, delivered whole or not at all: the network (and the kernel, when a
/// receiver's buffer is full) may drop, duplicate or reorder datagrams. A datagram longer than
/// the receiver's ``Options/maximumDatagramSize`` arrives cut short and marked truncated. A send
/// larger than the path allows fails with `UV_EMSGSIZE`.
///
/// ## Closing
/// A socket stays open until ``close()``, even when nothing refers to it any more, or until its
/// loop shuts down (``Loop/shutdown()``) or is detached (``Loop/detach()``), which close every
/// socket: queued sends then fail with ``LoopError/shutDown`` (``LoopError/detached``), a
/// receive handler gets a last ``DatagramRead/failed(_:)`` with that error, and suspended async
/// calls throw it.
public final class DatagramSocket: Sendable {
    /// How a socket is opened: see ``Loop/openDatagramSocket(bindingTo:options:)-628ru``.
    public struct Options: Sendable, Hashable {
        /// Sets `SO_REUSEADDR`: several sockets (in this process or others) may bind the same
        /// address and port; on Linux the last one bound receives the unicast traffic, and every
        /// one receives multicast.
        public var reuseAddress = false
        /// Sets `SO_REUSEPORT`: several sockets (one per loop of a ``LoopGroup``, say) bind the
        /// same address and port, and the kernel spreads incoming datagrams over them by sender.
        public var reusePort = false
        /// For a socket bound to an IPv6 address: receive IPv6 only (`IPV6_V6ONLY`), not IPv4 as
        /// well through mapped addresses.
        public var ipv6Only = false
        /// Receives up to 20 datagrams per system call (`recvmmsg`) when they are waiting, which
        /// saves most of the system calls under load. On by default; it applies only while
        /// ``maximumDatagramSize`` is 65,536.
        public var batchedReceive = true
        /// The longest datagram received whole, 1 through 65,536 bytes (the default, which no
        /// UDP datagram exceeds). A longer one arrives cut to this size and marked truncated.
        public var maximumDatagramSize = 65_536

        /// The defaults: no address sharing, dual-stack IPv6, batched receives, whole datagrams.
        public init() {}
    }

    /// The loop whose thread runs this socket's callbacks.
    public let loop: Loop
    /// The address the socket is bound to, with the port the kernel chose when asked for port 0.
    /// Callable from any thread.
    public let localAddress: SocketAddress
    let box: LoopConfinedObject<DatagramSocketCore>

    /// Wraps a bound core and makes it the core's public face.
    init(core: DatagramSocketCore, address: SocketAddress) {
        loop = core.loop
        localAddress = core.handle.localAddress ?? address
        box = LoopConfinedObject(core)
        core.socket = self
    }

    /// The core, after checking that the caller is on the loop's thread.
    func core(_ operation: @autoclosure () -> String) -> DatagramSocketCore {
        loop.preconditionOnLoopThread(operation())
        return box.value
    }

    /// The core of an open socket, on the loop's thread, for a call that needs one.
    func openCore(_ operation: @autoclosure () -> String) throws(LoopError) -> DatagramSocketCore {
        try openCore(core(operation()))
    }

    /// `core` itself, unless its socket is closed.
    func openCore(_ core: DatagramSocketCore) throws(LoopError) -> DatagramSocketCore {
        if let reason = core.closeReason { throw reason }
        return core
    }

    /// The core, after checking that the caller is on the loop's thread, for a loop-thread-only
    /// call that has an async twin (`asyncForm`): the likely mistake is a missing `await`.
    func core(_ operation: @autoclosure () -> String, fromAsyncCode asyncForm: @autoclosure () -> String) -> DatagramSocketCore {
        misusePrecondition(
            loop.isOnLoopThread,
            "UVLoop: \(operation()) must run on the loop's thread; from async code use `\(asyncForm())`, "
                + "which works from any task; elsewhere use loop.post or loop.invoke to get there")
        return box.value
    }

    /// Whether the socket is open: false once ``close()`` was called or the loop closed it.
    /// Loop thread only.
    public var isOpen: Bool { core("DatagramSocket.isOpen").isOpen }

    /// Closes the socket. Callable from any thread; idempotent.
    ///
    /// On the loop's thread it closes at once: no receive handler call follows, and queued sends
    /// fail with ``LoopError/streamClosed`` (their completions run in a later turn). From another
    /// thread the close is posted to the loop (and does nothing if the loop has shut down, which
    /// closed the socket already). The ``datagrams`` sequence ends.
    public func close() {
        let box = box
        _ = loop.onLoopThread { box.value.close(reason: .streamClosed) }
    }

    /// The address the socket is connected to (``connect(to:)-4zuhy``), or nil. Loop thread only.
    public var remoteAddress: SocketAddress? {
        let core = core("DatagramSocket.remoteAddress")
        return core.isOpen ? core.handle.remoteAddress : nil
    }

    /// Connects the socket to `address` (connected UDP): sends without an address go there,
    /// only datagrams from there are received, and the kernel reports ICMP errors, such as
    /// `UV_ECONNREFUSED` when nothing listens on the peer's port, to the next receive (as a
    /// ``DatagramRead/failed(_:)`` or a thrown error of ``datagrams``) or the next send. Loop
    /// thread only; from async code, `try await socket.connect(to: address)`.
    /// - Parameter address: the peer's IP address and port, of the socket's family.
    /// - Throws: ``LoopError/streamClosed`` after ``close()``; ``LoopError/invalidArgument(_:)``
    ///   for a Unix path; ``LoopError/libuv(function:code:)`` when the kernel refuses
    ///   (`UV_EISCONN` when connected already: ``disconnect()-6musc`` first).
    @available(*, noasync, message: "from async code use `try await socket.connect(to: address)`; this overload runs on the loop's thread only")
    public func connect(to address: SocketAddress) throws(LoopError) {
        let core = try openCore(core("DatagramSocket.connect(to:)", fromAsyncCode: "try await socket.connect(to: address)"))
        guard address.family != .unix else {
            throw .invalidArgument("a datagram socket connects to an IP address and port, not a Unix-domain path")
        }
        let status = core.handle.connect(address)
        guard status == 0 else { throw .libuv(status, "uv_udp_connect") }
    }

    /// Undoes ``connect(to:)-4zuhy``: sends need an address again, and datagrams from anyone are
    /// received. The socket keeps its ``localAddress``. Loop thread only; from async code,
    /// `try await socket.disconnect()`.
    /// - Throws: ``LoopError/streamClosed`` after ``close()``; ``LoopError/libuv(function:code:)``
    ///   (`UV_ENOTCONN`) when the socket is not connected, or (`UV_EADDRINUSE`) when another
    ///   socket took its port while it was connected.
    @available(*, noasync, message: "from async code use `try await socket.disconnect()`; this overload runs on the loop's thread only")
    public func disconnect() throws(LoopError) {
        let core = try openCore(core("DatagramSocket.disconnect()", fromAsyncCode: "try await socket.disconnect()"))
        var status = core.handle.connect(nil)
        guard status == 0 else { throw .libuv(status, "uv_udp_connect") }
        // Linux gives up the port of a socket bound to port 0 when it disconnects: take the
        // same one again, so that ``localAddress`` stays true.
        if core.handle.localAddress?.port != localAddress.port {
            status = core.handle.bind(localAddress, reuseAddress: false, ipv6Only: false)
            guard status == 0 else { throw .libuv(status, "uv_udp_bind") }
        }
    }

    // MARK: receiving

    /// Starts receiving: `handler` runs on the loop's thread with each datagram that arrives
    /// (``DatagramRead/datagram(_:sender:isTruncated:)``), and with each receive error
    /// (``DatagramRead/failed(_:)``, after which receiving goes on). Loop thread only.
    ///
    /// The bytes are lent, not copied: they live in a buffer the loop reuses for its next
    /// receive, valid only while `handler` runs. `handler` gets the socket itself, so it need not
    /// capture it. Calling it again replaces the handler (and resumes receiving if stopped).
    /// - Parameter handler: what to do with each datagram.
    /// - Throws: ``LoopError/streamClosed`` (or the loop's ``LoopError/shutDown``) when the socket
    ///   is closed; ``LoopError/libuv(function:code:)`` when libuv cannot receive.
    public func startReceiving(_ handler: @escaping (DatagramSocket, DatagramRead) -> Void) throws(LoopError) {
        let core = try openCore("DatagramSocket.startReceiving(_:)")
        misusePrecondition(
            core.receiveMode != .async,
            "UVLoop: startReceiving on a DatagramSocket whose datagrams sequence is in use; use one way of receiving")
        core.receiveHandler = handler
        core.receiveMode = .callback
        if let error = core.resumeReceiving() { throw error }
    }

    /// Stops receiving: datagrams that arrive meanwhile wait in the kernel's buffer, and once it
    /// is full the kernel drops them. Resume with ``startReceiving(_:)``. Loop thread only;
    /// idempotent.
    public func stopReceiving() {
        core("DatagramSocket.stopReceiving()").pauseReceiving()
    }

    /// Whether receiving is on. Loop thread only.
    public var isReceiving: Bool { core("DatagramSocket.isReceiving").isReceiving }

    /// Whether receives take several datagrams per system call (``Options/batchedReceive``,
    /// where the kernel offers `recvmmsg`). Loop thread only.
    public var isBatchingReceives: Bool {
        let core = core("DatagramSocket.isBatchingReceives")
        return core.isOpen && core.handle.isBatched
    }
}
