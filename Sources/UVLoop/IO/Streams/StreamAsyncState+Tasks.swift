extension StreamAsyncState {
    /// The next chunk for the task reading the connection: at once when one is buffered (or
    /// reading has ended), else once one arrives. `request` asks the loop's thread to start
    /// reading (the first read) or to read again (a paused buffer fell below its limit).
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

    /// Queues `bytes` for the loop's thread to write; `flush` posts the connection's flush job
    /// when none is on its way. Returns at once while the bytes not yet taken by the kernel stay at
    /// or below the high-water mark, else once they have drained to the low-water mark.
    nonisolated(nonsending) func write(_ bytes: [UInt8], flush: () -> Void) async -> Result<Void, LoopError> {
        let (refusal, mustFlush, waitToken) = guarded.withLock { state -> (LoopError?, Bool, UInt64?) in
            if let closed = state.closed { return (closed, false, nil) }
            if state.writesShutDown { return (.writesShutDown, false, nil) }
            if let failure = state.writeFailure {
                state.writeFailure = nil
                return (failure, false, nil)
            }
            state.outgoing.append(bytes)
            state.outgoingBytes += bytes.count
            let mustFlush = !state.flushPosted
            state.flushPosted = true
            return (nil, mustFlush, state.waitingBytes > state.highWaterMark ? state.token() : nil)
        }
        if let refusal { return .failure(refusal) }
        if mustFlush { flush() }
        guard let token = waitToken else { return .success(()) }
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
