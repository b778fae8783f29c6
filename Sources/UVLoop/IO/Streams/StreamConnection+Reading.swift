extension StreamConnection {
    /// Starts reading: `handler` runs on the loop's thread with each chunk that arrives, then
    /// once with ``StreamRead/end`` or ``StreamRead/failed(_:)``. Loop thread only.
    ///
    /// The bytes of ``StreamRead/bytes(_:)`` are lent, not copied: they live in a buffer the
    /// loop reuses for its next read, valid only while `handler` runs. `handler` gets the
    /// connection itself, so it need not capture it.
    ///
    /// Calling it again replaces the handler (and resumes reading if it was stopped).
    /// - Parameter handler: what to do with each read.
    /// - Throws: ``LoopError/streamClosed`` (or the loop's ``LoopError/shutDown``) when the
    ///   connection is closed; ``LoopError/libuv(function:code:)`` when libuv cannot read (after
    ///   the end of the stream, for instance).
    public func startReading(_ handler: @escaping (StreamConnection, StreamRead) -> Void) throws(LoopError) {
        let core = core("StreamConnection.startReading")
        misusePrecondition(
            core.readMode != .async,
            "UVLoop: startReading on a StreamConnection whose reads sequence is in use; use one way of reading")
        if let reason = core.closeReason { throw reason }
        core.readHandler = handler
        core.readMode = .callback
        if let error = core.resumeReading() { throw error }
    }

    /// Resumes reading with the handler given to ``startReading(_:)`` after ``stopReading()``.
    /// Loop thread only.
    /// - Throws: like ``startReading(_:)``.
    public func startReading() throws(LoopError) {
        let core = core("StreamConnection.startReading")
        misusePrecondition(
            core.readHandler != nil, "UVLoop: startReading() without a handler; call startReading(_:) first")
        if let reason = core.closeReason { throw reason }
        if let error = core.resumeReading() { throw error }
    }

    /// Stops reading, for a reader that cannot keep up: what arrives meanwhile waits in the
    /// kernel, whose buffer filling up makes the peer's writes wait in turn. Resume with
    /// ``startReading()``. Loop thread only; idempotent.
    public func stopReading() {
        core("StreamConnection.stopReading").pauseReading()
    }

    /// Whether reading is on: started, not stopped, and not ended. Loop thread only.
    public var isReading: Bool { core("StreamConnection.isReading").isReading }
}
