extension StreamAsyncState {
    /// The next chunk for the task reading the connection: at once when one is buffered (or
    /// reading has ended), else once one arrives. `request` asks the loop's thread to start
    /// reading (the first read) or to read again (a paused buffer fell below its limit).
    /// Inlined into the caller, so that a read that finds a chunk makes no async call of its own.
    @inline(__always)
    nonisolated(nonsending) func read(requesting request: (ReadRequest) -> Void) async -> Result<[UInt8]?, LoopError> {
        let (ready, ask, token) = guarded.withLock { state -> (Result<[UInt8]?, LoopError>?, ReadRequest, UInt64) in
            if let (result, ask) = state.takeChunk() { return (result, ask, 0) }
            Self.checkOneReader(state)
            var ask = ReadRequest.none
            if !state.readingRequested {
                state.readingRequested = true
                ask = .startReading
            }
            return (nil, ask, state.token())
        }
        if ask != .none { request(ask) }
        if let ready { return ready }
        return await waitForChunk(token: token, requesting: request)
    }

    /// Waits for the next chunk as the read with `token`, which found none.
    nonisolated(nonsending) private func waitForChunk(
        token: UInt64, requesting request: (ReadRequest) -> Void
    ) async -> Result<[UInt8]?, LoopError> {
        let result = await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: ReadContinuation) in
                let (ready, ask) = guarded.withLock { state -> (Result<[UInt8]?, LoopError>?, ReadRequest) in
                    if state.cancelledRead == token { return (.failure(.cancelled), .none) }
                    if let taken = state.takeChunk() { return taken }
                    Self.checkOneReader(state)
                    state.reader = (token, continuation)
                    return (nil, .none)
                }
                if ask != .none { request(ask) }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiting = guarded.withLock { state -> ReadContinuation? in
                if let reader = state.reader, reader.token == token {
                    state.reader = nil
                    return reader.continuation
                }
                // Not suspended yet (or resumed already): a suspension still to come fails.
                state.cancelledRead = token
                return nil
            }
            waiting?.resume(returning: .failure(.cancelled))
        }
        // What the loop's thread wrote (the chunk) is this task's now.
        SanitizerHandoff.acquire(self)
        return result
    }

    private static func checkOneReader(_ state: Guarded) {
        misusePrecondition(
            state.reader == nil,
            "UVLoop: two tasks read the same StreamConnection at once; read a connection from one task")
    }

    /// Writes `bytes` in order after those written before: on the loop's thread (`onLoopThread`)
    /// with nothing queued by other tasks, at once through `writeNow` (which returns the loop's
    /// write queue size and the write's error); else queued for the loop's thread, `flush`
    /// posting the connection's flush job when none is on its way. Returns at once while the
    /// bytes not yet taken by the kernel stay at or below the high-water mark, else once they have
    /// drained to the low-water mark. Inlined into the caller, so that a write that need not wait
    /// makes no async call of its own.
    @inline(__always)
    nonisolated(nonsending) func write(
        _ bytes: [UInt8], onLoopThread: Bool, writeNow: ([UInt8]) -> (queuedBytes: Int, failure: LoopError?),
        flush: () -> Void
    ) async -> Result<Void, LoopError> {
        let (refusal, plan) = guarded.withLock { state -> (LoopError?, WritePlan) in
            if let closed = state.closed { return (closed, .done) }
            if state.writesShutDown { return (.writesShutDown, .done) }
            if let failure = state.writeFailure {
                state.writeFailure = nil
                return (failure, .done)
            }
            // Nothing of other tasks' waits for the loop's thread, which is this one: writing now
            // keeps the order, and bytes queued meanwhile by other threads are flushed after.
            if onLoopThread, state.outgoing.isEmpty, !state.flushPosted {
                return (nil, .now(queuedBytes: state.queuedBytes, aboveHighWaterMark: state.waitingBytes > state.highWaterMark))
            }
            state.outgoing.append(bytes)
            state.outgoingBytes += bytes.count
            let mustFlush = !state.flushPosted
            state.flushPosted = true
            return (nil, .queued(mustFlush: mustFlush, wait: state.waitingBytes > state.highWaterMark ? state.token() : nil))
        }
        if let refusal { return .failure(refusal) }
        let waitToken: UInt64?
        switch plan {
        case .done:
            return .success(())
        case .queued(let mustFlush, let wait):
            if mustFlush { flush() }
            waitToken = wait
        case .now(let queuedBefore, let aboveHighWaterMark):
            let (queuedBytes, failure) = writeNow(bytes)
            // The kernel took it all and nothing changed: no other party needs to know.
            if failure == nil, queuedBytes == queuedBefore, !aboveHighWaterMark {
                return .success(())
            }
            waitToken = wroteNow(queuedBytes: queuedBytes, failure: failure)
        }
        guard let token = waitToken else { return .success(()) }
        return await waitForDrain(token: token)
    }

    /// Waits, as the write with `token`, until the bytes not yet taken by the kernel have drained
    /// to the low-water mark.
    nonisolated(nonsending) private func waitForDrain(token: UInt64) async -> Result<Void, LoopError> {
        let result = await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: WriteContinuation) in
                let ready = guarded.withLock { state -> Result<Void, LoopError>? in
                    if let index = state.cancelledWrites.firstIndex(of: token) {
                        state.cancelledWrites.remove(at: index)
                        return .failure(.cancelled)
                    }
                    if let closed = state.closed { return .failure(closed) }
                    if state.waitingBytes <= state.lowWaterMark { return .success(()) }
                    state.writers.append((token, continuation))
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiting = guarded.withLock { state -> WriteContinuation? in
                if let index = state.writers.firstIndex(where: { $0.token == token }) {
                    return state.writers.remove(at: index).continuation
                }
                state.cancelledWrites.append(token)
                return nil
            }
            waiting?.resume(returning: .failure(.cancelled))
        }
        SanitizerHandoff.acquire(self)
        if Task.isCancelled {
            // A cancel that came after the loop resumed this write left its token behind.
            guarded.withLock { state in state.cancelledWrites.removeAll { $0 == token } }
        }
        return result
    }
}
