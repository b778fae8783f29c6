extension LoopGroup {
    /// Listens on `address` with one listener per loop of the group, all bound to the same port
    /// with `SO_REUSEPORT`, so that the kernel spreads incoming connections over the loops and
    /// each connection lives on the loop that accepted it.
    ///
    /// `onConnection` runs on the thread of the loop that accepted the connection, like the
    /// handler of ``Loop/listen(on:backlog:reusePort:_:)``, on each loop at once: it must be
    /// `Sendable`, and state it touches belongs to each loop (a ``LoopBound`` per loop) or is
    /// shared safely. Callable from any thread but the group's own (it waits for each loop to
    /// open its listener).
    ///
    /// ```swift
    /// let group = try LoopGroup(loopCount: 2)
    /// let listeners = try group.listen(on: SocketAddress(ip: "127.0.0.1", port: 0)) { accepted in
    ///     guard case .success(let connection) = accepted else { return }
    ///     try? connection.startReading { connection, read in       // on the accepting loop
    ///         if case .bytes(let bytes) = read { try? connection.write(bytes) }
    ///     }
    /// }
    /// print(Set(listeners.map(\.localAddress)).count)   // 1: every loop on the same port
    /// group.shutdown()                              // closes the listeners too
    /// ```
    /// - Parameters:
    ///   - address: an IP address and port; port 0 lets the kernel choose one for the first loop,
    ///     and the others join it.
    ///   - backlog: each listener's backlog.
    ///   - onConnection: gets each accepted connection, or an accept error, on the accepting loop.
    /// - Returns: the listeners, one per loop in the order of ``loops``; close them all to stop.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for a Unix path (which cannot be shared);
    ///   ``LoopError/wouldDeadlock(operation:)`` on one of the group's threads; what
    ///   ``Loop/listen(on:backlog:reusePort:_:)`` throws (the listeners opened before the failure
    ///   are closed again).
    public func listen(
        on address: SocketAddress, backlog: Int = 511,
        _ onConnection: @escaping @Sendable (Result<StreamConnection, LoopError>) -> Void
    ) throws(LoopError) -> [StreamListener] {
        guard address.family != .unix else {
            throw LoopError.invalidArgument("a LoopGroup listens on an IP address and port, not a Unix path (\(address)): a path cannot be bound by several listeners")
        }
        guard !threadNumbers.contains(ThreadIdentity.current.raw) else {
            throw .wouldDeadlock(operation: "LoopGroup.listen(on:backlog:_:)")
        }
        var listeners: [StreamListener] = []
        var shared = address
        do {
            for loop in loops {
                let target = shared
                let opened = try loop.invoke {
                    Result { () throws(LoopError) -> StreamListener in
                        try loop.listen(on: target, backlog: backlog, reusePort: true, onConnection)
                    }
                }
                let listener = try opened.get()
                listeners.append(listener)
                shared = listener.localAddress
            }
        } catch {
            for listener in listeners { listener.close() }
            throw error
        }
        return listeners
    }
}
