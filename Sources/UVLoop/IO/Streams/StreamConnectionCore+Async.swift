extension StreamConnectionCore {
    /// The async face's state of `connection` (this core's), made on its first use, here on the
    /// loop's thread, from the connection's settings and how far it has got: its water marks and
    /// read buffer limit, its write queue, a half-close, discarded reads, a close (this core's, or
    /// its user's call still on its way here). A connection served by callbacks never makes it.
    func asyncState(for connection: StreamConnection) -> StreamAsyncState {
        if let existing = connection.existingAsyncState { return existing }
        var initial = StreamAsyncState.Guarded()
        initial.readBufferLimit = readBufferLimit
        initial.lowWaterMark = lowWaterMark
        initial.highWaterMark = highWaterMark
        initial.queuedBytes = pendingWriteBytes
        initial.writesShutDown = writesShutDown
        if flushingClose != nil { initial.readsDiscarded = .streamClosed }
        initial.closed = closeReason ?? (connection.isClosedByUser ? .streamClosed : nil)
        let box = connection.box
        let state = connection.keepAsyncState(StreamAsyncState(initial) { box.value.flushAsyncWrites() })
        // A close() on another thread that loaded no state before this one was published: it
        // stored its flag first, so this load sees it (see `StreamConnection.closedByUser`).
        if connection.isClosedByUser { state.close(.streamClosed) }
        return state
    }

    /// The async face's first read: reads go to `asyncState` from now on.
    func startAsyncReading() {
        misusePrecondition(
            readMode != .callback,
            "UVLoop: reading a StreamConnection's reads sequence while a read handler is installed (startReading); use one way of reading")
        // Closing (or closing after flushing) has told `asyncState` already.
        guard closeReason == nil, flushingClose == nil else { return }
        readMode = .async
        if let error = resumeReading() {
            readHasEnded = true
            asyncState?.endReads(.failure(error))
        }
    }

    /// The async face's reader took the buffer below its limit: read again.
    func resumeAsyncReading() {
        asyncState?.readingResumed()
        guard readMode == .async, closeReason == nil else { return }
        if let error = resumeReading() {
            readHasEnded = true
            asyncState?.endReads(.failure(error))
        }
    }

    /// Writes what tasks queued with the async `write`, in their order, then tells `asyncState`
    /// how much is still queued (and the first write that failed: the next async write throws it).
    func flushAsyncWrites() {
        // No task has written unless one made the state.
        guard let asyncState else { return }
        var taken: [[UInt8]] = []
        asyncState.takeOutgoing(into: &taken)
        if taken.isEmpty { return }
        usesAsyncWrites = true
        var byteCount = 0
        var failure: LoopError?
        for bytes in taken {
            byteCount += bytes.count
            // After a failure the rest is dropped, as a failed stream drops its queue.
            guard failure == nil else { continue }
            let written = bytes.withUnsafeBytes { raw in Result { () throws(LoopError) in try write(raw, completion: nil) } }
            if case .failure(let error) = written { failure = error }
        }
        // Written (or copied into the write queue): large arrays serve the next reads.
        let recycler = loop.engine.ioHandles.streamChunkRecycler
        for index in taken.indices { recycler.recycle(&taken[index]) }
        taken.removeAll(keepingCapacity: true)
        asyncState.flushed(byteCount: byteCount, queuedBytes: pendingWriteBytes, failure: failure, emptied: &taken)
    }

    /// Writes `bytes` for a task running on the loop's thread, when no task's bytes wait to be
    /// flushed: returns the write queue's size and the write's error.
    func writeAsyncNow(_ bytes: [UInt8]) -> (queuedBytes: Int, failure: LoopError?) {
        usesAsyncWrites = true
        let written = bytes.withUnsafeBytes { raw in Result { () throws(LoopError) in try write(raw, completion: nil) } }
        // Written (or copied into the write queue): a large array serves the next reads.
        if bytes.capacity >= StreamChunkRecycler.smallestRecycled {
            // The task still holds it: kept as it is, read into once the task lets go.
            var array = bytes
            loop.engine.ioHandles.streamChunkRecycler.recycle(&array)
        }
        if case .failure(let error) = written { return (pendingWriteBytes, error) }
        return (pendingWriteBytes, nil)
    }
}
