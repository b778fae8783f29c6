import CLibUV

extension Loop {
    /// Opens a connected Unix-domain socket as a stream that carries descriptors too: one end of
    /// a `socketpair(AF_UNIX)` shared with a child process, or a connection to a Unix socket.
    /// What a pre-forked server is built on: the parent listens, and hands the listening socket
    /// (or each accepted connection) to its workers, which accept on it.
    ///
    /// ```swift
    /// let channel = try loop.openDescriptorChannel(descriptor: parentEnd, ownership: .take)
    /// try channel.sendDescriptor(listeningSocket)
    /// ```
    ///
    /// The stream reads and writes bytes as any other, and sends descriptors with
    /// ``StreamConnection/sendDescriptor(_:with:completion:)``; the descriptors it receives wait
    /// in ``StreamConnection/receivedDescriptorCount`` until
    /// ``StreamConnection/takeReceivedDescriptor()-ps1u`` takes them. Both ends must be opened this
    /// way (libuv's IPC pipes: `uv_pipe_init` with `ipc`). Callable from any thread.
    /// - Parameters:
    ///   - descriptor: a connected Unix-domain stream socket.
    ///   - ownership: who closes `descriptor` (see ``DescriptorOwnership``).
    /// - Returns: the channel, open; it does not read until asked.
    /// - Throws: ``LoopError/invalidArgument(_:)`` when `descriptor` is not a connected
    ///   Unix-domain stream socket; otherwise like ``openConnection(descriptor:ownership:)``.
    public func openDescriptorChannel(descriptor: Int32, ownership: DescriptorOwnership) throws(LoopError) -> StreamConnection {
        let kind = OpenedDescriptor.kind(of: descriptor)
        guard kind == .socket(unix: true) else {
            _ = try Self.streamKind(of: descriptor, listening: false)   // what it is, if it is nothing
            throw .invalidArgument(
                "descriptor \(descriptor) is not a Unix-domain stream socket, and only those carry descriptors; make one with socketpair(AF_UNIX, SOCK_STREAM) or connect to a Unix socket")
        }
        return try openOnLoopThread { () throws(LoopError) in
            StreamConnection(core: try StreamConnectionCore(loop: self, descriptor: descriptor, kind: .pipe, ownership: ownership, ipc: true))
        }
    }
}

extension StreamConnection {
    /// Whether the stream carries descriptors (opened with
    /// ``Loop/openDescriptorChannel(descriptor:ownership:)``). Loop thread only.
    public var carriesDescriptors: Bool {
        let core = core("StreamConnection.carriesDescriptors")
        return core.isOpen && core.handle.carriesDescriptors
    }

    /// Sends a copy of `descriptor` to the process at the other end, with `bytes`, in order with
    /// the stream's writes. Loop thread only.
    ///
    /// The kernel passes the open socket or pipe itself (`SCM_RIGHTS`), not a number: the
    /// receiver gets a descriptor of its own for the same socket, and `descriptor` stays yours
    /// (close it when you no longer need it; the receiver's copy stays open). Both share the
    /// socket's non-blocking mode, which libuv sets. The receiver reads `bytes` like any bytes
    /// and takes the descriptor with ``takeReceivedDescriptor()-ps1u``.
    /// - Parameters:
    ///   - descriptor: an open socket (listening or connected, TCP or Unix-domain) or pipe.
    ///   - bytes: what travels with it, at least one byte (the kernel carries descriptors with
    ///     data only).
    ///   - completion: called on the loop's thread once the kernel has the descriptor, or with
    ///     the error; ``LoopError/streamClosed`` (or the loop's refusal) when the stream closed
    ///     first.
    /// - Throws: ``LoopError/invalidArgument(_:)`` when the stream does not carry descriptors or
    ///   `bytes` is empty; ``LoopError/streamClosed`` after ``close()``;
    ///   ``LoopError/libuv(function:code:)`` when `descriptor` cannot be sent (`UV_EBADF`).
    @available(*, noasync, message: "from async code use `try await connection.sendDescriptor(_:with:)`; this overload runs on the loop's thread only")
    public func sendDescriptor(_ descriptor: Int32, with bytes: [UInt8] = [0], completion: ((LoopError?) -> Void)? = nil) throws(LoopError) {
        let core = core("StreamConnection.sendDescriptor(_:with:completion:)", fromAsyncCode: "try await connection.sendDescriptor(_:with:)")
        try Self.send(descriptor, with: bytes, on: core, completion: completion)
    }

    /// Sends a copy of `descriptor` to the process at the other end, with `bytes`; returns once
    /// the kernel has it. Callable from any task. See ``sendDescriptor(_:with:completion:)``.
    /// - Parameters:
    ///   - descriptor: an open socket or pipe.
    ///   - bytes: what travels with it, at least one byte.
    /// - Throws: like ``sendDescriptor(_:with:completion:)``, and ``LoopError/cancelled`` when the
    ///   task is cancelled while waiting (the descriptor may still be sent).
    public func sendDescriptor(_ descriptor: Int32, with bytes: [UInt8] = [0]) async throws(LoopError) {
        let box = box
        try await loop.suspendOnLoopThread { (waiter, continuation: LoopContinuation<Void>) in
            do throws(LoopError) {
                try Self.send(descriptor, with: bytes, on: box.value) { error in
                    if let error { return continuation.resume(throwing: waiter.isCancelled ? .cancelled : error) }
                    continuation.resume()
                }
            } catch {
                continuation.resume(throwing: error)
            }
        } cancel: { _ in }
    }

    private static func send(
        _ descriptor: Int32, with bytes: [UInt8], on core: StreamConnectionCore, completion: ((LoopError?) -> Void)?
    ) throws(LoopError) {
        if let reason = core.closeReason { throw reason }
        guard core.handle.carriesDescriptors else {
            throw .invalidArgument(
                "this stream does not carry descriptors; open a Unix-domain socket with loop.openDescriptorChannel(descriptor:ownership:) at both ends")
        }
        guard !bytes.isEmpty else {
            throw .invalidArgument("a descriptor travels with at least one byte of data; pass non-empty bytes")
        }
        let status = core.handle.send(descriptor: descriptor, with: bytes, loop: core.loop.native) { [core] status in
            core.asLoopCallback {
                guard let completion else { return }
                if status == 0 { return completion(nil) }
                completion(status == UV_ECANCELED.rawValue ? (core.closeReason ?? .streamClosed) : .libuv(status, "uv_write2"))
            }
        }
        guard status == 0 else { throw .libuv(status, "uv_write2") }
    }

    /// How many received descriptors wait to be taken with ``takeReceivedDescriptor()-ps1u``; each
    /// arrives with the bytes sent with it, and is counted from the read that delivered them.
    /// Loop thread only.
    public var receivedDescriptorCount: Int {
        let core = core("StreamConnection.receivedDescriptorCount")
        return core.isOpen ? core.handle.receivedDescriptorCount : 0
    }

    /// Takes the next descriptor received, in the order they were sent. Loop thread only.
    ///
    /// The descriptor is yours (close-on-exec): open it with
    /// ``Loop/listen(descriptor:ownership:backlog:_:)`` (a listening socket),
    /// ``Loop/openConnection(descriptor:ownership:)`` and ``DescriptorOwnership/take``, or close
    /// it. Descriptors not taken are closed with the stream.
    /// - Returns: the descriptor, or nil when none waits.
    /// - Throws: ``LoopError/streamClosed`` after ``close()``; ``LoopError/libuv(function:code:)``
    ///   when the process has no descriptor left for it (`UV_EMFILE`).
    @available(*, noasync, message: "from async code use `try await connection.takeReceivedDescriptor()`; this overload runs on the loop's thread only")
    public func takeReceivedDescriptor() throws(LoopError) -> Int32? {
        let core = core("StreamConnection.takeReceivedDescriptor()", fromAsyncCode: "try await connection.takeReceivedDescriptor()")
        return try Self.take(from: core)
    }

    /// Takes the next descriptor received, in the order they were sent. Callable from any task:
    /// read the bytes that came with it from ``reads`` first. See ``takeReceivedDescriptor()-ps1u`` for what to do with it.
    /// - Returns: the descriptor (yours, close-on-exec), or nil when none waits.
    /// - Throws: ``LoopError/streamClosed`` after ``close()``; ``LoopError/libuv(function:code:)`` when the process has no descriptor left for it.
    public func takeReceivedDescriptor() async throws(LoopError) -> Int32? {
        let box = box
        return try await loop.suspendOnLoopThread { (_, continuation: LoopContinuation<Int32?>) in
            continuation.resume(with: Result { () throws(LoopError) in try Self.take(from: box.value) })
        } cancel: { _ in }
    }

    private static func take(from core: StreamConnectionCore) throws(LoopError) -> Int32? {
        if let reason = core.closeReason { throw reason }
        return try core.handle.takeReceivedDescriptor(loop: core.loop.native)
    }
}
