/// The loop-thread state of one ``StreamListener``: its handle, and where accepted connections
/// go (a handler, or the queue that ``StreamListener/connections`` reads). Loop thread only.
final class StreamListenerCore: StreamCore {
    /// Accepted connections the async face buffers before it stops accepting (the rest wait in
    /// the kernel's backlog).
    static let acceptQueueLimit = 64

    var handler: ((Result<StreamConnection, LoopError>) -> Void)?
    private var accepted: [Result<StreamConnection, LoopError>] = []
    private var acceptedHead = 0
    /// A connection waits in libuv, not accepted because the queue is full.
    private var acceptPending = false
    private var acceptWaiter: (waiter: StreamWaiter, continuation: LoopContinuation<StreamConnection?>)?
    /// How many connections accepted here are still open, which a drain waits for (each knows
    /// its listener: `StreamConnectionCore.acceptingListener`).
    var openConnectionCount = 0
    /// A drain under way (see StreamListener+Drain.swift).
    var drain: ListenerDrain?
    private var storedOrigin: StreamOrigin?

    override var origin: StreamOrigin? {
        get { storedOrigin }
        set { storedOrigin = newValue }
    }

    init(loop: Loop, kind: StreamHandle.Kind, socketFamily: Int32?) throws(LoopError) {
        try super.init(loop: loop)
        try openStream(kind, socketFamily: socketFamily)
    }

    /// Listens on a simulated network's host.
    init(loop: Loop, simulated: SimulatedStream) throws(LoopError) {
        try super.init(loop: loop)
        try openSimulatedStream(simulated)
    }

    /// Listens on a socket someone else opened (see `Loop.listen(descriptor:)`).
    init(loop: Loop, descriptor: Int32, kind: StreamHandle.Kind, ownership: DescriptorOwnership) throws(LoopError) {
        try super.init(loop: loop)
        try openStream(descriptor: descriptor, kind: kind, ownership: ownership, ipc: false)
    }

    /// Closes the connections accepted but not taken (the async face). Calls no user code.
    override func didClose(reason: LoopError) {
        for case .success(let connection) in accepted[acceptedHead...] {
            connection.box.value.close(reason: reason)
        }
        accepted.removeAll()
        acceptedHead = 0
        if let waiting = acceptWaiter {
            acceptWaiter = nil
            // The end of the sequence for close(); the loop's reason otherwise.
            if reason == .streamClosed {
                waiting.continuation.resume(returning: nil)
            } else {
                waiting.continuation.resume(throwing: reason)
            }
        }
    }

    override func streamDidClose() {
        if let reason = closeReason, reason != .streamClosed, let handler { handler(.failure(reason)) }
        handler = nil
    }

    override func streamConnectionIsReady(_ status: Int32) {
        // As the loop's own callbacks run: a detach or shutdown asked for inside finishes when
        // it returns, and work it queued gets the idle handle it needs.
        loop.engine.runIOCallback { handleConnectionIsReady(status) }
    }

    private func handleConnectionIsReady(_ status: Int32) {
        guard status == 0 else { return deliver(.failure(.libuv(status, "accept"))) }
        if handler == nil, accepted.count - acceptedHead >= Self.acceptQueueLimit {
            // libuv stops watching the socket until the connection is accepted.
            acceptPending = true
            return
        }
        acceptOne()
    }

    private func acceptOne() {
        let client: StreamConnectionCore
        do {
            if let accepted = handle.simulated?.takeAccepted() {
                client = try StreamConnectionCore(loop: loop, simulated: accepted)
            } else {
                client = try StreamConnectionCore(loop: loop, kind: handle.kind)
            }
        } catch {
            return deliver(.failure(error))
        }
        let status = handle.accept(into: client.handle)
        guard status == 0 else {
            client.close(reason: .streamClosed)
            return deliver(.failure(.libuv(status, "uv_accept")))
        }
        client.acceptingListener = self
        openConnectionCount += 1
        let connection = StreamConnection(core: client)
        // Tasks read and write what the async face accepts: its state made here saves each
        // task's first call a hop to this thread.
        if handler == nil { _ = client.asyncState(for: connection) }
        deliver(.success(connection))
    }

    private func deliver(_ result: Result<StreamConnection, LoopError>) {
        if let handler { return handler(result) }
        if let waiting = acceptWaiter {
            acceptWaiter = nil
            return waiting.continuation.resume(with: result.map { $0 })
        }
        accepted.append(result)
    }

    /// The async face's next connection: at once when one is queued, else when one arrives; nil
    /// after `close()`.
    func nextConnection(_ waiter: StreamWaiter, _ continuation: LoopContinuation<StreamConnection?>) {
        if acceptedHead < accepted.count {
            let result = accepted[acceptedHead]
            acceptedHead += 1
            if acceptedHead == accepted.count {
                accepted.removeAll(keepingCapacity: true)
                acceptedHead = 0
            }
            if acceptPending, closeReason == nil {
                acceptPending = false
                acceptOne()
            }
            return continuation.resume(with: result.map { $0 })
        }
        if let reason = closeReason {
            return reason == .streamClosed ? continuation.resume(returning: nil) : continuation.resume(throwing: reason)
        }
        if waiter.isCancelled { return continuation.resume(throwing: .cancelled) }
        misusePrecondition(
            acceptWaiter == nil, "UVLoop: two tasks iterate one StreamListener's connections at once; accept from one task")
        acceptWaiter = (waiter, continuation)
    }

    /// Whether a task waits in `connections` (for tests).
    var hasAcceptWaiter: Bool { acceptWaiter != nil }

    func cancelAccept(_ waiter: StreamWaiter) {
        guard let waiting = acceptWaiter, waiting.waiter === waiter else { return }
        acceptWaiter = nil
        waiting.continuation.resume(throwing: .cancelled)
    }
}
