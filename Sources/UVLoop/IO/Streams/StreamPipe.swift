/// One pipe from a source connection into a destination connection: the source's reads are
/// written to the destination, the source pauses while the destination's queue is above its
/// high-water mark, and the pipe ends once (the source's end, an error, a close of either side).
/// Loop thread only.
///
/// The source's read handler holds the pipe and the pipe holds both cores; `finish` lets go of
/// everything, and every way a pipe ends calls it (a close of either core does, from its close
/// callback).
final class StreamPipeCore {
    let source: StreamConnectionCore
    let destination: StreamConnectionCore
    private let endsDestination: Bool
    private var completion: ((LoopError?) -> Void)?
    private var isFinished = false

    init(
        source: StreamConnectionCore, destination: StreamConnectionCore, endsDestination: Bool,
        completion: ((LoopError?) -> Void)?
    ) {
        self.source = source
        self.destination = destination
        self.endsDestination = endsDestination
        self.completion = completion
    }

    func start() throws(LoopError) {
        if let reason = source.closeReason ?? destination.closeReason { throw reason }
        if source.flushingClose != nil { throw .streamClosed }
        if destination.writesShutDown { throw .writesShutDown }
        source.outgoingPipe = self
        destination.incomingPipe = self
        source.readHandler = { [self] _, read in sourceDidRead(read) }
        source.readResumer = nil
        source.readMode = .callback
        source.wantsReading = true
        if !destination.isWritable {
            source.readingPausedForWrites = true
        } else if let error = source.resumeReading() {
            completion = nil   // the caller learns it from the throw
            finish(error, closing: false)
            throw error
        }
    }

    private func sourceDidRead(_ read: StreamRead) {
        switch read {
        case .bytes(let bytes):
            do throws(LoopError) {
                try destination.write(bytes, completion: nil)
            } catch {
                return finish(error)
            }
            if !destination.isWritable, !source.readingPausedForWrites {
                source.readingPausedForWrites = true
                source.pauseReading()
            }
        case .end:
            guard endsDestination, !destination.writesShutDown else { return finish(nil) }
            source.readHandler = nil
            do throws(LoopError) {
                try destination.shutdownWrites { [self] error in finish(error) }
            } catch {
                finish(error)
            }
        case .failed(let error):
            finish(error)
        }
    }

    /// The destination's queue drained to its low-water mark.
    func destinationIsWritable() {
        source.resumeAfterWritePause()
    }

    /// Ends the pipe once: an error closes both connections (a `.cancelled` leaves them open);
    /// then the completion runs.
    func finish(_ error: LoopError?, closing: Bool = true) {
        guard !isFinished else { return }
        isFinished = true
        if source.outgoingPipe === self {
            source.outgoingPipe = nil
            source.readingPausedForWrites = false
            if source.isOpen {
                source.pauseReading()
                source.wantsReading = false
                source.readHandler = nil
                source.readMode = .idle
            }
        }
        if destination.incomingPipe === self { destination.incomingPipe = nil }
        if let error, error != .cancelled, closing {
            source.close(reason: .streamClosed)
            destination.close(reason: .streamClosed)
        }
        let completion = completion
        self.completion = nil
        completion?(error)
    }
}

extension StreamConnection {
    /// Pipes this connection's reads into `destination`, as Node's `pipe` does: what arrives
    /// here is written there, and reading here pauses while `destination`'s write queue is above
    /// its high-water mark (resuming at the low one), so a slow destination holds this side's
    /// peer back instead of filling memory. Loop thread only.
    ///
    /// The pipe ends once, and `completion` then runs on the loop's thread:
    /// - with nil when this side's peer ended its stream, after `destination`'s writing side was
    ///   shut down (unless `endingDestination` is false). Both connections stay open.
    /// - with the error when reading here or writing there fails, or when either connection is
    ///   closed (``LoopError/streamClosed``, or the loop's ``LoopError/shutDown``): both
    ///   connections are then closed, as a unit.
    /// - with ``LoopError/streamClosed`` when either connection closes after flushing
    ///   (``closeAfterFlushing(within:)->()``): the other one stays open.
    ///
    /// A proxy pipes each side into the other. While piped, this connection has no other reader:
    /// ``startReading(_:)`` on it stops the program.
    /// - Parameters:
    ///   - destination: where the bytes go; it may be this connection itself (an echo).
    ///   - endingDestination: whether the end of this stream half-closes `destination`.
    ///   - completion: told how the pipe ended.
    /// - Throws: ``LoopError/streamClosed`` when either connection is closed,
    ///   ``LoopError/writesShutDown`` when `destination`'s writes were shut down,
    ///   ``LoopError/libuv(function:code:)`` when reading cannot start.
    public func pipe(
        to destination: StreamConnection, endingDestination: Bool = true,
        _ completion: ((LoopError?) -> Void)? = nil
    ) throws(LoopError) {
        let source = core("StreamConnection.pipe(to:endingDestination:_:)")
        misusePrecondition(
            destination.loop === loop,
            "UVLoop: pipe(to:) into a StreamConnection of another loop; pipe between connections of one loop (or copy with reads and write across loops)")
        let target = destination.box.value
        misusePrecondition(
            source.readMode != .async,
            "UVLoop: pipe(to:) on a StreamConnection whose reads sequence is in use; use one way of reading")
        misusePrecondition(
            source.outgoingPipe == nil, "UVLoop: pipe(to:) on a StreamConnection that is piped already; a connection has one reader")
        misusePrecondition(
            target.incomingPipe == nil,
            "UVLoop: pipe(to:) into a StreamConnection that another pipe writes to already; pipe one source into it at a time")
        try StreamPipeCore(source: source, destination: target, endsDestination: endingDestination, completion: completion).start()
    }

    /// Pipes this connection's reads into `destination` (see
    /// ``pipe(to:endingDestination:_:)``) and waits until the pipe ends. Callable from any task.
    /// - Parameters:
    ///   - destination: where the bytes go.
    ///   - endingDestination: whether the end of this stream half-closes `destination`.
    /// - Throws: how the pipe failed (both connections are closed then),
    ///   ``LoopError/invalidArgument(_:)`` when either connection is read already or the two
    ///   belong to different loops, and ``LoopError/cancelled`` when the task is cancelled: the
    ///   pipe stops, and both connections stay open.
    public func pipe(to destination: StreamConnection, endingDestination: Bool = true) async throws(LoopError) {
        guard destination.loop === loop else {
            throw .invalidArgument("pipe(to:) connects two connections of one loop; this destination belongs to another loop")
        }
        let box = box
        let targetBox = destination.box
        try await loop.suspendOnLoopThread { (waiter, continuation: LoopContinuation<Void>) in
            if waiter.isCancelled { return continuation.resume(throwing: .cancelled) }
            let source = box.value
            guard source.outgoingPipe == nil, targetBox.value.incomingPipe == nil, source.readMode != .async else {
                return continuation.resume(
                    throwing: .invalidArgument("pipe(to:) needs a source that no pipe or reads sequence reads, into a destination no other pipe writes to"))
            }
            let pipe = StreamPipeCore(source: source, destination: targetBox.value, endsDestination: endingDestination) { error in
                if let error { continuation.resume(throwing: error) } else { continuation.resume() }
            }
            do throws(LoopError) {
                try pipe.start()
            } catch {
                continuation.resume(throwing: error)
            }
        } cancel: { _ in
            box.value.outgoingPipe?.finish(.cancelled)
        }
    }
}
