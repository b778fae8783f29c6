extension StreamConnection {
    /// The bytes arriving on the connection, chunk by chunk, as an `AsyncSequence`: iterate it
    /// from one task at a time, on any executor.
    ///
    /// Iterating starts reading. Chunks that arrive before they are asked for are buffered, up to
    /// ``readBufferLimit`` bytes; then the connection stops reading from the socket until the
    /// reader catches up, so a slow reader slows the peer down instead of filling memory. The
    /// sequence ends (returns nil) when the peer shuts down its writing side, and throws
    /// ``LoopError`` when reading fails (`UV_ECONNRESET`), when the connection is closed
    /// (``LoopError/streamClosed``) or when its loop shuts down, and ``LoopError/cancelled``
    /// when the waiting task is cancelled (the connection stays open, and a later iteration
    /// goes on reading).
    ///
    /// Do not mix it with a read handler (``startReading(_:)``) on one connection.
    public var reads: StreamReads { StreamReads(connection: self) }

    /// How many bytes ``reads`` buffers before it stops reading from the socket; 64 KiB unless
    /// set with ``setReadBufferLimit(_:)``. Loop thread only.
    public var readBufferLimit: Int { core("StreamConnection.readBufferLimit").readBufferLimit }

    /// Sets ``readBufferLimit``: how many bytes ``reads`` buffers before it stops reading from the
    /// socket. Loop thread only.
    /// - Parameter limit: the number of bytes; at least 1.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for a limit below 1; nothing changes.
    public func setReadBufferLimit(_ limit: Int) throws(LoopError) {
        let core = core("StreamConnection.setReadBufferLimit(_:)")
        guard limit > 0 else {
            throw .invalidArgument("a read buffer limit must be at least 1 byte (got \(limit))")
        }
        core.readBufferLimit = limit
        core.asyncState?.setReadBufferLimit(limit)
    }

    /// Writes `bytes`, suspending while the write queue is above its high-water mark. Callable
    /// from any task.
    ///
    /// The bytes are written in the order of the calls. The call runs on the caller's executor
    /// (`nonisolated(nonsending)`): from a task on the loop's thread (one started with the loop
    /// as its executor preference) it writes at once when no other task's bytes wait; otherwise
    /// the bytes are queued for the loop's thread, which writes them soon after. The call returns
    /// at once while the bytes not yet taken by the kernel (these and those queued before) stay
    /// at or below the high-water mark; otherwise once they have drained to the low-water mark
    /// (see ``setWriteWaterMarks(low:high:)``). So a peer that never reads holds back its writer,
    /// and the memory queued stays near the high-water mark. A write that fails on the loop's
    /// thread makes the next call throw. ``close()`` sends what was written before it.
    ///
    /// The first async call on a connection that a listener's handler got, or that was opened on
    /// a descriptor, waits once for the loop's thread to set up the async face (a connection
    /// from ``StreamListener/connections`` or ``Loop/connect(to:)`` has it from the start).
    /// - Parameter bytes: the bytes to send.
    /// - Throws: ``LoopError/streamClosed`` (or the loop's ``LoopError/shutDown``) when the
    ///   connection is closed, ``LoopError/writesShutDown`` after a half-close,
    ///   ``LoopError/libuv(function:code:)`` when an earlier write failed (`UV_EPIPE`,
    ///   `UV_ECONNRESET`), ``LoopError/cancelled`` when the task is cancelled while suspended
    ///   (the bytes stay queued).
    public nonisolated(nonsending) func write(_ bytes: [UInt8]) async throws(LoopError) {
        withLoop { $0.preconditionSteppedWhileAwaiting("StreamConnection.write(_:)") }
        // The state is there but for a connection's first async call: no async call to get it.
        let state = if let existing = existingAsyncState { existing } else { try await asyncState() }
        let box = box
        try await state.write(bytes, onLoopThread: withLoop { $0.isOnLoopThread }) { bytes in
            box.value.writeAsyncNow(bytes)
        } flush: {
            postAsyncFlush(state)
        }.get()
    }

    /// Asks the loop's thread to write what tasks queued: at once on the loop's thread, else by
    /// posting the connection's flush job (made once, so posting it allocates nothing). A loop
    /// that refuses the job is ending, and closes the connection, which fails whoever waits.
    private func postAsyncFlush(_ state: StreamAsyncState) {
        if withLoop({ $0.isOnLoopThread }) { return box.value.flushAsyncWrites() }
        _ = withLoop { loop in Result { () throws(LoopError) in try loop.post(state.flushJob) } }
    }

    /// Asks the loop's thread to start reading, or to read again after a pause.
    fileprivate func request(_ request: StreamAsyncState.ReadRequest) {
        let box = box
        switch request {
        case .none: return
        case .startReading: _ = withLoop { $0.onLoopThread { box.value.startAsyncReading() } }
        case .resumeReading: _ = withLoop { $0.onLoopThread { box.value.resumeAsyncReading() } }
        }
    }

    /// Shuts down the writing side once queued writes are done (a half-close), and waits for it.
    /// Callable from any task.
    /// - Throws: like ``shutdownWrites(_:)``, and the error of a failed shutdown. Cancelling the
    ///   task does not end the wait: the half-close, once asked for, completes.
    public func shutdownWrites() async throws(LoopError) {
        let box = box
        try await loop.suspendOnLoopThread { (_, continuation: LoopContinuation<Void>) in
            do throws(LoopError) {
                // The bytes tasks wrote go first.
                box.value.flushAsyncWrites()
                try box.value.shutdownWrites { error in
                    if let error { continuation.resume(throwing: error) } else { continuation.resume() }
                }
            } catch {
                continuation.resume(throwing: error)
            }
        } cancel: { _ in }
    }
}

/// The chunks read from a ``StreamConnection``: see ``StreamConnection/reads``.
public struct StreamReads: AsyncSequence, Sendable {
    /// A chunk of bytes, in arrival order.
    public typealias Element = [UInt8]
    /// Why reading failed, the connection closed, or the waiting task was cancelled.
    public typealias Failure = LoopError

    let connection: StreamConnection

    /// Returns the iterator; iterate from one task at a time.
    public func makeAsyncIterator() -> Iterator { Iterator(connection: connection) }

    /// Produces the chunks; see ``StreamConnection/reads``.
    public struct Iterator: AsyncIteratorProtocol {
        /// A chunk of bytes, in arrival order.
        public typealias Element = [UInt8]
        /// Why reading failed, the connection closed, or the waiting task was cancelled.
        public typealias Failure = LoopError

        let connection: StreamConnection

        /// The next chunk, or nil at the end of the stream.
        /// - Throws: ``LoopError`` when reading fails or the connection is closed;
        ///   ``LoopError/cancelled`` when the task is cancelled while waiting.
        public mutating func next() async throws(LoopError) -> [UInt8]? {
            try await next(isolation: nil)
        }

        /// The next chunk, or nil at the end of the stream. Waits on the caller's actor
        /// (`isolation`, the caller's by default), as `for try await` asks.
        /// - Parameter actor: the caller's actor; leave the default.
        /// - Throws: like ``next()``.
        public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async throws(LoopError) -> [UInt8]? {
            let connection = connection
            connection.withLoop { $0.preconditionSteppedWhileAwaiting("StreamConnection.reads") }
            let state = if let existing = connection.existingAsyncState { existing } else { try await connection.asyncState() }
            return try await state.read { connection.request($0) }.get()
        }
    }
}
