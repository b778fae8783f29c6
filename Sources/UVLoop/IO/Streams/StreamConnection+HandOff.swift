extension StreamConnection {
    /// Takes the connection's socket (or pipe, or terminal) out of the stream, for code outside
    /// UVLoop: a C library's event loop, a protocol handler written in C, another process. The
    /// connection closes, the socket stays open, and the returned descriptor is yours: close it,
    /// or open it as a stream again (``Loop/openConnection(descriptor:ownership:)``, libuv's
    /// `uv_tcp_open`). Loop thread only.
    ///
    /// ```swift
    /// connection.stopReading()
    /// let descriptor = try connection.takeDescriptor()
    /// handToC(descriptor)                      // the C side owns it from here on
    /// ```
    ///
    /// Nothing is lost on the way: the peer sees no end of stream (closing the stream closes
    /// only its own descriptor), and what it sends next waits in the kernel for the new owner.
    /// What UVLoop has already read belongs to its reader: a read handler has had every byte,
    /// the ``reads`` sequence must have taken its buffered chunks (a take with bytes still
    /// buffered throws), and a framed reader keeps the bytes of a frame it has not completed, so
    /// take the descriptor between frames. Writes must be done: a take while bytes are still
    /// queued throws (wait for ``writeQueueStatus()`` to report none, or for the completion of
    /// the last write).
    ///
    /// The descriptor is a new one (close-on-exec, 3 or above) for the same socket, in
    /// non-blocking mode as libuv left it; a connection opened on a descriptor with
    /// ``DescriptorOwnership/borrow`` gives the file status flags it found back to it, which the
    /// new descriptor shares. Read handlers and completions are not called again; suspended
    /// async calls throw ``LoopError/streamClosed``, as after ``close()``.
    /// - Returns: the descriptor, open and yours.
    /// - Throws: ``LoopError/streamClosed`` (or the loop's ``LoopError/shutDown``,
    ///   ``LoopError/detached``) when the connection is closed or closing;
    ///   ``LoopError/invalidArgument(_:)`` while writes are queued (those of the async face
    ///   included), a file is being sent, chunks wait in ``reads``, the connection is piped
    ///   (``pipe(to:endingDestination:_:)``), or it belongs to a simulated network (which has no
    ///   descriptors);
    ///   ``LoopError/libuv(function:code:)`` when no descriptor can be made (`UV_EMFILE`). The
    ///   connection stays open when this throws.
    public func takeDescriptor() throws(LoopError) -> Int32 {
        let core = core("StreamConnection.takeDescriptor()")
        if let reason = core.closeReason { throw reason }
        if core.flushingClose != nil { throw .streamClosed }
        // What tasks wrote through the async face is queued first, so that it counts below.
        core.flushAsyncWrites()
        guard core.fileTransfer == nil else {
            throw .invalidArgument("a file is being sent on this connection (sendFile or write(contentsOf:)); take its descriptor from the transfer's completion")
        }
        guard core.queuedWriteBytes == 0 else {
            throw .invalidArgument(
                "\(core.queuedWriteBytes) bytes are still queued for writing on this connection; take its descriptor once writeQueueStatus() reports none queued, or from the last write's completion")
        }
        guard core.bufferedReadBytes == 0 else {
            throw .invalidArgument(
                "\(core.bufferedReadBytes) bytes read from this connection wait in its reads sequence; take them before its descriptor, or they are lost")
        }
        guard core.incomingPipe == nil, core.outgoingPipe == nil else {
            throw .invalidArgument("this connection is piped (pipe(to:)); end the pipe before taking its descriptor")
        }
        guard core.handle.simulated == nil else {
            throw .invalidArgument("this connection belongs to a simulated network, which has no descriptors; take descriptors only from connections over real sockets")
        }
        let descriptor = core.handle.duplicateDescriptor()
        guard descriptor >= 0 else { throw .libuv(descriptor, "fcntl(F_DUPFD_CLOEXEC)") }
        _ = core.close(reason: .streamClosed)
        return descriptor
    }
}
