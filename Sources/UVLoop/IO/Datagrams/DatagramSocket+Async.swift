extension DatagramSocket {
    /// The datagrams arriving on the socket, as an `AsyncSequence` of ``Datagram`` values:
    /// iterate it from one task at a time, on any executor.
    ///
    /// Iterating starts receiving. Datagrams that arrive before they are asked for are buffered,
    /// up to ``receiveBufferLimit`` bytes; then the socket stops receiving until the reader
    /// catches up, and the kernel buffers (and, once full, drops) what arrives meanwhile. The
    /// sequence ends (returns nil) after ``close()``; it throws ``LoopError`` for a receive error
    /// (`UV_ECONNREFUSED` on a connected socket; iteration may go on) or when the loop shuts
    /// down, and ``LoopError/cancelled`` when the waiting task is cancelled (the socket stays
    /// open, and a later iteration goes on receiving).
    ///
    /// Do not mix it with a receive handler (``startReceiving(_:)``) on one socket.
    public var datagrams: ReceivedDatagrams { ReceivedDatagrams(socket: self) }

    /// How many bytes ``datagrams`` buffers before the socket stops receiving; 256 KiB unless
    /// set with ``setReceiveBufferLimit(_:)``. Loop thread only.
    public var receiveBufferLimit: Int { core("DatagramSocket.receiveBufferLimit").receiveBufferLimit }

    /// Sets ``receiveBufferLimit``. Loop thread only.
    /// - Parameter limit: the number of bytes; at least 1.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for a limit below 1; nothing changes.
    public func setReceiveBufferLimit(_ limit: Int) throws(LoopError) {
        let core = core("DatagramSocket.setReceiveBufferLimit(_:)")
        guard limit > 0 else {
            throw .invalidArgument("a receive buffer limit must be at least 1 byte (got \(limit))")
        }
        core.receiveBufferLimit = limit
    }

    /// Connects the socket to `address`; see ``connect(to:)-4zuhy``. Callable from any task.
    /// - Parameter address: the peer's IP address and port.
    /// - Throws: like ``connect(to:)-4zuhy``.
    public func connect(to address: SocketAddress) async throws(LoopError) {
        try await onLoop { socket throws(LoopError) in try socket.connect(to: address) }
    }

    /// Undoes ``connect(to:)-4zuhy``; see ``disconnect()-6musc``. Callable from any task.
    /// - Throws: like ``disconnect()-6musc``.
    public func disconnect() async throws(LoopError) {
        try await onLoop { socket throws(LoopError) in try socket.disconnect() }
    }

    private func onLoop(_ body: @escaping @Sendable (DatagramSocket) throws(LoopError) -> Void) async throws(LoopError) {
        try await loop.suspendOnLoopThread { [self] (_, continuation: LoopContinuation<Void>) in
            continuation.resume(with: Result { () throws(LoopError) in try body(self) })
        } cancel: { _ in }
    }
}

/// The datagrams a ``DatagramSocket`` receives: see ``DatagramSocket/datagrams``.
public struct ReceivedDatagrams: AsyncSequence, Sendable {
    /// A datagram and its sender.
    public typealias Element = Datagram
    /// Why a receive failed, the loop closed the socket, or the waiting task was cancelled.
    public typealias Failure = LoopError

    let socket: DatagramSocket

    /// Returns the iterator; iterate from one task at a time.
    public func makeAsyncIterator() -> Iterator { Iterator(socket: socket) }

    /// Produces the datagrams; see ``DatagramSocket/datagrams``.
    public struct Iterator: AsyncIteratorProtocol {
        /// A datagram and its sender.
        public typealias Element = Datagram
        /// Why a receive failed, the loop closed the socket, or the waiting task was cancelled.
        public typealias Failure = LoopError

        let socket: DatagramSocket

        /// The next datagram, or nil once the socket is closed.
        /// - Throws: ``LoopError`` for a receive error or when the loop closed the socket;
        ///   ``LoopError/cancelled`` when the task is cancelled while waiting.
        public mutating func next() async throws(LoopError) -> Datagram? {
            try await next(isolation: nil)
        }

        /// The next datagram, or nil once the socket is closed. Waits on the caller's actor
        /// (`isolation`, the caller's by default), as `for try await` asks.
        /// - Parameter actor: the caller's actor; leave the default.
        /// - Throws: like ``next()``.
        public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async throws(LoopError) -> Datagram? {
            let box = socket.box
            return try await socket.loop.suspendOnLoopThread { waiter, continuation in
                box.value.nextDatagram(waiter, continuation)
            } cancel: { waiter in
                box.value.cancelReceive(waiter)
            }
        }
    }
}
