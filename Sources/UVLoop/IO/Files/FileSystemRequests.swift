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

    /// The loop's engine, reached with no reference counting (see `UnretainedEngine` for why it
    /// is alive): while requests are in flight `engineInFlight` holds it, so that a completion
    /// that releases the loop still finds it.
    private let engine: UnretainedEngine
    /// Holds the engine while requests are in flight (with `keepAlive`).
    private var engineInFlight: LoopEngine?
    private let lifecycle: LoopLifecycle
    /// What every request changes. In `HeapStorage`, not stored `var`s, so that a request pays no
    /// run-time exclusivity check; no access to it calls a completion or any other user code
    /// (`finish` runs the completion between two of them). The paths taken per request reach it
    /// through its mutating methods: reading a field through `HeapStorage.value` copies the whole
    /// state (a retain and a release per array).
    private let state = HeapStorage(State())
    /// Set while requests are in flight; changed only when the first starts and the last ends.
    private var keepAlive: FileSystemRequests?

    private struct State {
        var free: [FileSystemRequest] = []
        var inFlight: [FileSystemRequest] = []
        /// The ticket of the last request started; tickets count up from 1.
        var lastTicket: UInt64 = 0

        /// A request from the pool, or a new one, with the next ticket.
        mutating func take(for pool: FileSystemRequests) -> (FileSystemRequest, UInt64) {
            lastTicket += 1
            return (free.isEmpty ? FileSystemRequest(pool: pool) : free.removeLast(), lastTicket)
        }

        /// Adds `request` to the requests in flight; returns whether it is the only one.
        mutating func add(_ request: consuming FileSystemRequest) -> Bool {
            request.inFlightIndex = inFlight.count
            inFlight.append(request)
            return inFlight.count == 1
        }

        /// Removes `request` from the requests in flight (the last one takes its place).
        /// - Returns: the list's reference to the request.
        mutating func remove(_ request: FileSystemRequest) -> FileSystemRequest {
            let index = request.inFlightIndex
            request.inFlightIndex = -1
            var removed = inFlight.removeLast()
            if removed !== request {
                // Exchanged in place: no reference counting (`swapAt` retained and released both).
                removed.inFlightIndex = index
                swap(&inFlight[index], &removed)
            }
            return removed
        }

        /// Keeps `request` for reuse, up to `retained`.
        /// - Returns: whether no request is in flight, and the request when it was not kept.
        @discardableResult
        mutating func recycle(_ request: consuming FileSystemRequest) -> (idle: Bool, dropped: FileSystemRequest?) {
            guard free.count < FileSystemRequests.retained else { return (inFlight.isEmpty, request) }
            free.append(request)
            return (inFlight.isEmpty, nil)
        }
    }

    /// The ticket of the last request started; tickets count up from 1.
    var lastTicket: UInt64 { state.value.lastTicket }

    init(engine: LoopEngine) {
        self.engine = UnretainedEngine(engine)
        native = engine.native
        lifecycle = engine.lifecycle
    }

    /// Registered with the loop's open handles while requests are in flight; made once, so that
    /// registering allocates nothing.
    private lazy var endAtLoopEnding: () -> Void = { [unowned self, refusal = lifecycle.refusal] in
        endAll(reason: refusal)
    }

    /// The number of requests whose completion has not run yet.
    var inFlightCount: Int { state.value.inFlight.count }

    /// The number of requests kept for reuse.
    var freeCount: Int { state.value.free.count }

    /// Starts one request: takes a request from the pool, prepares it for `operation` on `path`,
    /// and calls `start` (one of the request's starters). `owner`, if given, is told when the
    /// request finishes, before `completion` runs (see `FileSystemRequestOwner`). `tag` is the
    /// request's `tag` for this use.
    /// - Returns: the request's ticket, for ``cancel(ticket:)``.
    /// - Throws: the loop's refusal when it is ending; the operation's error when libuv refuses it
    ///   at once (the completion does not run then).
    @discardableResult
    func start(
        _ operation: StaticString, path: String, completion: FileSystemCompletion,
        owner: (any FileSystemRequestOwner)? = nil, tag: Int = 0, _ start: (FileSystemRequest) -> Int32
    ) throws(LoopError) -> UInt64 {
        try lifecycle.admitHandle()
        let (request, ticket) = state.value.take(for: self)
        request.begin(operation, path: path, ticket: ticket)
        request.completion = completion
        request.owner = owner
        request.tag = tag
        try settle(request, status: start(request), naming: path)
        return ticket
    }

    /// Starts one request like ``start(_:path:completion:owner:tag:_:)``, which tells `client`
    /// when it finishes instead of calling a completion. `client` must keep itself alive while
    /// any of its requests is in flight (the request does not retain it). The request does not
    /// keep `path` either (its `path` is empty for this use, a retain and a release less per
    /// request): `start` passes it to libuv itself, and the client names it in its errors,
    /// finding it by the request's `tag`; only a refusal at once is named here.
    /// `start` gets the request and `path`.
    @discardableResult @inline(__always)
    func start(
        _ operation: StaticString, path: String, client: FileSystemRequestClient, tag: Int,
        _ start: (FileSystemRequest, String) -> Int32
    ) throws(LoopError) -> UInt64 {
        try lifecycle.admitHandle()
        let (request, ticket) = state.value.take(for: self)
        request.begin(operation, path: "", ticket: ticket)
        request.setClient(client)
        request.tag = tag
        try settle(request, status: start(request, path), naming: path)
        return ticket
    }

    /// Records `request` in flight once one of its starters returned `status`, or takes it back
    /// when libuv refused it, with an error that names `path`.
    @inline(__always)
    private func settle(_ request: consuming FileSystemRequest, status: Int32, naming path: String) throws(LoopError) {
        guard status == 0 else {
            request.completion = nil
            request.owner = nil
            request.dropClient()
            request.cleanUp()
            request.path = path
            let error = request.error(code: status)
            state.value.recycle(request)
            throw error
        }
        if state.value.add(request), keepAlive == nil {
            keepAlive = self
            engineInFlight = engine.retained
            engine.with { $0.ioHandles.register(ObjectIdentifier(self), close: endAtLoopEnding) }
        }
    }

    /// Withdraws the request with `ticket` if it is still in flight and no pool thread has started
    /// it; its completion then gets ``LoopError/cancelled``.
    /// - Returns: whether it was withdrawn.
    @discardableResult
    func cancel(ticket: UInt64) -> Bool {
        guard let request = state.value.inFlight.first(where: { $0.ticket == ticket }) else { return false }
        return request.cancel()
    }

    /// libuv is done with `request`: forget it, run its completion as a loop callback, recycle it.
    /// Completions come in bursts (all the requests finished since the loop last polled): the
    /// engine updates its handles once for the burst (`endBurstIOCallback`).
    /// - Returns: what the pool let go of (see `Released`), if anything, for the caller to
    ///   release once this call has returned.
    func finish(_ request: FileSystemRequest) -> Released? {
        // The in-flight list's reference, kept until the request is recycled.
        let held = state.value.remove(request)
        let client: FileSystemRequestClient?
        if lifecycle.handlesClosed {
            // The loop ended: no callback of the engine's runs any more.
            client = Self.complete(held)
        } else {
            let outermost = engine.beginIOCallback()
            client = Self.complete(held)
            engine.endBurstIOCallback(outermost)
        }
        held.cleanUp()
        let (idle, dropped) = state.value.recycle(consume held)
        guard idle, keepAlive != nil else {
            return dropped == nil && client == nil ? nil : Released(pool: nil, request: dropped, client: client)
        }
        engine.with { $0.ioHandles.unregister(ObjectIdentifier(self)) }
        engineInFlight = nil
        defer { keepAlive = nil }
        return Released(pool: keepAlive, request: dropped, client: client)
    }

    /// What `finish` let go of: the pool's hold on itself (its last request in flight finished),
    /// the request when the pool keeps no more, and a client's hold on itself (see
    /// `FileSystemRequestClient.requestDidFinish`). The callback that called `finish` holds none
    /// of them, and releases these only once `finish` has returned.
    struct Released {
        let pool: FileSystemRequests?
        let request: FileSystemRequest?
        let client: FileSystemRequestClient?
    }

    /// Runs the request's completion, or tells its client.
    /// - Returns: the client's hold on itself if it let go of it.
    private static func complete(_ request: FileSystemRequest) -> FileSystemRequestClient? {
        let (told, released) = request.tellClient()
        if told { return released }
        let completion = request.completion
        request.completion = nil
        if let owner = request.owner {
            request.owner = nil
            owner.requestWillComplete(request)
        }
        switch completion {
        case .count(let body): body(request.countResult)
        case .status(let body): body(request.statusResult)
        case .request(let body): body(request)
        case nil: break
        }
        return nil
    }

    /// The loop is ending: withdraw every request in flight; their completions get `reason`.
    private func endAll(reason: LoopError) {
        for request in state.value.inFlight {
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
