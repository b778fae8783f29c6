extension LoopFile {
    /// The file's bytes from `offset` to its end (or `count` bytes) in chunks of `chunkLength`
    /// bytes, as an `AsyncSequence`, read ahead with up to `readAhead` reads in flight; see
    /// ``readChunks(chunkLength:readAhead:from:count:_:)``. Callable from any thread; iterate
    /// from one task at a time, on any executor.
    ///
    /// Iterating starts the reads. Chunks read before they are asked for wait, up to `readAhead`
    /// of them, and up to `readAhead` more in the reader's own buffers (the reads go on into
    /// those while the task is slow to take): a consumer that stops taking stops the reading, and
    /// the reader holds at most `readAhead` chunks besides its `readAhead` buffers. The iterator
    /// takes every chunk that has arrived at once, without waiting for the loop's thread, and
    /// tells the reader of the chunks it gave out every `readAhead / 2` of them: a consumer that
    /// stops taking may leave up to that many fewer chunks ready. A task that waits is woken once
    /// `readAhead / 2` chunks have arrived, or the last reads in flight are back, rather than at
    /// each chunk. Chunks are shorter than `chunkLength` where a read found fewer bytes, as in
    /// ``readChunks(chunkLength:readAhead:from:count:_:)``. The sequence ends (nil) at the end of
    /// the file, and throws what ends the reader: a read's error,
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
    ///
    /// Keep one iterator and advance only it: the chunks it has taken from the reader and not
    /// given out yet travel with the value, so a copy of an advanced iterator would give them out
    /// again.
    public struct Iterator: AsyncIteratorProtocol {
        /// A chunk of bytes, in file order.
        public typealias Element = [UInt8]
        /// Why reading failed, the file closed, the loop ended, or the waiting task was cancelled.
        public typealias Failure = LoopError

        let consumer: FileChunksConsumer
        /// The chunks taken from the reader together, given out one per call from `given` on.
        private var batch: [[UInt8]] = []
        private var given = 0
        /// Chunks given out that still hold room in the channel: it is told of them every
        /// `batchSize` chunks, and at the next take, not at each one.
        private var unreported = 0

        init(consumer: FileChunksConsumer) {
            self.consumer = consumer
        }

        /// The chunks taken from the reader and not given out yet.
        var held: Int { batch.count - given }

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
            if given < batch.count { return giveOut() }
            consumer.loop.preconditionSteppedWhileAwaiting("FileChunks.next()")
            let taken = unreported
            unreported = 0
            batch = []
            given = 0
            batch = try await consumer.channel.take(for: consumer, returning: taken).get()
            return batch.isEmpty ? nil : giveOut()
        }

        private mutating func giveOut() -> [UInt8] {
            let chunk = batch[given]
            batch[given] = []
            given += 1
            unreported += 1
            if unreported >= consumer.channel.batchSize {
                consumer.report(unreported)
                unreported = 0
            }
            return chunk
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
    let reader = LoopConfined<FileChunkReaderCore?>(nil)

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

    /// Tells the reader that the consumer gave out `count` more chunks of its batch.
    func report(_ count: Int) {
        request(channel.guarded.withLock { $0.report(count) })
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
/// read and not yet taken, how reading ended, and the waiting task. A take gets every chunk that
/// has arrived at once, as a batch, without a hop to the loop's thread; a task suspends only when
/// none is there, and the loop's thread wakes it once `batchSize` chunks are ready (or no read is
/// in flight), not at each chunk: each wake-up of a task is a thread's wake-up.
///
/// The room here is `readAhead` chunks: those waiting, and those lent to the consumer's batch
/// that it has not said it gave out. The reader's `readAhead` buffers are apart from it: reads
/// go on into them while the consumer is slow to wake, and a chunk that finds no room here
/// waits in its buffer (the reader stops there) until the consumer says it gave out some. It
/// says so every `batchSize` chunks (and at each take), not at each chunk, so as to hop to the
/// loop's thread at most once per `batchSize` chunks. So a consumer that stops taking leaves
/// `readAhead` chunks ready here less those it took since it last said so (fewer than
/// `batchSize`), by design, and `readAhead` more in the reader's buffers.
final class FileChunksChannel: FileChunkSink, Sendable {
    typealias Batch = [[UInt8]]
    typealias Continuation = UnsafeContinuation<Result<Batch, LoopError>, Never>

    /// What the loop's thread must be asked after a take.
    enum Request { case none, start, readOn, cancel }

    struct Guarded {
        /// Read and not yet taken.
        var chunks: Batch = []
        /// Taken into the consumer's batch and not yet said to be given out.
        var lent = 0
        var started = false
        /// A chunk found no room: the consumer's next report asks the reader to offer it again.
        var loopWaits = false
        /// How reading ended; nil after it was reported.
        var end: Result<Void, LoopError>?
        var finished = false
        var reader: (token: UInt64, continuation: Continuation)?
        var cancelledTake: UInt64 = 0
        var nextToken: UInt64 = 1
        /// How many times a waiting task was resumed.
        var wakes = 0

        var waiting: Int { chunks.count }

        /// The consumer gave out `count` chunks of its batch: they no longer hold room.
        mutating func report(_ count: Int) -> Request {
            lent -= count
            guard count > 0, loopWaits else { return .none }
            loopWaits = false
            return .readOn
        }

        /// Every chunk waiting, as the consumer's next batch.
        mutating func handOver() -> Batch {
            let batch = chunks
            chunks = []
            lent += batch.count
            return batch
        }

        /// What a take gets without waiting: the chunks waiting, else how reading ended (an
        /// empty batch at the end); nil when it must wait.
        mutating func takeReady() -> Result<Batch, LoopError>? {
            if !chunks.isEmpty { return .success(handOver()) }
            if finished { return .success([]) }
            if let end = self.end {
                self.end = nil
                finished = true
                return end.map { [] }
            }
            return nil
        }

        /// The waiting task was cancelled: the sequence ends, and what waits goes.
        mutating func finishCancelled() {
            finished = true
            chunks = []
        }
    }

    let readAhead: Int
    /// How many chunks a waiting task is woken for, and how often the consumer tells the reader
    /// of the chunks it gave out: half the room.
    let batchSize: Int
    let guarded = NativeMutex(Guarded())

    init(readAhead: Int) {
        self.readAhead = readAhead
        batchSize = max(1, readAhead / 2)
    }

    // MARK: the loop's side

    func chunk(_ buffer: FileBuffer) -> Bool {
        // Room is looked at before the copy, which is made outside the lock: only the consumer
        // changes the state meanwhile, and it only makes room or ends the sequence.
        let hasRoom = guarded.withLock { state in
            guard !state.finished, state.end == nil, state.chunks.count + state.lent >= readAhead else { return true }
            state.loopWaits = true
            return false
        }
        guard hasRoom else { return false }
        let chunk = Array(buffer.bytes)
        guarded.withLock { state in
            guard !state.finished, state.end == nil else { return }
            state.chunks.append(chunk)
        }
        return true
    }

    func settled(busy: Int) {
        let wake = guarded.withLock { state -> (Continuation, Batch)? in
            guard let reader = state.reader, !state.chunks.isEmpty, busy == 0 || state.chunks.count >= batchSize else {
                return nil
            }
            state.reader = nil
            state.wakes += 1
            return (reader.continuation, state.handOver())
        }
        if let (continuation, batch) = wake { resume(continuation, with: .success(batch)) }
    }

    func end(_ result: Result<Void, LoopError>) {
        let wake = guarded.withLock { state -> (Continuation, Result<Batch, LoopError>)? in
            guard !state.finished, state.end == nil else { return nil }
            state.end = result
            guard let reader = state.reader, let ready = state.takeReady() else { return nil }
            state.reader = nil
            state.wakes += 1
            return (reader.continuation, ready)
        }
        if let (continuation, ready) = wake { resume(continuation, with: ready) }
    }

    func loopIsEnding(_ refusal: LoopError) { end(.failure(refusal)) }

    // MARK: the task's side

    /// The next batch: at once when chunks wait (or reading has ended), else once enough arrive;
    /// empty at the end. `given` chunks of the last batch were given out since the last report.
    /// `consumer` asks the loop's thread to start the reader, read on, or cancel it.
    nonisolated(nonsending) func take(for consumer: FileChunksConsumer, returning given: Int) async -> Result<Batch, LoopError> {
        let (ready, ask, token) = guarded.withLock { state -> (Result<Batch, LoopError>?, Request, UInt64) in
            var ask = state.report(given)
            if let ready = state.takeReady() { return (ready, ask, 0) }
            Self.checkOneReader(state)
            if !state.started {
                state.started = true
                ask = .start
            }
            defer { state.nextToken &+= 1 }
            return (nil, ask, state.nextToken)
        }
        consumer.request(ask)
        if let ready { return ready }
        let result = await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: Continuation) in
                let ready = guarded.withLock { state -> Result<Batch, LoopError>? in
                    if state.cancelledTake == token {
                        state.finishCancelled()
                        return .failure(.cancelled)
                    }
                    if let ready = state.takeReady() { return ready }
                    Self.checkOneReader(state)
                    state.reader = (token, continuation)
                    return nil
                }
                if case .failure(.cancelled) = ready { consumer.request(.cancel) }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let waiting = guarded.withLock { state -> Continuation? in
                if let reader = state.reader, reader.token == token {
                    state.reader = nil
                    state.finishCancelled()
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
        // What the loop's thread wrote (the chunks) is this task's now.
        SanitizerHandoff.acquire(self)
        return result
    }

    private static func checkOneReader(_ state: Guarded) {
        misusePrecondition(
            state.reader == nil,
            "UVLoop: two tasks iterate the same FileChunks iterator at once; iterate it from one task")
    }

    /// Resumes the waiting task, telling ThreadSanitizer that the chunks written on this thread
    /// are the task's now (see `SanitizerHandoff`).
    private func resume(_ continuation: Continuation, with result: sending Result<Batch, LoopError>) {
        SanitizerHandoff.release(self)
        continuation.resume(returning: result)
    }
}
