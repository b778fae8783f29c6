import Glibc

/// The loop-thread state of one ``LoopFile``: its descriptor, the operations in flight on it, and
/// its closing. Loop thread only.
///
/// The descriptor is closed once, after the last operation in flight has finished (a pool thread
/// may still be using it): by `close` through the pool (`uv_fs_close`), or, when the loop is
/// ending and takes no more requests, at once on the loop's thread. Until then the file is one of
/// the loop's open handles, so that shutdown and detach close it.
final class LoopFileCore {
    /// Weak: an open file must not keep its loop from being released (which ends it, and closes
    /// the file).
    private weak var engine: LoopEngine?
    private let lifecycle: LoopLifecycle
    let path: String
    let descriptor: Int32
    /// Why the file takes no more operations: ``LoopError/fileClosed`` after `close`, the loop's
    /// refusal after its ending closed it.
    private(set) var closeReason: LoopError?
    /// Operations started whose completion has not run.
    private(set) var inFlight = 0
    private var closeStarted = false
    private(set) var descriptorClosed = false
    /// The error of the descriptor's close, once closed (nil when it closed cleanly).
    private var closeError: LoopError?
    /// Async `close()` calls waiting for the descriptor's close.
    private var closeWaiters: [(LoopError?) -> Void] = []

    init(engine: LoopEngine, path: String, descriptor: Int32) {
        self.engine = engine
        lifecycle = engine.lifecycle
        self.path = path
        self.descriptor = descriptor
        engine.ioHandles.register(ObjectIdentifier(self)) { [self] in loopIsEnding() }
    }

    /// The loop's requests; the loop's refusal once it is gone.
    private func requests() throws(LoopError) -> FileSystemRequests {
        guard let engine else { throw lifecycle.refusal }
        return engine.fileSystemRequests
    }

    /// Throws why the file takes no more operations, if it does not.
    func checkOpen() throws(LoopError) {
        if let closeReason { throw closeReason }
    }

    /// Starts one operation on the descriptor and counts it in flight.
    func start(
        _ operation: StaticString, completion: FileSystemCompletion, owner: (any FileSystemRequestOwner)? = nil,
        _ start: (FileSystemRequest, Int32) -> Int32
    ) throws(LoopError) {
        try checkOpen()
        let descriptor = descriptor
        try requests().start(operation, path: path, completion: completion, owner: owner ?? self) {
            start($0, descriptor)
        }
        inFlight += 1
    }

    /// Reads into `buffer` (see `LoopFile.read(into:count:at:_:)`).
    func read(into buffer: FileBuffer, count: Int, offset: Int64, _ completion: @escaping (Result<Int, LoopError>) -> Void) throws(LoopError) {
        try checkOpen()
        let base = buffer.lendForRead(count: count, for: self)
        do {
            try start("read", completion: .count(completion), owner: buffer) {
                $0.startRead(descriptor: $1, into: base, count: count, offset: offset)
            }
        } catch {
            buffer.giveBack()
            throw error
        }
    }

    /// Writes what `buffer` holds (see `LoopFile.write(from:at:_:)`).
    func write(from buffer: FileBuffer, offset: Int64, _ completion: @escaping (Result<Int, LoopError>) -> Void) throws(LoopError) {
        try checkOpen()
        let count = buffer.count
        let base = buffer.lendForWrite(for: self)
        do {
            try start("write", completion: .count(completion), owner: buffer) {
                $0.startWrite(descriptor: $1, from: base, count: count, offset: offset)
            }
        } catch {
            buffer.giveBack()
            throw error
        }
    }

    /// Counts a use of the descriptor outside the loop's requests (a `sendfile` on the thread
    /// pool) as an operation in flight, so that the descriptor stays open until it is done.
    func beginOutsideUse() { inFlight += 1 }

    func endOutsideUse() {
        inFlight -= 1
        if inFlight == 0, closeReason != nil { startClose() }
    }

    // MARK: closing

    /// Refuses new operations and closes the descriptor once none is in flight; `waiter`, if
    /// given, gets the close's error (nil when it closed cleanly). Idempotent.
    func close(_ waiter: ((LoopError?) -> Void)? = nil) {
        if closeReason == nil { closeReason = .fileClosed }
        if descriptorClosed {
            waiter?(closeError)
            return
        }
        if let waiter { closeWaiters.append(waiter) }
        if inFlight == 0 { startClose() }
    }

    /// Closes the descriptor through the pool, or at once when the loop takes no more requests.
    private func startClose() {
        guard !closeStarted else { return }
        closeStarted = true
        do throws(LoopError) {
            try requests().start("close", path: path, completion: .count { _ in }, owner: self) {
                $0.startClose(descriptor: descriptor)
            }
            inFlight += 1
        } catch {
            closeNow()
        }
    }

    /// Closes the descriptor on the loop's thread: the loop is ending, and a local file's close
    /// does not wait for a disk.
    private func closeNow() {
        let status = Glibc.close(descriptor)
        didCloseDescriptor(status == 0 ? nil : .fileSystem(operation: "close", path: path, code: -errno))
    }

    private func didCloseDescriptor(_ error: LoopError?) {
        descriptorClosed = true
        closeError = error
        engine?.ioHandles.unregister(ObjectIdentifier(self))
        let waiters = closeWaiters
        closeWaiters = []
        for waiter in waiters { waiter(error) }
    }

    /// The loop's ending: no more operations; the descriptor closes now, or after the operations
    /// in flight (which the ending withdrew, or which finish on a pool thread).
    private func loopIsEnding() {
        if closeReason == nil { closeReason = lifecycle.refusal }
        if inFlight == 0, !closeStarted {
            closeStarted = true
            closeNow()
        }
    }
}

extension LoopFileCore: FileSystemRequestOwner {
    /// An operation on the descriptor finished: the close that follows the last one starts, and
    /// the close's own request closes the file.
    func requestWillComplete(_ request: FileSystemRequest) {
        inFlight -= 1
        if request.isClose {
            if request.wasWithdrawn {
                closeNow()
            } else {
                let result = request.result
                didCloseDescriptor(result < 0 ? .fileSystem(operation: "close", path: path, code: Int32(truncatingIfNeeded: result)) : nil)
            }
        } else if inFlight == 0, closeReason != nil {
            startClose()
        }
    }
}
