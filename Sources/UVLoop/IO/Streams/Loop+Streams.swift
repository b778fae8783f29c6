extension Loop {
    /// Listens on `address` and calls `onConnection` on the loop's thread with each connection
    /// accepted. Loop thread only.
    ///
    /// An IP address listens over TCP (port 0 lets the kernel choose; read the port back from
    /// ``StreamListener/localAddress``); a Unix path listens on a Unix-domain socket, whose file
    /// must not exist yet (remove a stale one first) and is removed when the listener closes.
    ///
    /// Accepted connections do not read until you call ``StreamConnection/startReading(_:)``.
    /// `onConnection` gets a failure when an accept fails (the listener goes on listening), and a
    /// last ``LoopError/shutDown`` (or ``LoopError/detached``) when the loop closes the listener.
    /// - Parameters:
    ///   - address: where to listen.
    ///   - backlog: how many connections the kernel holds waiting to be accepted.
    ///   - reusePort: sets `SO_REUSEPORT` (TCP only), so that several listeners (one per loop,
    ///     say) can bind the same address and port and the kernel spreads connections over them.
    ///   - onConnection: gets each accepted connection, or an accept error.
    /// - Returns: the listener; close it with ``StreamListener/close()``.
    /// - Throws: ``LoopError/shutDown`` (``LoopError/detached``) when the loop no longer accepts
    ///   work; ``LoopError/invalidArgument(_:)`` for a backlog below 1 or `reusePort` with a Unix
    ///   path; ``LoopError/libuv(function:code:)`` when binding or listening fails (`UV_EADDRINUSE`,
    ///   `UV_EACCES`).
    public func listen(
        on address: SocketAddress, backlog: Int = 511, reusePort: Bool = false,
        _ onConnection: @escaping (Result<StreamConnection, LoopError>) -> Void
    ) throws(LoopError) -> StreamListener {
        preconditionOnLoopThread("Loop.listen(on:backlog:reusePort:_:)")
        return try openListener(on: address, backlog: backlog, reusePort: reusePort, handler: onConnection)
    }

    /// Listens on `address`; accept with ``StreamListener/connections``. Callable from any
    /// task. See ``listen(on:backlog:reusePort:_:)`` for the parameters.
    /// - Parameters:
    ///   - address: where to listen.
    ///   - backlog: how many connections the kernel holds waiting to be accepted.
    ///   - reusePort: sets `SO_REUSEPORT` (TCP only).
    /// - Returns: the listener.
    /// - Throws: like ``listen(on:backlog:reusePort:_:)``.
    public func listen(on address: SocketAddress, backlog: Int = 511, reusePort: Bool = false) async throws(LoopError) -> StreamListener {
        try await suspendOnLoopThread { (_, continuation: LoopContinuation<StreamListener>) in
            continuation.resume(with: Result { () throws(LoopError) in
                try self.openListener(on: address, backlog: backlog, reusePort: reusePort, handler: nil)
            })
        } cancel: { _ in }
    }

    private func openListener(
        on address: SocketAddress, backlog: Int, reusePort: Bool,
        handler: ((Result<StreamConnection, LoopError>) -> Void)?
    ) throws(LoopError) -> StreamListener {
        guard backlog >= 1, let backlog = Int32(exactly: backlog) else {
            throw .invalidArgument("backlog must be 1 through \(Int32.max) (got \(backlog))")
        }
        if let simulation = try streamSimulation() {
            return try openSimulatedListener(on: address, simulation: simulation, handler: handler)
        }
        let isUnix = address.family == .unix
        if isUnix, reusePort {
            throw .invalidArgument("reusePort applies to TCP listeners, not Unix-domain sockets")
        }
        let core = try StreamListenerCore(
            loop: self, kind: isUnix ? .pipe : .tcp, socketFamily: reusePort ? address.nativeFamily : nil)
        func fail(_ status: Int32, _ function: String) -> LoopError {
            core.close(reason: .streamClosed)
            return .libuv(status, function)
        }
        if reusePort {
            let status = core.handle.setReusePort()
            guard status == 0 else { throw fail(status, "setsockopt(SO_REUSEPORT)") }
        }
        var status = core.handle.bind(address)
        guard status == 0 else { throw fail(status, isUnix ? "uv_pipe_bind" : "uv_tcp_bind") }
        status = core.handle.listen(backlog: backlog)
        guard status == 0 else { throw fail(status, "uv_listen") }
        core.handler = handler
        return StreamListener(core: core, address: address)
    }

    /// Connects to `address` and calls `completion` on the loop's thread with the connection, or
    /// the reason it failed (``LoopError/libuv(function:code:)`` with `UV_ECONNREFUSED`, say).
    /// Loop thread only.
    ///
    /// The connection does not read until you call ``StreamConnection/startReading(_:)``. If the
    /// loop shuts down (or is detached) first, `completion` gets ``LoopError/shutDown``
    /// (``LoopError/detached``).
    /// - Parameters:
    ///   - address: an IP address and port (TCP) or a Unix socket path.
    ///   - completion: gets the connection or the error.
    /// - Throws: ``LoopError/shutDown`` (``LoopError/detached``) when the loop no longer accepts
    ///   work, ``LoopError/libuv(function:code:)`` when the connect cannot start; `completion`
    ///   does not run then.
    public func connect(
        to address: SocketAddress, _ completion: @escaping (Result<StreamConnection, LoopError>) -> Void
    ) throws(LoopError) {
        preconditionOnLoopThread("Loop.connect(to:_:)")
        _ = try startConnect(to: address) { result in completion(result) }
    }

    /// Connects to `address`. Callable from any task.
    /// - Parameter address: an IP address and port (TCP) or a Unix socket path.
    /// - Returns: the connection.
    /// - Throws: like ``connect(to:_:)``, and ``LoopError/cancelled`` when the task is cancelled
    ///   while connecting (the attempt is abandoned).
    public func connect(to address: SocketAddress) async throws(LoopError) -> StreamConnection {
        let pending = NativeMutex<StreamConnectionCore?>(nil)
        return try await suspendOnLoopThread { (waiter, continuation: LoopContinuation<StreamConnection>) in
            do throws(LoopError) {
                let core = try self.startConnect(to: address) { result in
                    if waiter.isCancelled, case .success(let connection) = result {
                        connection.close()
                        return continuation.resume(throwing: .cancelled)
                    }
                    switch result {
                    case .success(let connection): continuation.resume(returning: connection)
                    case .failure(let error):
                        continuation.resume(throwing: waiter.isCancelled ? .cancelled : error)
                    }
                }
                pending.withLock { $0 = core }
                if waiter.isCancelled { core.close(reason: .streamClosed) }
            } catch {
                continuation.resume(throwing: error)
            }
        } cancel: { _ in
            pending.withLock { $0 }?.close(reason: .streamClosed)
        }
    }

    /// Starts a connect; `completion` runs exactly once, from libuv's callback.
    func startConnect(
        to address: SocketAddress, _ completion: @escaping (Result<StreamConnection, LoopError>) -> Void
    ) throws(LoopError) -> StreamConnectionCore {
        if let simulation = try streamSimulation() {
            return try startSimulatedConnect(to: address, simulation: simulation, completion)
        }
        let core = try StreamConnectionCore(loop: self, kind: address.family == .unix ? .pipe : .tcp)
        let status = core.handle.connect(to: address) { [core] status in
            if status == 0, core.isOpen {
                completion(.success(StreamConnection(core: core)))
            } else {
                let error: LoopError = core.closeReason ?? .libuv(status, "connect")
                core.close(reason: .streamClosed)
                completion(.failure(error))
            }
        }
        guard status == 0 else {
            core.close(reason: .streamClosed)
            throw .libuv(status, "uv_tcp_connect")
        }
        return core
    }
}
