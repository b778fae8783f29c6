/// The async face of one ``StreamConnection`` (``StreamConnection/reads`` and
/// ``StreamConnection/write(_:)``): what the loop's thread and the reading and writing tasks
/// share, under one lock, so that a task takes a chunk that has arrived, or queues bytes to write,
/// without a hop to the loop's thread.
///
/// - Reads: the loop's read callback copies each chunk in (`deliver`), or hands it straight to the
///   reader waiting for one. A reader takes a buffered chunk at once and suspends only when none is
///   there. The loop stops reading once `readBufferLimit` bytes wait; the reader that takes the
///   buffer below it asks the loop to read again.
/// - Writes: a task on the loop's thread writes at once when no other task's bytes wait in
///   `outgoing`. Otherwise a task appends its bytes to `outgoing` and, unless a flush is on its
///   way, posts the connection's flush job (made once per connection: posting it allocates
///   nothing). It returns at once while the bytes not yet taken by the kernel (`outgoing` and
///   the loop's write queue) stay at or below the high-water mark, and otherwise waits until they
///   drain to the low-water mark. A write the loop could not make fails the next call.
///
/// So a read that finds a chunk, and a write below the high-water mark, neither suspend nor
/// allocate; a read that waits suspends once, with an `UnsafeContinuation` (no allocation), which
/// the loop's thread resumes.
final class StreamAsyncState: Sendable {
    typealias ReadContinuation = UnsafeContinuation<Result<[UInt8]?, LoopError>, Never>
    typealias WriteContinuation = UnsafeContinuation<Result<Void, LoopError>, Never>

    /// How a task's write goes: refused or done, queued for the loop's thread (posting the flush
    /// job, waiting on a token above the high-water mark), or written now on the loop's thread.
    enum WritePlan {
        case done
        case queued(mustFlush: Bool, wait: UInt64?)
        case now(queuedBytes: Int, aboveHighWaterMark: Bool)
    }

    /// What the loop's thread must be asked to do after a read.
    enum ReadRequest { case none, startReading, resumeReading }

    struct Guarded {
        // Reading.
        var chunks: [[UInt8]] = []
        var chunkHead = 0
        var bufferedBytes = 0
        var readBufferLimit = 64 * 1024
        /// A reader asked for the first chunk: the loop has been asked to start reading.
        var readingRequested = false
        /// The loop stopped reading because the buffer was full; `resumeRequested` once a reader
        /// has asked it to go on.
        var readingPaused = false
        var resumeRequested = false
        /// The peer's end (nil) or the read error, once reading has ended.
        var readEnd: Result<[UInt8]?, LoopError>?
        /// Reads fail with this from now on (a flushing close discards them).
        var readsDiscarded: LoopError?
        var reader: (token: UInt64, continuation: ReadContinuation)?
        /// A read cancelled before it suspended: its token.
        var cancelledRead: UInt64 = 0
        // Writing.
        /// Bytes tasks wrote, not yet taken by the loop (which puts `spareOutgoing` in their place,
        /// and gives the array it took back emptied as the next spare, so both keep their
        /// capacity).
        var outgoing: [[UInt8]] = []
        var spareOutgoing: [[UInt8]] = []
        var outgoingBytes = 0
        var flushPosted = false
        /// The loop's write queue (`StreamConnectionCore.queuedWriteBytes`) as of its last change.
        var queuedBytes = 0
        var lowWaterMark = 32 * 1024
        var highWaterMark = 64 * 1024
        var writeFailure: LoopError?
        var writesShutDown = false
        var writers: [(token: UInt64, continuation: WriteContinuation)] = []
        var cancelledWrites: [UInt64] = []
        // Both.
        /// The connection closed (or its user called `close()`): reads and writes fail with it.
        var closed: LoopError?
        var nextToken: UInt64 = 1

        mutating func token() -> UInt64 {
            defer { nextToken &+= 1 }
            return nextToken
        }

        var waitingBytes: Int { outgoingBytes + queuedBytes }

        /// The next chunk, or how reading ended, if either is there; asks the loop to read again
        /// when this take brings a paused buffer below its limit.
        mutating func takeChunk() -> (Result<[UInt8]?, LoopError>, ReadRequest)? {
            // The common case of a reader that waits, checked without copying any error.
            if chunkHead == chunks.count, readsDiscarded == nil, readEnd == nil, closed == nil { return nil }
            if let discarded = readsDiscarded { return (.failure(discarded), .none) }
            if chunkHead < chunks.count {
                let chunk = chunks[chunkHead]
                chunkHead += 1
                if chunkHead == chunks.count {
                    chunks.removeAll(keepingCapacity: true)
                    chunkHead = 0
                }
                bufferedBytes -= chunk.count
                var request = ReadRequest.none
                if readingPaused, !resumeRequested, bufferedBytes < readBufferLimit {
                    resumeRequested = true
                    request = .resumeReading
                }
                return (.success(chunk), request)
            }
            if let end = readEnd { return (end, .none) }
            if let closed { return (.failure(closed), .none) }
            return nil
        }
    }

    let guarded: NativeMutex<Guarded>
    /// Writes what tasks queued (the connection's flush job, made once with the state): posted
    /// whenever they queue bytes and no flush is on its way.
    let flushJob: @Sendable () -> Void
    /// The connection's addresses, when they are kept after this state was made: the connection
    /// keeps one of the two, the first made (see `StreamConnection.published`).
    let addresses = PublishedReference<ConnectionAddresses>()

    /// A state that starts as `initial` (the connection's settings and how far it has got).
    init(_ initial: Guarded, flushJob: @escaping @Sendable () -> Void) {
        guarded = NativeMutex(initial)
        self.flushJob = flushJob
    }

    /// A chunk read from the socket (loop thread): to the waiting reader, or into the buffer.
    /// - Returns: whether the loop must stop reading (the buffer reached its limit).
    func deliver(_ chunk: [UInt8]) -> Bool {
        let (waiting, pause) = guarded.withLock { state -> (ReadContinuation?, Bool) in
            // Closed by its user, the connection's close still on its way: nobody reads on.
            if state.closed != nil || state.readsDiscarded != nil { return (nil, false) }
            if let reader = state.reader {
                state.reader = nil
                return (reader.continuation, false)
            }
            state.chunks.append(chunk)
            state.bufferedBytes += chunk.count
            guard state.bufferedBytes >= state.readBufferLimit else { return (nil, false) }
            state.readingPaused = true
            state.resumeRequested = false
            return (nil, true)
        }
        if let waiting { resume(waiting, with: .success(chunk)) }
        return pause
    }

    /// Reading ended (loop thread): at the peer's end (nil) or with an error.
    func endReads(_ end: Result<[UInt8]?, LoopError>) {
        let waiting = guarded.withLock { state -> ReadContinuation? in
            // After a close, reads fail with its reason (the reader was told already).
            if state.closed != nil { return nil }
            state.readEnd = end
            defer { state.reader = nil }
            return state.reader?.continuation
        }
        if let waiting { resume(waiting, with: end) }
    }

    /// The loop reads again after a pause (loop thread).
    func readingResumed() {
        guarded.withLock { state in
            state.readingPaused = false
            state.resumeRequested = false
        }
    }

    /// From now on reads fail with `error` (a flushing close): the waiting reader first.
    func discardReads(_ error: LoopError) {
        let waiting = guarded.withLock { state -> ReadContinuation? in
            state.readsDiscarded = error
            state.chunks.removeAll()
            state.chunkHead = 0
            state.bufferedBytes = 0
            defer { state.reader = nil }
            return state.reader?.continuation
        }
        if let waiting { resume(waiting, with: .failure(error)) }
    }

    /// The connection closed, or its user closed it (any thread): reads and writes fail with
    /// `reason` from now on (the first reason stays), and whoever waits is told.
    func close(_ reason: LoopError) {
        let (reader, writers, error) = guarded.withLock { state -> (ReadContinuation?, [WriteContinuation], LoopError) in
            let error = state.closed ?? reason
            state.closed = error
            state.chunks.removeAll()
            state.chunkHead = 0
            state.bufferedBytes = 0
            let reader = state.reader?.continuation
            state.reader = nil
            return (reader, Self.takeWriters(&state), error)
        }
        if let reader { resume(reader, with: .failure(error)) }
        for writer in writers { resume(writer, with: .failure(error)) }
    }

    // MARK: writing, the loop's side

    /// Takes the bytes tasks queued (loop thread) into `buffer` (empty), leaving the spare array
    /// in their place; `buffer` stays empty when none are queued.
    func takeOutgoing(into buffer: inout [[UInt8]]) {
        guarded.withLock { state in
            state.flushPosted = false
            guard !state.outgoing.isEmpty else { return }
            swap(&state.outgoing, &buffer)
            swap(&state.outgoing, &state.spareOutgoing)
        }
    }

    /// The loop wrote (or queued) `byteCount` bytes taken from `outgoing`, and reports its write
    /// queue's size and the first write that failed; `emptied` is the array it took them in,
    /// kept (with its capacity) for the next take.
    func flushed(byteCount: Int, queuedBytes: Int, failure: LoopError?, emptied: inout [[UInt8]]) {
        let (resumed, result) = guarded.withLock { state -> ([WriteContinuation], Result<Void, LoopError>) in
            swap(&state.spareOutgoing, &emptied)
            state.outgoingBytes -= byteCount
            state.queuedBytes = queuedBytes
            if let failure, state.closed == nil {
                if state.writeFailure == nil { state.writeFailure = failure }
                return (Self.takeWriters(&state), .failure(failure))
            }
            return (state.waitingBytes <= state.lowWaterMark ? Self.takeWriters(&state) : [], .success(()))
        }
        for writer in resumed { resume(writer, with: result) }
    }

    /// A task on the loop's thread wrote at once and the loop's write queue is now `queuedBytes`
    /// (with the write's error, which fails the next call): the token to wait on when the bytes
    /// not yet taken by the kernel are above the high-water mark.
    func wroteNow(queuedBytes: Int, failure: LoopError?) -> UInt64? {
        let (resumed, result, token) = guarded.withLock { state -> ([WriteContinuation], Result<Void, LoopError>, UInt64?) in
            state.queuedBytes = queuedBytes
            if let failure, state.closed == nil {
                if state.writeFailure == nil { state.writeFailure = failure }
                return (Self.takeWriters(&state), .failure(failure), nil)
            }
            let token = state.waitingBytes > state.highWaterMark ? state.token() : nil
            return (state.waitingBytes <= state.lowWaterMark ? Self.takeWriters(&state) : [], .success(()), token)
        }
        for writer in resumed { resume(writer, with: result) }
        return token
    }

    /// The loop's write queue changed (a queued write finished, loop thread); a failed write
    /// nobody waited for fails the next call.
    func queueChanged(queuedBytes: Int, failure: LoopError? = nil) {
        let (resumed, result) = guarded.withLock { state -> ([WriteContinuation], Result<Void, LoopError>) in
            state.queuedBytes = queuedBytes
            if let failure, state.closed == nil {
                if state.writeFailure == nil { state.writeFailure = failure }
                return (Self.takeWriters(&state), .failure(failure))
            }
            guard !state.writers.isEmpty, state.waitingBytes <= state.lowWaterMark else { return ([], .success(())) }
            return (Self.takeWriters(&state), .success(()))
        }
        for writer in resumed { resume(writer, with: result) }
    }

    /// The writing side was shut down (loop thread): async writes fail from now on.
    func writesWereShutDown() {
        guarded.withLock { $0.writesShutDown = true }
    }

    func setWaterMarks(low: Int, high: Int) {
        guarded.withLock { state in
            state.lowWaterMark = low
            state.highWaterMark = high
        }
    }

    func setReadBufferLimit(_ limit: Int) {
        guarded.withLock { $0.readBufferLimit = limit }
    }

    /// The bytes read and not yet taken by a reader.
    var bufferedBytes: Int { guarded.withLock { $0.bufferedBytes } }

    private static func takeWriters(_ state: inout Guarded) -> [WriteContinuation] {
        let writers = state.writers.map(\.continuation)
        state.writers.removeAll(keepingCapacity: true)
        return writers
    }

    /// Resumes a suspended task, telling ThreadSanitizer that what this thread wrote before (the
    /// chunk's bytes) is the task's now (see `SanitizerHandoff`).
    private func resume<Value>(_ continuation: UnsafeContinuation<Result<Value, LoopError>, Never>, with result: sending Result<Value, LoopError>) {
        SanitizerHandoff.release(self)
        continuation.resume(returning: result)
    }
}
