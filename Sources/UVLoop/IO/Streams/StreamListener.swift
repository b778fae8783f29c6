/// A listening socket: TCP on an IP address and port, or a Unix-domain socket at a path.
/// Create one with ``Loop/listen(on:backlog:reusePort:_:)`` (a handler per connection, on the
/// loop's thread) or ``Loop/listen(on:backlog:reusePort:)`` (accept with ``connections``).
///
/// The listener accepts until ``close()`` or until its loop shuts down or is detached (which
/// closes it, and gives the handler a last ``LoopError/shutDown`` / ``LoopError/detached``).
/// Closing a Unix-domain listener removes its socket file. On a loop attached from C code, an
/// open listener keeps the owner's `uv_run` running, like the owner's own servers.
///
/// When the process runs out of file descriptors (`EMFILE`), connections that cannot be
/// accepted are closed at once (the peers see them reset) instead of being retried in a busy
/// loop, and accepting resumes as soon as descriptors are free again.
public final class StreamListener: Sendable {
    /// The loop whose thread runs this listener's callbacks.
    public let loop: Loop
    /// The address the listener is bound to: with the port the kernel chose when asked for
    /// port 0. Callable from any thread.
    public let localAddress: SocketAddress
    let box: LoopConfinedObject<StreamListenerCore>

    init(core: StreamListenerCore, address: SocketAddress) {
        loop = core.loop
        localAddress = core.handle.localAddress ?? address
        box = LoopConfinedObject(core)
    }

    /// Stops listening and closes the socket. Callable from any thread; idempotent.
    ///
    /// On the loop's thread it closes at once, and no handler call follows; from another thread
    /// the close is posted to the loop. Connections accepted already stay open; those the
    /// ``connections`` sequence had accepted but not yet handed out are closed, and the sequence
    /// ends.
    public func close() {
        let box = box
        _ = loop.onLoopThread { box.value.close(reason: .streamClosed) }
    }

    /// The accepted connections, as an `AsyncSequence`: for a listener made with
    /// ``Loop/listen(on:backlog:reusePort:)``. Iterate it from one task at a time.
    ///
    /// Up to 64 connections are accepted ahead of the iteration; beyond that, new connections
    /// wait in the kernel's backlog. The sequence ends after ``close()``; it throws
    /// ``LoopError`` when an accept fails (iteration may go on) or the loop shuts down, and
    /// ``LoopError/cancelled`` when the waiting task is cancelled (the listener stays open, and
    /// a later iteration goes on accepting).
    public var connections: StreamConnections { StreamConnections(listener: self) }
}

/// The connections a ``StreamListener`` accepts: see ``StreamListener/connections``.
public struct StreamConnections: AsyncSequence, Sendable {
    /// An accepted connection.
    public typealias Element = StreamConnection
    /// Why an accept failed, the loop closed the listener, or the waiting task was cancelled.
    public typealias Failure = LoopError

    let listener: StreamListener

    /// Returns the iterator; iterate from one task at a time.
    public func makeAsyncIterator() -> Iterator { Iterator(listener: listener) }

    /// Produces the accepted connections; see ``StreamListener/connections``.
    public struct Iterator: AsyncIteratorProtocol {
        /// An accepted connection.
        public typealias Element = StreamConnection
        /// Why an accept failed, the loop closed the listener, or the waiting task was cancelled.
        public typealias Failure = LoopError

        let listener: StreamListener

        /// The next accepted connection, or nil once the listener is closed.
        /// - Throws: ``LoopError`` for a failed accept or a loop shutting down;
        ///   ``LoopError/cancelled`` when the task is cancelled while waiting.
        public mutating func next() async throws(LoopError) -> StreamConnection? {
            try await next(isolation: nil)
        }

        /// The next accepted connection, or nil once the listener is closed. Waits on the
        /// caller's actor (`isolation`, the caller's by default), as `for try await` asks.
        /// - Parameter actor: the caller's actor; leave the default.
        /// - Throws: like ``next()``.
        public mutating func next(
            isolation actor: isolated (any Actor)? = #isolation
        ) async throws(LoopError) -> StreamConnection? {
            let box = listener.box
            return try await listener.loop.suspendOnLoopThread { waiter, continuation in
                box.value.nextConnection(waiter, continuation)
            } cancel: { waiter in
                box.value.cancelAccept(waiter)
            }
        }
    }
}
