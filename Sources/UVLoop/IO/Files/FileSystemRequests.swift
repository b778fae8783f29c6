/// The loop's file-system requests: a pool of reusable `FileSystemRequest`s, the ones in flight,
/// and their end when the loop ends. Loop thread only.
///
/// - A request is taken under the loop's admission (`LoopLifecycle.admitHandle`): a loop that is
///   ending refuses it with its one refusal, as it refuses a new handle.
/// - While requests are in flight the pool keeps itself alive (a loop may be released, an attached
///   loop detached, before libuv delivers the last callbacks); requests are reused once their
///   completion has run, so steady traffic allocates nothing.
/// - While requests are in flight the pool is one of the loop's open handles, and at the loop's
///   ending (`LoopIOHandles.closeAll`) every request in flight is withdrawn
///   (`uv_cancel`): one that no pool thread has started never runs; one already running
///   finishes. Either way its completion runs on a later turn with the loop's refusal.
final class FileSystemRequests {
    let native: NativeLoop
    /// Requests are reused up to this many; a burst beyond it frees the extra ones as they finish.
    static let retained = 64

    private weak var engine: LoopEngine?
    private let lifecycle: LoopLifecycle
    private var free: [FileSystemRequest] = []
    private var inFlight: [FileSystemRequest] = []
    private var keepAlive: FileSystemRequests?
    /// The ticket of the last request started; tickets count up from 1.
    private(set) var lastTicket: UInt64 = 0

    init(engine: LoopEngine) {
        self.engine = engine
        native = engine.native
        lifecycle = engine.lifecycle
    }

    /// Registered with the loop's open handles while requests are in flight; made once, so that
    /// registering allocates nothing.
    private lazy var endAtLoopEnding: () -> Void = { [unowned self, refusal = lifecycle.refusal] in
        endAll(reason: refusal)
    }

    /// The number of requests whose completion has not run yet.
    var inFlightCount: Int { inFlight.count }

    /// Starts one request: takes a request from the pool, prepares it for `operation` on `path`,
    /// and calls `start` (one of the request's starters). `owner`, if given, is told when the
    /// request finishes, before `completion` runs (see `FileSystemRequestOwner`).
    /// - Returns: the request's ticket, for ``cancel(ticket:)``.
    /// - Throws: the loop's refusal when it is ending; the operation's error when libuv refuses it
    ///   at once (the completion does not run then).
    @discardableResult
    func start(
        _ operation: StaticString, path: String, completion: FileSystemCompletion,
        owner: (any FileSystemRequestOwner)? = nil, _ start: (FileSystemRequest) -> Int32
    ) throws(LoopError) -> UInt64 {
        try lifecycle.admitHandle()
        let request = free.popLast() ?? FileSystemRequest(pool: self)
        lastTicket += 1
        request.begin(operation, path: path, ticket: lastTicket, completion: completion)
        request.owner = owner
        let status = start(request)
        guard status == 0 else {
            request.completion = nil
            request.owner = nil
            request.cleanUp()
            recycle(request)
            throw request.error(code: status)
        }
        request.inFlightIndex = inFlight.count
        inFlight.append(request)
        if keepAlive == nil {
            keepAlive = self
            engine?.ioHandles.register(ObjectIdentifier(self), close: endAtLoopEnding)
        }
        return lastTicket
    }

    /// Withdraws the request with `ticket` if it is still in flight and no pool thread has started
    /// it; its completion then gets ``LoopError/cancelled``.
    /// - Returns: whether it was withdrawn.
    @discardableResult
    func cancel(ticket: UInt64) -> Bool {
        guard let request = inFlight.first(where: { $0.ticket == ticket }) else { return false }
        return request.cancel()
    }

    /// libuv is done with `request`: forget it, run its completion as a loop callback, recycle it.
    func finish(_ request: FileSystemRequest) {
        let index = request.inFlightIndex
        let last = inFlight.removeLast()
        if last !== request {
            inFlight[index] = last
            last.inFlightIndex = index
        }
        request.inFlightIndex = -1
        let completion = request.completion
        request.completion = nil
        if let engine {
            engine.runIOCallback { Self.complete(request, completion) }
        } else {
            Self.complete(request, completion)
        }
        request.cleanUp()
        recycle(request)
        if inFlight.isEmpty, keepAlive != nil {
            keepAlive = nil
            engine?.ioHandles.unregister(ObjectIdentifier(self))
        }
    }

    private static func complete(_ request: FileSystemRequest, _ completion: FileSystemCompletion?) {
        if let owner = request.owner {
            request.owner = nil
            owner.requestWillComplete(request)
        }
        switch completion {
        case .count(let body): body(request.countResult)
        case .status(let body):
            if let endedBy = request.endedBy { return body(.failure(endedBy)) }
            let result = request.result
            body(result >= 0 ? .success(request.status) : .failure(request.error(code: Int32(truncatingIfNeeded: result))))
        case .request(let body): body(request)
        case nil: break
        }
    }

    private func recycle(_ request: FileSystemRequest) {
        if free.count < Self.retained { free.append(request) }
    }

    /// The loop is ending: withdraw every request in flight; their completions get `reason`.
    private func endAll(reason: LoopError) {
        for request in inFlight {
            request.endedBy = reason
            _ = request.cancel()
        }
    }
}

extension LoopEngine {
    /// The loop's file-system requests, made with the first request. Loop thread only.
    var fileSystemRequests: FileSystemRequests {
        if let requests = ioHandles.fileSystemRequests { return requests }
        let requests = FileSystemRequests(engine: self)
        ioHandles.fileSystemRequests = requests
        return requests
    }
}
