extension Loop {
    /// Opens a UDP socket bound to `address`. Loop thread only; from async code,
    /// `try await loop.openDatagramSocket(bindingTo: address)`.
    ///
    /// Bind to a wildcard address (`0.0.0.0`, `::`) to receive on every interface, and to port 0
    /// to let the kernel choose one (read it back from ``DatagramSocket/localAddress``); a client
    /// binds `0.0.0.0:0` and sends, or connects (``DatagramSocket/connect(to:)-4zuhy``). The socket
    /// receives nothing until ``DatagramSocket/startReceiving(_:)`` or ``DatagramSocket/datagrams``.
    /// - Parameters:
    ///   - address: the local IP address and port.
    ///   - options: address sharing, IPv6-only, batched receives, the largest datagram received.
    /// - Returns: the socket; close it with ``DatagramSocket/close()``.
    /// - Throws: ``LoopError/shutDown`` (``LoopError/detached``) when the loop no longer accepts
    ///   work; ``LoopError/invalidArgument(_:)`` for a Unix path, `ipv6Only` with an IPv4 address,
    ///   or a `maximumDatagramSize` outside 1...65,536; ``LoopError/libuv(function:code:)`` when
    ///   the socket cannot be made or bound (`UV_EADDRINUSE`, `UV_EACCES`, `UV_EMFILE`).
    @available(*, noasync, message: "from async code use `try await loop.openDatagramSocket(bindingTo: address)`; this overload runs on the loop's thread only")
    public func openDatagramSocket(bindingTo address: SocketAddress, options: DatagramSocket.Options = .init()) throws(LoopError) -> DatagramSocket {
        misusePrecondition(
            isOnLoopThread,
            "UVLoop: Loop.openDatagramSocket(bindingTo:options:) must run on the loop's thread; from async code use "
                + "`try await loop.openDatagramSocket(bindingTo: address)`; elsewhere use loop.post or loop.invoke to get there")
        return try makeDatagramSocket(address, options)
    }

    /// Opens a UDP socket bound to `address`. Callable from any task. See
    /// ``openDatagramSocket(bindingTo:options:)-628ru``.
    /// - Parameters:
    ///   - address: the local IP address and port.
    ///   - options: address sharing, IPv6-only, batched receives, the largest datagram received.
    /// - Returns: the socket.
    /// - Throws: like ``openDatagramSocket(bindingTo:options:)-628ru``.
    public func openDatagramSocket(bindingTo address: SocketAddress, options: DatagramSocket.Options = .init()) async throws(LoopError) -> DatagramSocket {
        try await suspendOnLoopThread { (_, continuation: LoopContinuation<DatagramSocket>) in
            continuation.resume(with: Result { () throws(LoopError) in try self.makeDatagramSocket(address, options) })
        } cancel: { _ in }
    }

    private func makeDatagramSocket(_ address: SocketAddress, _ options: DatagramSocket.Options) throws(LoopError) -> DatagramSocket {
        let core = try DatagramSocketCore(loop: self, address: address, options: options)
        return DatagramSocket(core: core, address: address)
    }
}
