/// What a framed read handler receives (see
/// ``StreamConnection/startReading(framing:pausingWhileUnwritable:_:)``).
///
/// Loop thread only, like the handler itself.
public enum StreamFrame {
    /// One whole frame, without its delimiter or length prefix. The buffer is lent for the
    /// duration of the handler's call only: copy what you keep (`Array(bytes)`).
    case frame(UnsafeRawBufferPointer)
    /// A frame was longer than the framing's `maxLength`: reading has stopped, and no frame
    /// follows. The connection stays open for writing: answer if the protocol says so, then
    /// close it with ``StreamConnection/closeAfterFlushing(within:)->()`` so that the answer arrives.
    case tooLong(maxLength: Int)
    /// The peer shut down its writing side. A last line (or delimited frame) without its end
    /// came as a frame first.
    case end
    /// Reading failed, as ``StreamRead/failed(_:)`` says, or the stream ended inside a
    /// length-prefixed frame (``LoopError/incompleteFrame(byteCount:)``).
    case failed(LoopError)
}

/// The callback face's framing: splits the connection's reads into frames and hands them to the
/// user's handler one by one, stopping between two frames when reading pauses (the write queue
/// rose above its high-water mark, or the handler stopped reading), and going on with the frames
/// it kept when reading resumes. Loop thread only.
final class FramedReader {
    private var decoder: FrameDecoder
    private let handler: (StreamConnection, StreamFrame) -> Void
    private var isDelivering = false
    /// Reading has ended here: an over-long frame, the end of the stream, or a failure.
    private var hasStopped = false

    init(_ framing: StreamFraming, _ handler: @escaping (StreamConnection, StreamFrame) -> Void) {
        decoder = FrameDecoder(framing)
        self.handler = handler
    }

    func read(_ core: StreamConnectionCore, _ connection: StreamConnection, _ read: StreamRead) {
        guard !hasStopped else { return }
        switch read {
        case .bytes(let bytes):
            deliver(core, connection) { decoder, goOn, deliver in decoder.feed(bytes, shouldGoOn: goOn, deliver: deliver) }
        case .end:
            hasStopped = true
            let rest = decoder.takeKept()
            if !rest.isEmpty {
                if decoder.framing.partialFrameIsError {
                    return handler(connection, .failed(.incompleteFrame(byteCount: rest.count)))
                }
                rest.withUnsafeBytes { handler(connection, .frame($0)) }
            }
            handler(connection, .end)
        case .failed(let error):
            hasStopped = true
            handler(connection, .failed(error))
        }
    }

    /// Reading resumes: the kept frames first, then the socket.
    func resume(_ core: StreamConnectionCore) {
        if isDelivering {
            // startReading() from within the handler: the delivery under way goes on.
            core.resumeReading()
            return
        }
        guard !hasStopped, let connection = core.connection else { return }
        if decoder.hasKeptBytes {
            deliver(core, connection) { decoder, goOn, deliver in decoder.drainKept(shouldGoOn: goOn, deliver: deliver) }
        } else if core.deliversReads {
            core.resumeReading()
        }
    }

    private func deliver(
        _ core: StreamConnectionCore, _ connection: StreamConnection,
        _ step: (inout FrameDecoder, () -> Bool, (UnsafeRawBufferPointer) -> Void) -> FrameDecoder.Outcome
    ) {
        isDelivering = true
        let wasDelivering = core.isDeliveringReads
        core.isDeliveringReads = true
        let handler = handler
        let outcome = step(&decoder, { core.deliversReads }, { frame in handler(connection, .frame(frame)) })
        core.isDeliveringReads = wasDelivering
        isDelivering = false
        switch outcome {
        case .tooLong:
            hasStopped = true
            core.pauseReading()
            handler(connection, .tooLong(maxLength: decoder.framing.maxLength))
        case .paused:
            core.pauseReading()
        case .needsMore:
            if core.deliversReads { core.resumeReading() }
        }
    }
}

extension StreamConnection {
    /// Starts reading frames: `handler` runs on the loop's thread with each whole frame, then
    /// once with ``StreamFrame/end``, ``StreamFrame/tooLong(maxLength:)`` or
    /// ``StreamFrame/failed(_:)``. Loop thread only.
    ///
    /// A frame whole in one read is lent from the loop's read buffer, without a copy; a frame
    /// split over reads is gathered in a buffer of the connection first. While
    /// `pausingWhileUnwritable` (the default), frames stop reaching `handler` as soon as one of
    /// its writes leaves the write queue above its high-water mark, and go on once it has
    /// drained to the low-water mark, frame by frame: a peer that pipelines requests and reads
    /// no answers leaves at most the water mark plus one frame's answers queued.
    ///
    /// Calling it again, or ``startReading(_:)``, replaces the handler (frames kept from the
    /// previous one are dropped). ``stopReading()`` and ``startReading()`` pause and resume
    /// between two frames.
    /// - Parameters:
    ///   - framing: how the bytes split into frames, and the longest frame accepted.
    ///   - pausingWhileUnwritable: whether reading follows the write queue; false leaves it to
    ///     you (``isWritable``, ``setWritableHandler(_:)``).
    ///   - handler: what to do with each frame.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for a framing that cannot be used; otherwise
    ///   like ``startReading(_:)``.
    public func startReading(
        framing: StreamFraming, pausingWhileUnwritable: Bool = true,
        _ handler: @escaping (StreamConnection, StreamFrame) -> Void
    ) throws(LoopError) {
        let core = core("StreamConnection.startReading(framing:pausingWhileUnwritable:_:)")
        misusePrecondition(
            core.readMode != .async,
            "UVLoop: startReading(framing:) on a StreamConnection whose reads or frames sequence is in use; use one way of reading")
        misusePrecondition(
            core.outgoingPipe == nil,
            "UVLoop: startReading(framing:) on a StreamConnection that pipe(to:) reads; a connection has one reader")
        try framing.validate()
        if let reason = core.closeReason { throw reason }
        if core.flushingClose != nil { throw .streamClosed }
        let reader = FramedReader(framing, handler)
        core.readHandler = { connection, read in reader.read(connection.box.value, connection, read) }
        core.readResumer = { core in reader.resume(core) }
        core.pausesReadingWhileUnwritable = pausingWhileUnwritable
        core.readMode = .callback
        if let error = core.userStartsReading() { throw error }
    }

    /// The frames arriving on the connection, as an `AsyncSequence` of byte arrays: iterate it
    /// from one task at a time, on any executor.
    ///
    /// Built on ``reads`` (and buffered like it): it ends at the end of the stream (after a last
    /// line or delimited frame without its end), and throws ``LoopError/frameTooLong(maxLength:)``
    /// for a frame longer than the limit (the connection stays open: answer, then close it),
    /// ``LoopError/incompleteFrame(byteCount:)`` when the stream ends inside a length-prefixed
    /// frame, ``LoopError/invalidArgument(_:)`` for a framing that cannot be used, and what
    /// ``reads`` throws. Bytes read past the last frame taken stay in the iterator.
    /// - Parameter framing: how the bytes split into frames, and the longest frame accepted.
    /// - Returns: the sequence.
    public func frames(_ framing: StreamFraming) -> StreamFrames {
        StreamFrames(connection: self, framing: framing)
    }
}

/// The frames read from a ``StreamConnection``: see ``StreamConnection/frames(_:)``.
public struct StreamFrames: AsyncSequence, Sendable {
    /// One frame, without its delimiter or length prefix.
    public typealias Element = [UInt8]
    /// Why reading failed, a frame was too long, or the waiting task was cancelled.
    public typealias Failure = LoopError

    let connection: StreamConnection
    let framing: StreamFraming

    /// Returns the iterator; iterate from one task at a time.
    public func makeAsyncIterator() -> Iterator {
        Iterator(reads: connection.reads.makeAsyncIterator(), decoder: FrameDecoder(framing))
    }

    /// Produces the frames; see ``StreamConnection/frames(_:)``.
    public struct Iterator: AsyncIteratorProtocol {
        /// One frame, without its delimiter or length prefix.
        public typealias Element = [UInt8]
        /// Why reading failed, a frame was too long, or the waiting task was cancelled.
        public typealias Failure = LoopError

        var reads: StreamReads.Iterator
        var decoder: FrameDecoder
        private var ready: [[UInt8]] = []
        private var readyHead = 0
        private var finish: Result<Void, LoopError>?

        init(reads: StreamReads.Iterator, decoder: FrameDecoder) {
            self.reads = reads
            self.decoder = decoder
        }

        /// The next frame, or nil at the end of the stream.
        /// - Throws: see ``StreamConnection/frames(_:)``.
        public mutating func next() async throws(LoopError) -> [UInt8]? {
            try await next(isolation: nil)
        }

        /// The next frame, or nil at the end of the stream. Waits on the caller's actor
        /// (`isolation`, the caller's by default), as `for try await` asks.
        /// - Parameter actor: the caller's actor; leave the default.
        /// - Throws: see ``StreamConnection/frames(_:)``.
        public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async throws(LoopError) -> [UInt8]? {
            if finish == nil {
                do throws(LoopError) {
                    try decoder.framing.validate()
                } catch {
                    finish = .failure(error)
                }
            }
            while true {
                if readyHead < ready.count {
                    defer { readyHead += 1 }
                    return ready[readyHead]
                }
                ready.removeAll(keepingCapacity: true)
                readyHead = 0
                if let finish { return try finish.map { nil }.get() }
                guard let chunk = try await reads.next(isolation: actor) else {
                    finishAtEnd()
                    continue
                }
                var frames: [[UInt8]] = []
                let outcome = chunk.withUnsafeBytes { bytes in
                    decoder.feed(bytes, shouldGoOn: { true }, deliver: { frames.append(Array($0)) })
                }
                ready = frames
                if outcome == .tooLong { finish = .failure(.frameTooLong(maxLength: decoder.framing.maxLength)) }
            }
        }

        private mutating func finishAtEnd() {
            let rest = decoder.takeKept()
            if rest.isEmpty {
                finish = .success(())
            } else if decoder.framing.partialFrameIsError {
                finish = .failure(.incompleteFrame(byteCount: rest.count))
            } else {
                ready = [rest]
                finish = .success(())
            }
        }
    }
}
