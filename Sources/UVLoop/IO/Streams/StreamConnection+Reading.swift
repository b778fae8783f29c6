extension StreamConnection {
    /// Starts reading: `handler` runs on the loop's thread with each chunk that arrives, then
    /// once with ``StreamRead/end`` or ``StreamRead/failed(_:)``. Loop thread only.
    ///
    /// The bytes of ``StreamRead/bytes(_:)`` are lent, not copied: they live in a buffer the
    /// loop reuses for its next read, valid only while `handler` runs. `handler` gets the
    /// connection itself, so it need not capture it.
    ///
    /// Reading follows the write queue: a write made by `handler` (an answer) that leaves the
    /// queue above its high-water mark pauses reading, and reading resumes once the queue has
    /// drained to the low-water mark (see ``setWriteWaterMarks(low:high:)``). So a peer that
    /// sends and never reads what it is sent back is held back by the kernel, and the memory
    /// queued stays near the water mark plus the answers to one chunk (at most 64 KiB read).
    /// For requests smaller than a chunk, read frames
    /// (``startReading(framing:pausingWhileUnwritable:_:)``), which pause between two requests.
    /// Writes made elsewhere (a client's own requests) never pause reading, so that two peers
    /// cannot wait for each other. ``startReading(pausingWhileUnwritable:_:)`` with false takes
    /// control.
    ///
    /// Calling it again replaces the handler (and resumes reading if it was stopped).
    /// - Parameter handler: what to do with each read.
    /// - Throws: ``LoopError/streamClosed`` (or the loop's ``LoopError/shutDown``) when the
    ///   connection is closed; ``LoopError/libuv(function:code:)`` when libuv cannot read (after
    ///   the end of the stream, for instance).
    public func startReading(_ handler: @escaping (StreamConnection, StreamRead) -> Void) throws(LoopError) {
        try startReading(pausingWhileUnwritable: true, handler)
    }

    /// Starts reading, like ``startReading(_:)``, saying whether reading follows the write
    /// queue. Loop thread only.
    /// - Parameters:
    ///   - pausingWhileUnwritable: true (what ``startReading(_:)`` does) pauses reading while
    ///     the handler's answers keep the write queue above its high-water mark; false leaves
    ///     it to you: watch
    ///     ``isWritable`` and ``setWritableHandler(_:)``, or the queue grows without bound when
    ///     the peer does not read.
    ///   - handler: what to do with each read.
    /// - Throws: like ``startReading(_:)``.
    public func startReading(
        pausingWhileUnwritable: Bool, _ handler: @escaping (StreamConnection, StreamRead) -> Void
    ) throws(LoopError) {
        let core = core("StreamConnection.startReading")
        misusePrecondition(
            core.readMode != .async,
            "UVLoop: startReading on a StreamConnection whose reads sequence is in use; use one way of reading")
        misusePrecondition(
            core.outgoingPipe == nil, "UVLoop: startReading on a StreamConnection that pipe(to:) reads; a connection has one reader")
        if let reason = core.closeReason { throw reason }
        if core.flushingClose != nil { throw .streamClosed }
        core.readHandler = handler
        core.readResumer = nil
        core.pausesReadingWhileUnwritable = pausingWhileUnwritable
        core.readMode = .callback
        if let error = core.userStartsReading() { throw error }
    }

    /// Resumes reading with the handler given to ``startReading(_:)`` after ``stopReading()``.
    /// While the handler's answers hold reading paused, reading resumes once the queue has
    /// drained. Loop thread only.
    /// - Throws: like ``startReading(_:)``.
    public func startReading() throws(LoopError) {
        let core = core("StreamConnection.startReading")
        misusePrecondition(
            core.readHandler != nil, "UVLoop: startReading() without a handler; call startReading(_:) first")
        if let reason = core.closeReason { throw reason }
        if let error = core.userStartsReading() { throw error }
    }

    /// Stops reading, for a reader that cannot keep up: what arrives meanwhile waits in the
    /// kernel, whose buffer filling up makes the peer's writes wait in turn. Resume with
    /// ``startReading()``. Stopping takes control from the write queue: reading stays stopped
    /// until ``startReading()``, however the queue drains. Loop thread only; idempotent.
    public func stopReading() {
        core("StreamConnection.stopReading").userStopsReading()
    }

    /// Whether reading is on: started, not stopped, not paused by the write queue, and not
    /// ended. Loop thread only.
    public var isReading: Bool { core("StreamConnection.isReading").isReading }
}
