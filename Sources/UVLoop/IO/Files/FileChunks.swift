extension LoopFile {
    /// The file's bytes from `offset` to its end (or `count` bytes) in chunks of `chunkLength`
    /// bytes, as an `AsyncSequence`, read ahead with up to `readAhead` reads in flight; see
    /// ``readChunks(chunkLength:readAhead:from:count:_:)``. Callable from any thread; iterate
    /// from one task at a time, on any executor.
    ///
    /// Iterating starts the reads. Chunks read before they are asked for wait, up to `readAhead`
    /// of them counting the reads in flight: a consumer that stops taking stops the reading, and
    /// the reader holds at most `readAhead` chunks besides its `readAhead` buffers. Taking a
    /// chunk that has arrived does not wait for the loop's thread. The sequence ends (nil) at the
    /// end of the file, and throws what ends the reader: a read's error,
    /// ``LoopError/fileClosed``, the loop's ``LoopError/shutDown`` (``LoopError/detached``), or
    /// ``LoopError/cancelled`` when the waiting task is cancelled, which ends the reading. Leaving
    /// the loop early (`break`) cancels the reads.
    /// - Parameters:
    ///   - chunkLength: the bytes per chunk; from 1 to `UInt32.max`.
    ///   - readAhead: the most chunks read ahead; from 1 to ``maximumReadAhead``.
    ///   - offset: where in the file to start.
    ///   - count: the most bytes to read; nil reads to the end of the file.
    /// - Returns: the chunks.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for a chunk length, read-ahead, offset or
    ///   count out of range.
    public func readChunks(
        chunkLength: Int = defaultChunkLength, readAhead: Int = defaultReadAhead, from offset: Int64 = 0, count: Int64? = nil
    ) throws(LoopError) -> FileChunks {
        try Self.validateChunks(chunkLength: chunkLength, readAhead: readAhead, offset: offset, count: count)
        return FileChunks(file: self, chunkLength: chunkLength, readAhead: readAhead, offset: offset, count: count)
    }
}

/// The chunks of a ``LoopFile``, read ahead: see ``LoopFile/readChunks(chunkLength:readAhead:from:count:)``.
public struct FileChunks: AsyncSequence, Sendable {
    /// A chunk of bytes, in file order.
    public typealias Element = [UInt8]
    /// Why reading failed, the file closed, the loop ended, or the waiting task was cancelled.
    public typealias Failure = LoopError

    let file: LoopFile
    let chunkLength: Int
    let readAhead: Int
    let offset: Int64
    let count: Int64?

    /// Returns the iterator, which reads the file once; iterate from one task at a time.
    public func makeAsyncIterator() -> Iterator {
        Iterator(consumer: FileChunksConsumer(self))
    }

    /// Produces the chunks; see ``LoopFile/readChunks(chunkLength:readAhead:from:count:)``.
    public struct Iterator: AsyncIteratorProtocol {
        /// A chunk of bytes, in file order.
        public typealias Element = [UInt8]
        /// Why reading failed, the file closed, the loop ended, or the waiting task was cancelled.
        public typealias Failure = LoopError

        let consumer: FileChunksConsumer

        /// The next chunk, or nil at the end.
        /// - Throws: ``LoopError`` when reading fails or ends early; ``LoopError/cancelled``
        ///   when the task is cancelled while waiting. Nil follows.
        public mutating func next() async throws(LoopError) -> [UInt8]? {
            try await next(isolation: nil)
        }

        /// The next chunk, or nil at the end. Waits on the caller's actor (`isolation`, the
        /// caller's by default), as `for try await` asks.
        /// - Parameter actor: the caller's actor; leave the default.
        /// - Throws: like ``next()``.
        public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async throws(LoopError) -> [UInt8]? {
            consumer.loop.preconditionSteppedWhileAwaiting("FileChunks.next()")
            return try await consumer.channel.take(for: consumer).get()
        }
    }
}

/// The consumer's end of one iteration of ``FileChunks``: starts the reader on the loop's thread
/// at the first take, asks it to read on when its consumer frees room, and cancels it when the
/// iterator goes away.
final class FileChunksConsumer: Sendable {
    let channel: FileChunksChannel
    private let chunks: FileChunks
    /// The reader, once started; the loop's thread only reads or writes it.
    private let reader = LoopConfined<FileChunkReaderCore?>(nil)

    init(_ chunks: FileChunks) {
        self.chunks = chunks
        channel = FileChunksChannel(readAhead: chunks.readAhead)
    }

    /// The loop that reads the file.
    var loop: Loop { chunks.file.loop }

    deinit {
        let reader = reader
        _ = chunks.file.loop.onLoopThread { reader.value?.cancel() }
    }

    /// Asks the loop's thread to start the reader, or to read on; a loop that refuses ends the
    /// chunks with its refusal.
    func request(_ request: FileChunksChannel.Request) {
        let reader = reader
        let chunks = chunks
        let channel = channel
        let refusal: LoopError?
        switch request {
        case .none: return
        case .start:
            refusal = chunks.file.loop.onLoopThread {
                do throws(LoopError) {
                    let core = try FileChunkReaderCore(
                        file: chunks.file.box.value, engine: chunks.file.loop.engine, chunkLength: chunks.chunkLength,
                        readAhead: chunks.readAhead, offset: chunks.offset, count: chunks.count, sink: channel)
                    reader.value = core
                    core.start()
                } catch {
                    channel.end(.failure(error))
                }
            }
        case .readOn: refusal = chunks.file.loop.onLoopThread { reader.value?.consumerTook() }
        case .cancel: refusal = chunks.file.loop.onLoopThread { reader.value?.cancel() }
        }
        if let refusal, request != .cancel { channel.end(.failure(refusal)) }
    }
}

/// What the loop's thread and the task reading ``FileChunks`` share, under one lock: the chunks
/// read and not yet taken, how reading ended, and the waiting task. A task takes a chunk that has
/// arrived without a hop to the loop's thread; it suspends only when none is there.
final class FileChunksChannel: FileChunkSink, Sendable {
    typealias Continuation = UnsafeContinuation<Result<[UInt8]?, LoopError>, Never>

    /// What the loop's thread must be asked after a take.
    enum Request { case none, start, readOn, cancel }

    struct Guarded {
        var chunks: [[UInt8]] = []
        var chunkHead = 0
        var started = false
        /// The reader stopped for room: the take that frees enough asks it to read on.
        var loopWaits = false
        /// How reading ended; nil after it was reported.
        var end: Result<[UInt8]?, LoopError>?
        var finished = false
        var reader: (token: UInt64, continuation: Continuation)?
        var cancelledTake: UInt64 = 0
        var nextToken: UInt64 = 1

        var waiting: Int { chunks.count - chunkHead }

        mutating func take(readAhead: Int) -> (Result<[UInt8]?, LoopError>, Request)? {
            if chunkHead < chunks.count {
                let chunk = chunks[chunkHead]
                chunkHead += 1
                if chunkHead == chunks.count {
                    chunks.removeAll(keepingCapacity: true)
                    chunkHead = 0
                }
                var request = Request.none
                if loopWaits, waiting <= readAhead / 2 {
                    loopWaits = false
                    request = .readOn
                }
                return (.success(chunk), request)
            }
            if finished { return (.success(nil), .none) }
            if let end = self.end {
                self.end = nil
                finished = true
                return (end, .none)
            }
            return nil
        }
    }

    let readAhead: Int
    let guarded = NativeMutex(Guarded())

    init(readAhead: Int) {
        self.readAhead = readAhead
    }

    // MARK: the loop's side

    func chunk(_ buffer: FileBuffer) {
        let chunk = Array(buffer.bytes)
        let waiting = guarded.withLock { state -> Continuation? in
            guard !state.finished, state.end == nil else { return nil }
            if let reader = state.reader {
                state.reader = nil
                return reader.continuation
            }
            state.chunks.append(chunk)
            return nil
        }
        if let waiting { resume(waiting, with: .success(chunk)) }
    }

    func end(_ result: Result<Void, LoopError>) {
        let waiting = guarded.withLock { state -> Continuation? in
            guard !state.finished, state.end == nil else { return nil }
            if let reader = state.reader {
                state.reader = nil
                state.finished = true
                return reader.continuation
            }
            state.end = result.map { nil }
            return nil
        }
        if let waiting { resume(waiting, with: result.map { nil }) }
    }

    func room(busy: Int, readAhead: Int) -> Int {
        guarded.withLock { state in
            let room = readAhead - busy - state.waiting
            // Held back by chunks not taken (not by reads in flight, whose completions read on):
            // the take that frees enough asks for more.
            if room <= 0, readAhead > busy { state.loopWaits = true }
            return max(0, room)
        }
    }

    func loopIsEnding(_ refusal: LoopError) { end(.failure(refusal)) }

    // MARK: the task's side

    /// The next chunk: at once when one waits (or reading has ended), else once one arrives.
    /// `consumer` asks the loop's thread to start the reader, read on, or cancel it.
    nonisolated(nonsending) func take(for consumer: FileChunksConsumer) async -> Result<[UInt8]?, LoopError> {
        let (ready, ask, token) = guarded.withLock { state -> (Result<[UInt8]?, LoopError>?, Request, UInt64) in
            if let (result, ask) = state.take(readAhead: readAhead) { return (result, ask, 0) }
            Self.checkOneReader(state)
            var ask = Request.none
            if !state.started {
                state.started = true
                ask = .start
            }
            defer { state.nextToken &+= 1 }
            return (nil, ask, state.nextToken)
        }
        if ask != .none { consumer.request(ask) }
        if let ready { return ready }
        let result = await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: Continuation) in
                let (ready, ask) = guarded.withLock { state -> (Result<[UInt8]?, LoopError>?, Request) in
                    if state.cancelledTake == token {
                        state.finished = true
                        return (.failure(.cancelled), .cancel)
                    }
                    if let taken = state.take(readAhead: readAhead) { return taken }
                    Self.checkOneReader(state)
                    state.reader = (token, continuation)
                    return (nil, .none)
                }
                if ask != .none { consumer.request(ask) }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiting = guarded.withLock { state -> Continuation? in
                if let reader = state.reader, reader.token == token {
                    state.reader = nil
                    state.finished = true
                    return reader.continuation
                }
                // Not suspended yet (or resumed already): a suspension still to come fails.
                state.cancelledTake = token
                return nil
            }
            if let waiting {
                consumer.request(.cancel)
                waiting.resume(returning: .failure(.cancelled))
            }
        }
        // What the loop's thread wrote (the chunk) is this task's now.
        SanitizerHandoff.acquire(self)
        return result
    }

    private static func checkOneReader(_ state: Guarded) {
        misusePrecondition(
            state.reader == nil,
            "UVLoop: two tasks iterate the same FileChunks iterator at once; iterate it from one task")
    }

    /// Resumes the waiting task, telling ThreadSanitizer that the chunk written on this thread
    /// is the task's now (see `SanitizerHandoff`).
    private func resume(_ continuation: Continuation, with result: sending Result<[UInt8]?, LoopError>) {
        SanitizerHandoff.release(self)
        continuation.resume(returning: result)
    }
}
