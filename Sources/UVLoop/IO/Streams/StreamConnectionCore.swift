import CLibUV

/// The loop-thread state of one ``StreamConnection``: its libuv handle, its reading (callback or
/// async), its write queue and water marks, and how it closed. Also a connection still
/// connecting, before its `StreamConnection` exists. Loop thread only.
final class StreamConnectionCore: StreamCore {
    enum ReadMode { case idle, callback, async }
    enum ReadEnd { case end, failed(LoopError) }

    // The one-byte fields come first and together, the flags that change at most a few times in
    // a connection's life share one byte (`Flags`), and what only some connections use lives in
    // `extras` (StreamConnectionCore+Extras.swift): Swift lays a class's fields out in the order
    // they are declared, so scattered flags each cost an 8-byte slot, and every idle connection
    // carries this object. The flags a read or a write changes keep a byte each, which a store
    // sets without loading the others.

    // Reading.
    var readMode = ReadMode.idle
    private(set) var isReading = false
    // Writing.
    private(set) var isWritable = true
    /// The read handler is running: its writes are answers, which pause reading when they
    /// back up.
    var isDeliveringReads = false
    private var flags = Flags.pausesReadingWhileUnwritable

    /// The flags that change at most a few times in a connection's life; each is read and set
    /// through the property of its name below.
    private struct Flags: OptionSet {
        let rawValue: UInt8
        static let readHasEnded = Flags(rawValue: 1 << 0)
        static let writesShutDown = Flags(rawValue: 1 << 1)
        static let usesAsyncWrites = Flags(rawValue: 1 << 2)
        static let pausesReadingWhileUnwritable = Flags(rawValue: 1 << 3)
        static let wantsReading = Flags(rawValue: 1 << 4)
        static let readingPausedForWrites = Flags(rawValue: 1 << 5)
        static let resetOnClose = Flags(rawValue: 1 << 6)
    }

    @inline(__always)
    private func setFlag(_ flag: Flags, _ value: Bool) {
        if value { flags.formUnion(flag) } else { flags.subtract(flag) }
    }

    // Reading.
    /// Reading has ended: the peer's end, a read error, or the close that a read handler heard of
    /// as its last read.
    var readHasEnded: Bool {
        get { flags.contains(.readHasEnded) }
        set { setFlag(.readHasEnded, newValue) }
    }
    // Writing.
    private(set) var writesShutDown: Bool {
        get { flags.contains(.writesShutDown) }
        set { setFlag(.writesShutDown, newValue) }
    }
    /// Whether tasks have written through the async face: the loop then tells `asyncState` how
    /// its write queue drains.
    var usesAsyncWrites: Bool {
        get { flags.contains(.usesAsyncWrites) }
        set { setFlag(.usesAsyncWrites, newValue) }
    }
    // Flow control (StreamConnectionCore+FlowControl.swift).
    /// Whether the read handler's reading pauses while the write queue is above the high-water mark.
    var pausesReadingWhileUnwritable: Bool {
        get { flags.contains(.pausesReadingWhileUnwritable) }
        set { setFlag(.pausesReadingWhileUnwritable, newValue) }
    }
    /// Whether the user wants the read handler to get reads (startReading, not stopReading).
    var wantsReading: Bool {
        get { flags.contains(.wantsReading) }
        set { setFlag(.wantsReading, newValue) }
    }
    /// Reading was paused by the write queue (this connection's, or a pipe's destination's); it
    /// resumes when that queue drains to its low-water mark.
    var readingPausedForWrites: Bool {
        get { flags.contains(.readingPausedForWrites) }
        set { setFlag(.readingPausedForWrites, newValue) }
    }
    // Closing.
    /// The next close resets the connection (TCP `SO_LINGER` 0) instead of closing it gracefully.
    private var resetOnClose: Bool {
        get { flags.contains(.resetOnClose) }
        set { setFlag(.resetOnClose, newValue) }
    }

    /// The public object, once connected or accepted; dropped when libuv is done with the handle.
    var connection: StreamConnection?

    // Reading.
    var readHandler: ((StreamConnection, StreamRead) -> Void)?
    /// Async face: what the reading and writing tasks share with this thread, once they have
    /// used it (see `asyncState(for:)`); kept by the public connection.
    var asyncState: StreamAsyncState? { connection?.existingAsyncState }
    /// The chunks the async face read and its reader has not taken yet.
    var bufferedReadBytes: Int { asyncState?.bufferedBytes ?? 0 }

    // Writing.
    private(set) var queuedWriteBytes = 0
    /// What counts against the water marks: the write queue and the bytes held behind a transfer.
    var pendingWriteBytes: Int { queuedWriteBytes + heldWriteBytes }
    /// Completions of writes the kernel took at once: they run after `write` returned, from a
    /// posted job, and before any later write's completion. Appended to, and emptied before
    /// the completions run (`runFinishedCompletions`), on the loop's thread: no access overlaps
    /// another, so it goes without the run-time exclusivity check that each close would pay.
    @exclusivity(unchecked) private var finishedCompletions: [(LoopError?) -> Void] = []

    /// The listener that accepted this connection, which drains it.
    weak var acceptingListener: StreamListenerCore?
    /// What only some connections use (a writability handler, pipes, a framed reader's resumer,
    /// a flushing close, a file transfer, a read buffer limit or water marks other than the
    /// defaults), made on first use: see StreamConnectionCore+Extras.swift.
    var extras: StreamConnectionExtras?

    /// A simulated socket, or a descriptor someone else opened (see `StreamCore.origin`): kept in
    /// `extras`, as nearly all connections have neither.
    override var origin: StreamOrigin? {
        get { extras?.origin }
        set { if newValue != nil || extras != nil { madeExtras.origin = newValue } }
    }

    /// Creates the handle and records it with the loop, which closes it at shutdown or detach.
    init(loop: Loop, kind: StreamHandle.Kind, socketFamily: Int32? = nil) throws(LoopError) {
        try super.init(loop: loop)
        try openStream(kind, socketFamily: socketFamily)
    }

    /// Opens a stream of a simulated network's host.
    init(loop: Loop, simulated: SimulatedStream) throws(LoopError) {
        try super.init(loop: loop)
        try openSimulatedStream(simulated)
    }

    /// Opens a stream on a descriptor someone else opened (see `Loop.openConnection`).
    init(loop: Loop, descriptor: Int32, kind: StreamHandle.Kind, ownership: DescriptorOwnership, ipc: Bool = false) throws(LoopError) {
        try super.init(loop: loop)
        try openStream(descriptor: descriptor, kind: kind, ownership: ownership, ipc: ipc)
    }

    // MARK: closing

    /// Closes the handle with a reset (the peer reads `ECONNRESET`). Idempotent.
    func closeWithReset(reason: LoopError) {
        guard isOpen else { return }
        resetOnClose = true
        close(reason: reason)
    }

    override func closeNative(_ native: StreamHandle) {
        // The descriptor closes now: its addresses are read first if nobody has read them.
        connection?.keepAddressesBeforeClosing()
        if resetOnClose { native.closeWithReset() } else { native.close() }
    }

    /// Fails whatever waits and forgets the writability handler. Calls no user code (the loop's
    /// ending requires it).
    override func didClose(reason: LoopError) {
        fileTransfer?.connectionIsClosing()
        isReading = false
        closedForFlowControl()
        writableHandler = nil
        asyncState?.close(reason)
    }

    override func streamDidClose() {
        // Completions of writes the kernel took: they succeeded.
        runFinishedCompletions()
        fileTransfer?.connectionDidClose()
        if let reason = closeReason, reason != .streamClosed, readMode == .callback, !readHasEnded,
           let handler = readHandler, let connection {
            readHasEnded = true
            handler(connection, .failed(reason))
        }
        readHandler = nil
        readResumer = nil
        writableHandler = nil
        endPipes(reason: closeReason ?? .streamClosed)
        connection = nil
    }

    // MARK: reading

    /// Starts libuv's reading unless it runs, has ended, or the connection is closed.
    /// - Returns: libuv's error, if it refused.
    @discardableResult
    func resumeReading() -> LoopError? {
        guard !isReading, !readHasEnded, closeReason == nil else { return nil }
        let status = handle.startReading()
        guard status == 0 else { return .libuv(status, "uv_read_start") }
        isReading = true
        return nil
    }

    func pauseReading() {
        guard isReading else { return }
        handle.stopReading()
        isReading = false
    }

    override func streamDidRead(_ bytes: UnsafeRawBufferPointer) {
        // As the loop's own callbacks run: a detach or shutdown asked for inside finishes when
        // it returns, and work it queued gets the idle handle it needs.
        asIOCallback { handleDidRead(bytes) }
    }

    /// `LoopEngine.runIOCallback`, for the callbacks of every read and write: inlined, with the
    /// engine borrowed from the loop (`withValue`), it costs no closure and no retain and release
    /// of the core or the engine per call.
    @inline(__always)
    private func asIOCallback(_ body: () -> Void) {
        loop.confined.withValue { engine in
            let outermost = engine.beginIOCallback()
            body()
            engine.endIOCallback(outermost)
        }
    }

    private func handleDidRead(_ bytes: UnsafeRawBufferPointer) {
        switch readMode {
        case .callback:
            guard let handler = readHandler, let connection else { return }
            isDeliveringReads = true
            handler(connection, .bytes(bytes))
            isDeliveringReads = false
        case .async:
            // A reader that does not keep up: leave the rest in the kernel (and the peer).
            guard let asyncState else { return }
            let chunk = loop.engine.ioHandles.streamChunkRecycler.chunk(copying: bytes)
            if asyncState.deliver(chunk) { pauseReading() }
        case .idle:
            if flushingClose != nil { flushingCloseDiscardedARead() }
        }
    }

    override func streamReadDidEnd(_ status: Int32) {
        // As the loop's own callbacks run: a detach or shutdown asked for inside finishes when
        // it returns, and work it queued gets the idle handle it needs.
        asIOCallback { handleReadDidEnd(status) }
    }

    private func handleReadDidEnd(_ status: Int32) {
        isReading = false
        let end: ReadEnd = status == UV_EOF.rawValue ? .end : .failed(.libuv(status, "read"))
        readHasEnded = true
        if let flushing = flushingClose {
            flushing.peerEnded = true
            return finishFlushingClose()
        }
        switch readMode {
        case .callback:
            guard let handler = readHandler, let connection else { return }
            if case .failed(let error) = end { handler(connection, .failed(error)) } else { handler(connection, .end) }
        case .async:
            switch end {
            case .end: asyncState?.endReads(.success([UInt8]?.none))
            case .failed(let error): asyncState?.endReads(.failure(error))
            }
        case .idle:
            break
        }
    }

    // MARK: writing

    /// Writes what the kernel takes at once and queues the rest (see `StreamHandle.write`).
    func write(_ bytes: UnsafeRawBufferPointer, completion: ((LoopError?) -> Void)?) throws(LoopError) {
        // The open check first: `closeReason` builds an optional error, on every write.
        if !isOpen, let reason = closeReason { throw reason }
        if writesShutDown { throw .writesShutDown }
        if extras != nil, let fileTransfer {
            fileTransfer.hold(bytes, completion)
            heldWriteBytes += bytes.count
            if isWritable, pendingWriteBytes > highWaterMark { isWritable = false }
            return
        }
        switch handle.write(bytes, tryFirst: queuedWriteBytes == 0, completion: completion) {
        case .written:
            if let completion { addFinishedCompletion(completion) }
        case .queued(let count):
            queuedWriteBytes += count
            if isWritable, pendingWriteBytes > highWaterMark { isWritable = false }
            if !isWritable, isDeliveringReads { answersAreBackedUp() }
        case .failed(let status):
            throw .libuv(status, "uv_write")
        }
    }

    private func addFinishedCompletion(_ completion: @escaping (LoopError?) -> Void) {
        finishedCompletions.append(completion)
        guard finishedCompletions.count == 1, let connection else { return }
        // Runs on the loop's thread, in a later callback than the one that wrote.
        try? loop.post { connection.box.value.runFinishedCompletions() }
    }

    private func runFinishedCompletions() {
        guard !finishedCompletions.isEmpty else { return }
        let completions = finishedCompletions
        finishedCompletions.removeAll()
        for completion in completions { completion(nil) }
    }

    override func streamWriteDidFinish(byteCount: Int, completion: ((LoopError?) -> Void)?, status: Int32) {
        // As the loop's own callbacks run: a detach or shutdown asked for inside finishes when
        // it returns, and work it queued gets the idle handle it needs.
        asIOCallback { handleWriteDidFinish(byteCount: byteCount, completion: completion, status: status) }
    }

    private func handleWriteDidFinish(byteCount: Int, completion: ((LoopError?) -> Void)?, status: Int32) {
        queuedWriteBytes -= byteCount
        runFinishedCompletions()
        var error: LoopError?
        if status != 0 {
            error = status == UV_ECANCELED.rawValue ? (closeReason ?? .streamClosed) : .libuv(status, "write")
        }
        var unreported: LoopError?
        if let completion {
            completion(error)
        } else if let error, closeReason == nil {
            unreported = error
            incomingPipe?.finish(error)
        }
        // The async face's writers wait on the queue's size, and hear of a failed write.
        pendingWritesShrank(failure: unreported)
        if queuedWriteBytes == 0, flushingClose != nil { finishFlushingClose() }
        if queuedWriteBytes == 0, let fileTransfer { fileTransfer.writeQueueDidDrain() }
    }

    /// The bytes counted against the water marks went down (a write finished, or what a file
    /// transfer held was queued): tells the async face's writers, and becomes writable again at
    /// the low-water mark. `failure` is a write's error that no completion heard of.
    func pendingWritesShrank(failure: LoopError?) {
        if usesAsyncWrites { asyncState?.queueChanged(queuedBytes: pendingWriteBytes, failure: failure) }
        if !isWritable, pendingWriteBytes <= lowWaterMark, closeReason == nil {
            isWritable = true
            didBecomeWritable()
            if let handler = writableHandler, let connection { handler(connection) }
        }
    }

    /// Half-closes: shuts the writing side down once the queued writes are done.
    func shutdownWrites(_ completion: ((LoopError?) -> Void)?) throws(LoopError) {
        if let reason = closeReason { throw reason }
        if writesShutDown { throw .writesShutDown }
        if let fileTransfer { return fileTransfer.holdShutdown(completion) }
        let status = handle.shutdownWrites { [self] status in
            guard let completion else { return }
            if status == 0 { return completion(nil) }
            completion(status == UV_ECANCELED.rawValue ? (closeReason ?? .streamClosed) : .libuv(status, "shutdown"))
        }
        guard status == 0 else { throw .libuv(status, "uv_shutdown") }
        writesShutDown = true
        asyncState?.writesWereShutDown()
    }

    func setWaterMarks(low: Int, high: Int) throws(LoopError) {
        guard low >= 0, low <= high else {
            throw .invalidArgument("write water marks need 0 <= low <= high (got low \(low), high \(high))")
        }
        lowWaterMark = low
        highWaterMark = high
        asyncState?.setWaterMarks(low: low, high: high)
        if isWritable, pendingWriteBytes > high { isWritable = false }
    }
}
