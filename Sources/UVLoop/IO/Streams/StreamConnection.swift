import Synchronization

/// A connected stream: a TCP connection or a Unix-domain socket connection, accepted by a
/// ``StreamListener`` or opened with ``Loop/connect(to:_:)``.
///
/// ## Two faces
/// - The callback face runs on the loop's thread and is for code that lives there (posted work,
///   other handlers): ``startReading(_:)`` lends each chunk read to a handler without copying it,
///   ``write(_:completion:)-(UnsafeRawBufferPointer,_)`` hands bytes to the kernel at once and
///   queues (copies) only what it did not take, ``isWritable`` and ``setWritableHandler(_:)``
///   tell a writer when to pause. Calling these elsewhere stops the program with a message
///   naming the misuse.
/// - The async face is callable from any task: ``reads`` is an `AsyncSequence` of chunks,
///   ``write(_:)`` suspends while the write queue is above its high-water mark, and
///   ``shutdownWrites()`` half-closes.
///
/// Use one way of reading per connection: a read handler or the ``reads`` sequence.
///
/// ## Ordering
/// Bytes are written in the order of the `write` calls, whichever face made them. Write
/// completions run in the same order, on the loop's thread, never before the `write` call that
/// queued them has returned. Read handlers and completions run on the loop's thread.
///
/// ## Closing
/// A connection stays open until ``close()`` (or ``resetAndClose()``), even when nothing refers
/// to it any more, or until its loop shuts down (``Loop/shutdown()``) or is detached
/// (``Loop/detach()``), which close every connection: queued writes then fail with
/// ``LoopError/shutDown`` (``LoopError/detached``), a read handler gets a last
/// ``StreamRead/failed(_:)`` with that error, and suspended async calls throw it.
///
/// On a loop attached from C code, an open connection keeps the owner's `uv_run` running, like
/// the owner's own sockets.
///
/// ## Broken pipes
/// Writing to a peer that has gone raises `SIGPIPE`, whose default action ends the process. The
/// first connection or listener a process opens therefore sets SIGPIPE to be ignored, unless the
/// program has installed its own handler (or ignores it already); such a write then fails with
/// `UV_EPIPE` instead.
public final class StreamConnection: Sendable {
    /// The loop whose thread runs this connection's callbacks.
    public var loop: Loop {
        // The core's `loop` is a `let`, set before this object was made: any thread may read it.
        box.value.loop
    }

    // Every connection carries this object: its fields are laid out (in declaration order) to
    // fill whole words, and the loop is read through the core rather than kept twice.

    /// Set by ``close()`` and ``resetAndClose()`` on the caller's thread, before they post the
    /// close: an async state made after them starts closed, as one made before is closed by them.
    /// The flag and the state's publication are sequentially consistent: a close stores the flag
    /// then loads the state, the loop publishes the state then loads the flag, and at least one of
    /// the two sees the other (with acquire and release alone, both could miss).
    private let closedByUser = Atomic<Bool>(false)
    // The next two fill the padding after the flag: Swift lays a class's fields out in
    // declaration order, and every connection carries this object.
    /// How the addresses are read from `descriptor` (see StreamConnection+Addresses.swift).
    let addressSource: ConnectionAddresses.Source
    /// The connection's descriptor, from which its addresses are read on first use; it is open
    /// until they are known (the loop's thread reads them before it closes it).
    let descriptor: Int32
    /// The core, held inline (no box object of its own: every connection carries this).
    let box: LoopConfinedReference<StreamConnectionCore>
    /// What the async face's tasks share with the loop's thread (see `StreamAsyncState`) and the
    /// addresses (see StreamConnection+Addresses.swift), in one word: whichever is made first is
    /// kept here, and keeps the other when it comes (`ConnectionAddresses.asyncState`,
    /// `StreamAsyncState.addresses`). The async state is made on the loop's thread, from the
    /// core's settings, on first use (`asyncState()`), so that a connection served by callbacks
    /// never carries it.
    let published = PublishedEitherReference<StreamAsyncState, ConnectionAddresses>()

    /// Wraps a connected core and makes it the core's public face.
    init(core: StreamConnectionCore) {
        (addressSource, descriptor) = core.handle.addressSource
        box = LoopConfinedReference(core)
        if let simulated = core.handle.simulated {
            // A simulated socket has no descriptor: its addresses are known now.
            _ = keepAddresses(ConnectionAddresses(local: simulated.localAddress, remote: simulated.remoteAddress))
        } else if addressSource == .none {
            _ = keepAddresses(ConnectionAddresses(local: nil, remote: nil))
        }
        core.connection = self
    }

    /// The async face's state if a task or the loop has made it. Any thread.
    var existingAsyncState: StreamAsyncState? {
        @inline(__always) get {
            published.loadFirst { addresses in addresses.asyncState.load() }
        }
    }

    /// Calls `body` with the loop, lent for the call: what the verbs use to check the caller's
    /// thread and reach the loop, as ``loop`` returns it retained (a retain and a release on
    /// every write, say).
    @inline(__always)
    func withLoop<Result>(_ body: (Loop) -> Result) -> Result {
        box.withValue { core in body(core.loop) }
    }

    /// Whether ``close()`` or ``resetAndClose()`` has been called. Any thread.
    var isClosedByUser: Bool { closedByUser.load(ordering: .sequentiallyConsistent) }

    /// Keeps `made` as the async face's state unless one is kept already; returns the one kept.
    /// Loop thread only (`StreamConnectionCore.asyncState(for:)` makes it).
    func keepAsyncState(_ made: StreamAsyncState) -> StreamAsyncState {
        switch published.storeIfNil(.first(made)) {
        case .first(let state): state
        case .second(let addresses): addresses.asyncState.storeIfNil(made)
        }
    }

    /// The async face's state: made on the loop's thread on first use, at once there and after a
    /// hop to it from elsewhere (once per connection); later calls only load it.
    /// - Throws: the loop's refusal when it no longer runs (it has closed the connection).
    nonisolated(nonsending) func asyncState() async throws(LoopError) -> StreamAsyncState {
        if let existing = existingAsyncState { return existing }
        let box = box
        if withLoop({ $0.isOnLoopThread }) { return box.value.asyncState(for: self) }
        return try await loop.suspendOnLoopThread { [self] (_, continuation: LoopContinuation<StreamAsyncState>) in
            continuation.resume(returning: box.value.asyncState(for: self))
        } cancel: { _ in }
    }

    /// The core, after checking that the caller is on the loop's thread.
    func core(_ operation: @autoclosure () -> String) -> StreamConnectionCore {
        withLoop { $0.preconditionOnLoopThread(operation()) }
        return box.value
    }

    /// The core, after checking that the caller is on the loop's thread, for a loop-thread-only
    /// call that has an async twin (`asyncForm`): the likely mistake is a missing `await`.
    func core(_ operation: @autoclosure () -> String, fromAsyncCode asyncForm: @autoclosure () -> String) -> StreamConnectionCore {
        misusePrecondition(
            withLoop { $0.isOnLoopThread },
            "UVLoop: \(operation()) must run on the loop's thread; from async code use `\(asyncForm())`, "
                + "which works from any task; elsewhere use loop.post or loop.invoke to get there")
        return box.value
    }

    /// Whether the connection is open: false once ``close()`` or ``resetAndClose()`` was called,
    /// or the loop closed it. Loop thread only.
    public var isOpen: Bool { core("StreamConnection.isOpen").isOpen }

    /// Closes the connection. Callable from any thread; idempotent.
    ///
    /// On the loop's thread it closes at once: no read handler call follows, and queued writes
    /// fail with ``LoopError/streamClosed`` (their completions run in a later turn). From another
    /// thread the close is posted to the loop (and does nothing if the loop has shut down, which
    /// closed the connection already). Suspended async calls throw ``LoopError/streamClosed``.
    /// The peer reads the end of the stream.
    public func close() {
        let box = box
        // Async reads and writes fail from now on, whichever thread this is; what tasks wrote
        // before goes out first.
        closedByUser.store(true, ordering: .sequentiallyConsistent)
        existingAsyncState?.close(.streamClosed)
        _ = withLoop { loop in
            loop.onLoopThread {
                box.value.flushAsyncWrites()
                box.value.close(reason: .streamClosed)
            }
        }
    }

    /// Closes a TCP connection with a reset: queued bytes are dropped and the peer's reads fail
    /// with `UV_ECONNRESET` (`SO_LINGER` with a zero timeout). A Unix socket, or a connection
    /// whose writes were shut down, is closed normally. Otherwise like ``close()``.
    public func resetAndClose() {
        let box = box
        closedByUser.store(true, ordering: .sequentiallyConsistent)
        existingAsyncState?.close(.streamClosed)
        _ = withLoop { $0.onLoopThread { box.value.closeWithReset(reason: .streamClosed) } }
    }

    // MARK: options

    /// Turns Nagle's algorithm off (`TCP_NODELAY`), so small writes leave at once instead of
    /// waiting to be coalesced: what request-response traffic wants. TCP only. Loop thread only.
    /// - Parameter enabled: true to send small writes at once.
    /// - Throws: ``LoopError/invalidArgument(_:)`` on a Unix-domain connection;
    ///   ``LoopError/streamClosed`` after ``close()``; ``LoopError/libuv(function:code:)`` when the
    ///   kernel refuses.
    public func setNoDelay(_ enabled: Bool) throws(LoopError) {
        let core = try tcpCore("setNoDelay")
        let status = core.handle.setNoDelay(enabled)
        guard status == 0 else { throw .libuv(status, "uv_tcp_nodelay") }
    }

    /// Turns TCP keep-alive probes on or off (`SO_KEEPALIVE`): an idle connection whose peer has
    /// vanished then fails instead of hanging forever. TCP only. Loop thread only.
    /// - Parameters:
    ///   - enabled: whether to send probes.
    ///   - idle: how long the connection stays idle before the first probe; whole seconds, at
    ///     least one.
    /// - Throws: ``LoopError/invalidArgument(_:)`` on a Unix-domain connection or for an idle
    ///   time below one second; ``LoopError/streamClosed`` after ``close()``;
    ///   ``LoopError/libuv(function:code:)`` when the kernel refuses.
    public func setKeepAlive(_ enabled: Bool, idle: Duration = .seconds(60)) throws(LoopError) {
        let core = try tcpCore("setKeepAlive")
        let seconds = idle.components.seconds
        guard seconds >= 1, let delay = UInt32(exactly: seconds) else {
            throw .invalidArgument("keep-alive idle time must be at least one second (got \(idle))")
        }
        let status = core.handle.setKeepAlive(enabled, delaySeconds: delay)
        guard status == 0 else { throw .libuv(status, "uv_tcp_keepalive") }
    }

    private func tcpCore(_ operation: String) throws(LoopError) -> StreamConnectionCore {
        let core = core("StreamConnection.\(operation)")
        if let reason = core.closeReason { throw reason }
        guard core.handle.kind == .tcp else {
            throw .invalidArgument("\(operation) applies to TCP connections, not Unix-domain sockets")
        }
        return core
    }
}
