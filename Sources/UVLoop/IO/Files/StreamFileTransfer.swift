/// One file sent into a stream, on the loop's thread: by `sendfile` on the thread pool (the bytes
/// go from the page cache to the socket without passing through this process), or by reading
/// chunks and writing them (for a destination that cannot take `sendfile`, and for
/// `write(contentsOf:)`).
///
/// - Order: the transfer starts once the writes queued before it have gone (the connection tells
///   it when its queue drains), and writes, shutdowns and transfers asked for meanwhile wait in
///   `held`, started in order when it ends.
/// - Backpressure: one `sendfile` call or one chunk is in flight at a time. A `sendfile` that
///   finds the socket's buffer full (`EAGAIN`) waits for the socket to become writable, polled
///   on a duplicate of its descriptor, so a slow peer costs neither memory nor a spinning loop;
///   a chunk's next read starts once the kernel has taken the previous one.
/// - End: once, with the count sent (fewer than asked when the file ends first) or the error.
///   A connection closed meanwhile ends it with the reason, from its close callback.
final class StreamFileTransfer {
    enum Held {
        case bytes([UInt8], ((LoopError?) -> Void)?)
        case shutdown(((LoopError?) -> Void)?)
        case transfer(StreamFileTransfer)
    }

    static let chunkSize = 64 * 1024
    /// The most one `sendfile` call sends: large enough to fill a socket's buffer, small enough
    /// that a close is noticed between two calls.
    static let sendfileLimit = 1 << 20

    private let stream: StreamConnectionCore
    private let file: LoopFileCore
    private var copying: Bool
    private var offset: Int64
    private var remaining: Int64
    private var sent: Int64 = 0
    private var completion: ((Result<Int64, LoopError>) -> Void)?
    private(set) var held: [Held] = []
    private var buffer: FileBuffer?
    private var watch: DescriptorWatch?
    private var watchedDescriptor: Int32 = -1
    /// The transfer in a box that the job and the watch carry (made per use: a box kept here
    /// would keep the transfer alive through itself).
    private var box: LoopConfinedObject<StreamFileTransfer> { LoopConfinedObject(self) }

    init(
        stream: StreamConnectionCore, file: LoopFileCore, offset: Int64, count: Int64?, copying: Bool,
        completion: @escaping (Result<Int64, LoopError>) -> Void
    ) {
        self.stream = stream
        self.file = file
        self.offset = offset
        remaining = count ?? .max
        self.copying = copying
        self.completion = completion
    }

    /// Starts the transfer, or queues it behind the one running.
    func start() throws(LoopError) {
        if let reason = stream.closeReason { throw reason }
        if stream.writesShutDown { throw .writesShutDown }
        try file.checkOpen()
        if let running = stream.fileTransfer {
            running.held.append(.transfer(self))
            return
        }
        begin()
    }

    /// Whether the transfer waits for the writes queued before it to leave.
    private var waitsForQueuedWrites = false

    /// Becomes the connection's running transfer, after the writes queued before it.
    private func begin() {
        stream.fileTransfer = self
        if stream.queuedWriteBytes > 0 { waitsForQueuedWrites = true } else { next() }
    }

    /// The connection's write queue is empty (told by the connection).
    func writeQueueDidDrain() {
        guard waitsForQueuedWrites else { return }
        waitsForQueuedWrites = false
        next()
    }

    private func next() {
        if let reason = stream.closeReason { return finish(.failure(reason)) }
        if let reason = file.closeReason { return finish(.failure(reason)) }
        if remaining == 0 { return finish(.success(sent)) }
        copying ? copyChunk() : sendChunk()
    }

    // MARK: sendfile

    private func sendChunk() {
        // The job sends through a duplicate of the socket that it owns until it finishes: the
        // connection may close (and its descriptor's number be reused) while the job waits for or
        // runs on a pool thread. A close shuts the socket down, so the duplicate sends nothing more.
        let output = TransferDescriptors.duplicate(stream.socketDescriptor)
        guard output >= 0 else { return finish(.failure(.libuv(TransferDescriptors.lastError, "fcntl(F_DUPFD_CLOEXEC)"))) }
        let job = SendFileJob(
            input: file.descriptor, output: output, offset: offset,
            count: Int(min(remaining, Int64(Self.sendfileLimit))), transfer: box)
        file.beginOutsideUse()
        stream.loop.engine.ioHandles.poolRequestsStarted(1)
        do throws(LoopError) {
            try stream.loop.queueWork(job)
        } catch {
            stream.loop.engine.ioHandles.poolRequestsStarted(-1)
            TransferDescriptors.close(output)
            file.endOutsideUse()
            finish(.failure(error))
        }
    }

    /// The `sendfile` call's result: a count, a negative `errno`, or nil when the loop's ending
    /// withdrew it.
    func sendDidFinish(_ result: Int?) {
        stream.loop.engine.ioHandles.poolRequestsStarted(-1)
        file.endOutsideUse()
        guard let result else { return finish(.failure(stream.loop.lifecycle.refusal)) }
        if let reason = stream.closeReason { return finish(.failure(reason)) }
        switch result {
        case 0: finish(.success(sent))  // the file ended first
        case 1...: advance(by: result)
        case TransferDescriptors.wouldBlock: waitUntilWritable()
        case _ where TransferDescriptors.unsupported.contains(result) && sent == 0:
            copying = true
            next()
        default:
            finish(.failure(.fileSystem(operation: "sendfile", path: file.path, code: Int32(truncatingIfNeeded: result))))
        }
    }

    private func advance(by count: Int) {
        sent += Int64(count)
        offset += Int64(count)
        if remaining != .max { remaining -= Int64(count) }
        next()
    }

    /// Whether the transfer waits for the socket to become writable (a slow peer).
    var isWaitingForWritability: Bool { watch != nil }

    private func waitUntilWritable() {
        let descriptor = TransferDescriptors.duplicate(stream.socketDescriptor)
        guard descriptor >= 0 else { return finish(.failure(.libuv(TransferDescriptors.lastError, "fcntl(F_DUPFD_CLOEXEC)"))) }
        watchedDescriptor = descriptor
        let box = box
        do throws(LoopError) {
            watch = try stream.loop.watchDescriptor(descriptor, for: .writable) { watch, result in
                watch.cancel()
                let transfer = box.value
                transfer.stopWatching()
                switch result {
                case .success: transfer.next()
                case .failure(let error): transfer.finish(.failure(error))
                }
            }
        } catch {
            stopWatching()
            finish(.failure(error))
        }
    }

    /// Closes the duplicate descriptor; its watch is cancelled (libuv no longer polls it).
    private func stopWatching() {
        watch?.cancel()
        watch = nil
        if watchedDescriptor >= 0 {
            TransferDescriptors.close(watchedDescriptor)
            watchedDescriptor = -1
        }
    }

    // MARK: copying

    private func copyChunk() {
        do throws(LoopError) {
            if buffer == nil { buffer = try FileBuffer(capacity: Self.chunkSize) }
            let buffer = buffer!
            let count = Int(min(remaining, Int64(Self.chunkSize)))
            try file.read(into: buffer, count: count, offset: offset) { [self] result in
                switch result {
                case .failure(let error): finish(.failure(error))
                case .success(0): finish(.success(sent))
                case .success(let count):
                    if let reason = stream.closeReason { return finish(.failure(reason)) }
                    ownWrite(buffer.bytes) { [self] error in
                        if let error { finish(.failure(error)) } else { advance(by: count) }
                    }
                }
            }
        } catch {
            finish(.failure(error))
        }
    }

    /// Writes for the transfer itself, past the writes it holds.
    private func ownWrite(_ bytes: UnsafeRawBufferPointer, _ completion: @escaping (LoopError?) -> Void) {
        stream.fileTransfer = nil
        defer { stream.fileTransfer = self }
        do throws(LoopError) {
            try stream.write(bytes, completion: completion)
        } catch {
            finish(.failure(error))
        }
    }

    // MARK: what waits behind the transfer

    func hold(_ bytes: UnsafeRawBufferPointer, _ completion: ((LoopError?) -> Void)?) {
        held.append(.bytes(Array(bytes), completion))
    }

    func holdShutdown(_ completion: ((LoopError?) -> Void)?) {
        held.append(.shutdown(completion))
    }

    // MARK: ending

    /// The connection is closing (no user code may run now): wake a wait for writability, which
    /// then sees the close. The socket is the connection's to close; the duplicate keeps it open
    /// until then.
    func connectionIsClosing() {
        if watchedDescriptor >= 0 { TransferDescriptors.shutdown(watchedDescriptor) }
    }

    /// The connection's close callback: a transfer waiting for writability ends here.
    func connectionDidClose() {
        if watch != nil {
            stopWatching()
            finish(.failure(stream.closeReason ?? .streamClosed))
        }
    }

    private func finish(_ result: Result<Int64, LoopError>) {
        guard let completion else { return }
        self.completion = nil
        stopWatching()
        buffer = nil
        if stream.fileTransfer === self { stream.fileTransfer = nil }
        // After what waited behind the transfer has been started: a write or transfer the
        // completion makes comes after those.
        defer {
            if stream.isOpen { stream.pendingWritesShrank(failure: nil) }
            completion(result)
        }
        // What waited behind the transfer, in order, until the next transfer takes over. The held
        // bytes are queued for real now (or held again by that transfer).
        var rest = held
        held = []
        stream.heldWriteBytes = 0
        while !rest.isEmpty {
            switch rest.removeFirst() {
            case .bytes(let bytes, let completion):
                let written = bytes.withUnsafeBytes { raw in
                    Result { () throws(LoopError) in try stream.write(raw, completion: completion) }
                }
                if case .failure(let error) = written { completion?(error) }
            case .shutdown(let completion):
                do throws(LoopError) { try stream.shutdownWrites(completion) } catch { completion?(error) }
            case .transfer(let transfer):
                transfer.held = rest
                stream.heldWriteBytes = rest.reduce(0) { total, held in
                    if case .bytes(let bytes, _) = held { return total + bytes.count }
                    return total
                }
                do throws(LoopError) {
                    try transfer.start()
                } catch {
                    transfer.finish(.failure(error))
                }
                return
            }
        }
    }
}
