import CLibUV

extension Loop {
    /// Resolves `host` to the addresses a stream can connect to (IPv4 and IPv6), with `port`
    /// set in each, and calls `completion` on the loop's thread. Loop thread only.
    ///
    /// The lookup (the system's `getaddrinfo`, which may read files or ask a DNS server) runs on
    /// libuv's thread pool, which every loop of the process shares (4 threads unless
    /// `UV_THREADPOOL_SIZE` says otherwise). Addresses come in the resolver's order of
    /// preference, without duplicates. If the loop shuts down (or is detached) first,
    /// `completion` gets ``LoopError/shutDown`` (``LoopError/detached``).
    /// - Parameters:
    ///   - host: a host name (`"localhost"`, `"example.com"`) or an IP literal.
    ///   - port: 0 through 65535.
    ///   - completion: gets the addresses (never empty), or ``LoopError/libuv(function:code:)``
    ///     with the resolver's error (`UV_EAI_NONAME` for an unknown host).
    /// - Returns: the lookup, which can be cancelled.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for an empty host or a port out of range;
    ///   ``LoopError/shutDown`` (``LoopError/detached``) when the loop no longer accepts work.
    @discardableResult
    public func resolve(
        host: String, port: Int, _ completion: @escaping (Result<[SocketAddress], LoopError>) -> Void
    ) throws(LoopError) -> NameLookup {
        preconditionOnLoopThread("Loop.resolve(host:port:_:)")
        guard !host.isEmpty, !host.utf8.contains(0) else {
            throw .invalidArgument("host must be a non-empty name or address without zero bytes")
        }
        guard let port = UInt16(exactly: port) else {
            throw .invalidArgument("port must be 0 through 65535 (got \(port))")
        }
        let core = try NameLookupCore(loop: self, completion: completion)
        let lookup = NameLookup(loop: self, core: core)
        let finish = { (result: Result<[SocketAddress], LoopError>) in
            if let reason = core.closeReason { return lookup.finish(.failure(reason)) }
            switch result {
            case .success(let addresses) where !addresses.isEmpty: lookup.finish(.success(addresses))
            case .success: lookup.finish(.failure(.libuv(UV_EAI_NONAME.rawValue, "getaddrinfo")))
            case .failure(let error): lookup.finish(.failure(error))
            }
        }
        if let simulation = try streamSimulation() as? any NameSimulation {
            let request = AddressLookupRequest.startSimulated(on: simulation, loop: self, host: host, port: port, finish)
            core.open(request, keepsOwnerLoopAlive: true)
            return lookup
        }
        let ioHandles = engine.ioHandles
        let started = AddressLookupRequest.start(on: native, host: host, port: port) { result in
            ioHandles.poolRequestsStarted(-1)
            finish(result)
        }
        switch started {
        case .success(let request):
            ioHandles.poolRequestsStarted(1)
            core.open(request, keepsOwnerLoopAlive: true)
        case .failure(let error): throw error
        }
        return lookup
    }

    /// Resolves `host` to the addresses a stream can connect to; see
    /// ``resolve(host:port:_:)``. Callable from any task.
    /// - Parameters:
    ///   - host: a host name or an IP literal.
    ///   - port: 0 through 65535.
    /// - Returns: the addresses, in the resolver's order of preference (never empty).
    /// - Throws: like ``resolve(host:port:_:)``, and ``LoopError/cancelled`` when the task is
    ///   cancelled (the lookup is cancelled with it).
    public func resolve(host: String, port: Int) async throws(LoopError) -> [SocketAddress] {
        typealias Waiting = (lookup: NameLookup, continuation: LoopContinuation<[SocketAddress]>)
        let waiting = NativeMutex<Waiting?>(nil)
        return try await suspendOnLoopThread { (waiter, continuation: LoopContinuation<[SocketAddress]>) in
            do throws(LoopError) {
                let lookup = try self.resolve(host: host, port: port) { result in
                    continuation.resume(with: result)
                }
                if waiter.isCancelled, lookup.cancel() { return continuation.resume(throwing: .cancelled) }
                waiting.withLock { $0 = (lookup, continuation) }
            } catch {
                continuation.resume(throwing: error)
            }
        } cancel: { _ in
            // On the loop's thread: after the lookup started (or before, and then the start
            // sees the cancellation itself).
            guard let (lookup, continuation) = waiting.withLock({ $0 }) else { return }
            if lookup.cancel() { continuation.resume(throwing: .cancelled) }
        }
    }

    /// Connects to `host`, trying its addresses (``resolve(host:port:_:)``) in order until one
    /// accepts, and calls `completion` on the loop's thread with the connection or the reason it
    /// failed. Loop thread only.
    ///
    /// ```swift
    /// try loop.connect(host: "localhost", port: port) { result in
    ///     guard case .success(let connection) = result else { return }
    ///     try? connection.write(Array("hello".utf8))
    /// }
    /// ```
    /// - Parameters:
    ///   - host: a host name or an IP literal.
    ///   - port: 0 through 65535.
    ///   - completion: gets the connection, a lookup error, or the last address's connect error
    ///     (``LoopError/libuv(function:code:)`` with `UV_ECONNREFUSED`, say).
    /// - Returns: the name lookup: cancelling it before it completes ends the attempt (`completion`
    ///   does not run); once the lookup is done, the connects that follow run to their end.
    /// - Throws: like ``resolve(host:port:_:)``; `completion` does not run then.
    @discardableResult
    public func connect(
        host: String, port: Int, _ completion: @escaping (Result<StreamConnection, LoopError>) -> Void
    ) throws(LoopError) -> NameLookup {
        preconditionOnLoopThread("Loop.connect(host:port:_:)")
        return try resolve(host: host, port: port) { [self] resolved in
            switch resolved {
            case .failure(let error): completion(.failure(error))
            case .success(let addresses): connect(toFirstOf: addresses[...], completion)
            }
        }
    }

    /// Connects to the first of `addresses` that accepts; `completion` gets the last error when
    /// none does.
    private func connect(
        toFirstOf addresses: ArraySlice<SocketAddress>, lastError: LoopError? = nil,
        _ completion: @escaping (Result<StreamConnection, LoopError>) -> Void
    ) {
        guard let address = addresses.first else {
            return completion(.failure(lastError ?? .libuv(UV_EAI_NONAME.rawValue, "getaddrinfo")))
        }
        do {
            _ = try startConnect(to: address) { [self] result in
                switch result {
                case .success: completion(result)
                case .failure(let error):
                    // The loop closing ends the attempt; a refused address moves on to the next.
                    if error == .shutDown || error == .detached { return completion(result) }
                    connect(toFirstOf: addresses.dropFirst(), lastError: error, completion)
                }
            }
        } catch {
            if error == .shutDown || error == .detached { return completion(.failure(error)) }
            connect(toFirstOf: addresses.dropFirst(), lastError: error, completion)
        }
    }

    /// Connects to `host`, trying its addresses (``resolve(host:port:)``) in order until one
    /// accepts. Callable from any task.
    /// - Parameters:
    ///   - host: a host name or an IP literal.
    ///   - port: 0 through 65535.
    /// - Returns: the connection.
    /// - Throws: a lookup error, or the last address's connect error
    ///   (``LoopError/libuv(function:code:)`` with `UV_ECONNREFUSED`, say);
    ///   ``LoopError/cancelled`` when the task is cancelled (no further address is tried).
    public func connect(host: String, port: Int) async throws(LoopError) -> StreamConnection {
        let addresses = try await resolve(host: host, port: port)
        var lastError = LoopError.libuv(UV_EAI_NONAME.rawValue, "getaddrinfo")
        for address in addresses {
            do {
                return try await connect(to: address)
            } catch .cancelled {
                throw .cancelled
            } catch {
                lastError = error
            }
        }
        throw lastError
    }
}
