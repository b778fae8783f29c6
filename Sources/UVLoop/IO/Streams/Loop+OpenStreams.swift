/// Who closes a descriptor that a stream is opened on: see
/// ``Loop/openConnection(descriptor:ownership:)``.
public enum DescriptorOwnership: Sendable, Hashable {
    /// The stream takes the descriptor: closing the stream, and the loop's shutdown or detach,
    /// close it. Do not close it yourself, nor use it any more.
    case take
    /// The stream borrows the descriptor: it works on a duplicate (`fcntl(F_DUPFD_CLOEXEC)`),
    /// which it closes, and leaves the descriptor open, with its blocking mode as it found it.
    /// Close it yourself, once the stream has closed.
    case borrow
}

extension Loop {
    /// Opens a stream on a connected socket, a pipe or a terminal that someone else opened: a
    /// socket a C library accepted, one end of a `socketpair`, a pipe to or from a child process.
    ///
    /// ```swift
    /// let connection = try loop.openConnection(descriptor: accepted, ownership: .take)
    /// ```
    ///
    /// A TCP socket opens as TCP (`uv_tcp_open`), a Unix-domain socket or a pipe as a pipe
    /// (`uv_pipe_open`), a terminal as a terminal (`uv_tty_init`; see ``StreamConnection/isTerminal``).
    /// The connection is open when this returns and does not read until
    /// ``StreamConnection/startReading(_:)`` or ``StreamConnection/reads``. A pipe's read end
    /// cannot be written, nor its write end read: such a call fails with `UV_EPIPE` or
    /// `UV_ENOTCONN` from libuv.
    ///
    /// libuv switches the descriptor to non-blocking mode (a borrowed one gets its mode back when
    /// the stream closes; a terminal is reopened first, so that its mode does not change for other
    /// processes that share it). Descriptors 0, 1 and 2 are never closed, whatever the ownership.
    /// Callable from any thread: from another thread it waits until the loop's thread has opened
    /// the stream.
    /// - Parameters:
    ///   - descriptor: an open descriptor of a stream socket, a pipe or a terminal.
    ///   - ownership: who closes `descriptor` (see ``DescriptorOwnership``).
    /// - Returns: the connection, open.
    /// - Throws: ``LoopError/invalidArgument(_:)`` when `descriptor` is not open, refers to
    ///   something that is not a stream (a regular file, a datagram socket: the message says what
    ///   to use instead), is a listening socket (use ``listen(descriptor:ownership:backlog:_:)``),
    ///   or is already open as a stream or watched on this loop; ``LoopError/shutDown`` (or
    ///   ``LoopError/detached``) once the loop no longer accepts work;
    ///   ``LoopError/libuv(function:code:)`` if libuv or the kernel refuses (`UV_EMFILE` when no
    ///   duplicate can be made). When this throws, the descriptor is left as it was: yours to close.
    public func openConnection(descriptor: Int32, ownership: DescriptorOwnership) throws(LoopError) -> StreamConnection {
        let kind = try Self.streamKind(of: descriptor, listening: false)
        return try openOnLoopThread { () throws(LoopError) in
            StreamConnection(core: try StreamConnectionCore(loop: self, descriptor: descriptor, kind: kind, ownership: ownership))
        }
    }

    /// Listens on a socket that someone else opened and made listen: one that systemd passed
    /// (see ``SocketActivation``), or a C library's. `onConnection` gets each accepted
    /// connection on the loop's thread, as with ``listen(on:backlog:reusePort:_:)``. Loop thread
    /// only.
    ///
    /// ```swift
    /// let listener = try loop.listen(descriptor: socket, ownership: .take) { accepted in
    ///     guard case .success(let connection) = accepted else { return }
    ///     connection.close()
    /// }
    /// ```
    ///
    /// A Unix-domain listener opened this way does not remove its socket file when it closes:
    /// the file belongs to whoever bound the socket.
    /// - Parameters:
    ///   - descriptor: an open, listening stream socket (TCP or Unix-domain).
    ///   - ownership: who closes `descriptor` (see ``DescriptorOwnership``).
    ///   - backlog: how many connections the kernel holds waiting to be accepted (the socket
    ///     listens again with it).
    ///   - onConnection: gets each accepted connection, or an accept error.
    /// - Returns: the listener; close it with ``StreamListener/close()``.
    /// - Throws: like ``openConnection(descriptor:ownership:)``, and
    ///   ``LoopError/invalidArgument(_:)`` for a socket that does not listen or a backlog below 1.
    public func listen(
        descriptor: Int32, ownership: DescriptorOwnership, backlog: Int = 511,
        _ onConnection: @escaping (Result<StreamConnection, LoopError>) -> Void
    ) throws(LoopError) -> StreamListener {
        preconditionOnLoopThread("Loop.listen(descriptor:ownership:backlog:_:)")
        return try openListener(descriptor: descriptor, ownership: ownership, backlog: backlog, handler: onConnection)
    }

    /// Listens on a socket that someone else opened and made listen; accept with
    /// ``StreamListener/connections``. Callable from any task. See
    /// ``listen(descriptor:ownership:backlog:_:)``.
    /// - Parameters:
    ///   - descriptor: an open, listening stream socket (TCP or Unix-domain).
    ///   - ownership: who closes `descriptor`.
    ///   - backlog: how many connections the kernel holds waiting to be accepted.
    /// - Returns: the listener.
    /// - Throws: like ``listen(descriptor:ownership:backlog:_:)``.
    public func listen(
        descriptor: Int32, ownership: DescriptorOwnership, backlog: Int = 511
    ) async throws(LoopError) -> StreamListener {
        try await suspendOnLoopThread { (_, continuation: LoopContinuation<StreamListener>) in
            continuation.resume(with: Result { () throws(LoopError) in
                try self.openListener(descriptor: descriptor, ownership: ownership, backlog: backlog, handler: nil)
            })
        } cancel: { _ in }
    }

    private func openListener(
        descriptor: Int32, ownership: DescriptorOwnership, backlog: Int,
        handler: ((Result<StreamConnection, LoopError>) -> Void)?
    ) throws(LoopError) -> StreamListener {
        guard backlog >= 1, let backlog = Int32(exactly: backlog) else {
            throw .invalidArgument("backlog must be 1 through \(Int32.max) (got \(backlog))")
        }
        let kind = try Self.streamKind(of: descriptor, listening: true)
        let core = try StreamListenerCore(loop: self, descriptor: descriptor, kind: kind, ownership: ownership)
        let status = core.handle.listen(backlog: backlog)
        guard status == 0 else {
            core.close(reason: .streamClosed)
            throw .libuv(status, "uv_listen")
        }
        core.handler = handler
        let address = core.handle.localAddress ?? SocketAddress(storage: .unix(path: ""))
        return StreamListener(core: core, address: address)
    }

    /// Runs `open` on the loop's thread: at once there, otherwise through a blocking `invoke`.
    func openOnLoopThread<Value: Sendable>(_ open: @escaping @Sendable () throws(LoopError) -> Value) throws(LoopError) -> Value {
        if isOnLoopThread {
            try lifecycle.admitInline()
            return try open()
        }
        return try invoke { Result { () throws(LoopError) in try open() } }.get()
    }

    /// The stream kind for `descriptor`, or an error that says what to do with it instead.
    static func streamKind(of descriptor: Int32, listening: Bool) throws(LoopError) -> StreamHandle.Kind {
        switch (OpenedDescriptor.kind(of: descriptor), listening) {
        case (.socket(let unix), false), (.listeningSocket(let unix), true): return unix ? .pipe : .tcp
        case (.pipe, false): return .pipe
        case (.terminal, false): return .tty
        case (.listeningSocket, false):
            throw .invalidArgument(
                "descriptor \(descriptor) is a listening socket; listen on it with loop.listen(descriptor:ownership:) and accept its connections")
        case (.socket, true), (.pipe, true), (.terminal, true):
            throw .invalidArgument(
                "descriptor \(descriptor) is not a listening socket; call listen(2) on a bound socket first, or open a connected socket, pipe or terminal with loop.openConnection(descriptor:ownership:)")
        case (.datagramSocket, _):
            throw .invalidArgument(
                "descriptor \(descriptor) is a datagram (UDP) socket, not a stream; send and receive its datagrams with a datagram socket")
        case (.file, _):
            throw .invalidArgument(
                "descriptor \(descriptor) refers to a regular file or a device that is not a terminal, which the kernel cannot poll as a stream; read and write it with file operations (read/write, or work on the thread pool)")
        case (.notOpen, _):
            throw .invalidArgument("descriptor \(descriptor) is not open; pass a descriptor while it is open")
        case (.unknown, _):
            throw .invalidArgument(
                "descriptor \(descriptor) is neither a stream socket, a pipe nor a terminal (an eventfd, a directory, a datagram socket of another family); watch it for readiness with loop.watchDescriptor instead")
        }
    }
}

extension StreamCore {
    /// Opens a stream of `kind` on `descriptor` for this connection or listener core, and records
    /// it with the loop; the loop's record of watched descriptors holds
    /// `descriptor` until the stream closes.
    final func openStream(
        descriptor: Int32, kind: StreamHandle.Kind, ownership: DescriptorOwnership, ipc: Bool
    ) throws(LoopError) {
        let ioHandles = loop.engine.ioHandles
        let alreadyOpen = LoopError.invalidArgument(
            "descriptor \(descriptor) is already open as a stream or watched on this loop; use the stream (or watch) that has it, or close it first")
        guard !ioHandles.watchedDescriptors.contains(descriptor) else { throw alreadyOpen }
        BrokenPipeSignal.ignoreUnlessHandled()
        let opened = try OpenedDescriptor(descriptor, borrow: ownership == .borrow)
        let stream: StreamHandle
        do {
            stream = try StreamHandle(
                opening: opened, as: kind, ipc: ipc, loop: loop.native, core: self)
        } catch {
            opened.abandon()
            if case .libuv(_, let code) = error, code == PollHandle.alreadyWatched { throw alreadyOpen }
            throw error
        }
        ioHandles.watchedDescriptors.insert(descriptor)
        opened.onRelease = { [ioHandles] in ioHandles.watchedDescriptors.remove(descriptor) }
        open(stream, keepsOwnerLoopAlive: true)
    }
}
