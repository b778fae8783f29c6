extension LoopFileSystem {
    /// The number of requests ``status(ofEach:concurrency:followingSymlinks:_:)`` keeps in flight
    /// unless given.
    public static let defaultStatusConcurrency = 16

    /// Reads the status of every path in `paths` (`stat`), keeping up to `concurrency` requests
    /// in flight on libuv's thread pool, and calls `completion` on the loop's thread once all
    /// are done, with one result per path, in the order of `paths`. Loop thread only.
    ///
    /// Each path gets its own result: a missing file (`UV_ENOENT`) or any other failure is that
    /// path's `.failure`, and the others go on. Several requests in flight keep the pool's
    /// threads busy while results travel back to the loop, which takes the results that arrive
    /// together in one turn. Separate ``status(of:followingSymlinks:_:)`` calls made together run
    /// in parallel too; this does the bookkeeping and bounds what is in flight.
    /// - Parameters:
    ///   - paths: the paths to look at.
    ///   - concurrency: the most requests in flight; at least 1.
    ///   - followingSymlinks: for a symbolic link, whether to read what it points to (the
    ///     default) or the link itself (`lstat`).
    ///   - completion: gets the results, one per path (at once, inside the call, for no paths);
    ///     or, as a whole, the loop's
    ///     ``LoopError/shutDown`` (``LoopError/detached``) when it ended before every path was
    ///     looked at.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for a concurrency below 1, or a path that is
    ///   empty or has a zero byte (the message gives its index); the loop's refusal when it no
    ///   longer accepts work. `completion` does not run then.
    public func status(
        ofEach paths: [String], concurrency: Int = defaultStatusConcurrency, followingSymlinks: Bool = true,
        _ completion: @escaping (Result<[Result<FileStatus, LoopError>], LoopError>) -> Void
    ) throws(LoopError) {
        loop.preconditionOnLoopThread("loop.fileSystem.status(ofEach:concurrency:followingSymlinks:_:)")
        try startStatusBatch(paths, concurrency: concurrency, followingSymlinks: followingSymlinks, steps: nil, completion)
    }

    /// Reads the status of every path in `paths`; see
    /// ``status(ofEach:concurrency:followingSymlinks:_:)``. Callable from any task.
    ///
    /// Cancelling the task stops starting requests: the call throws ``LoopError/cancelled`` once
    /// those in flight are back.
    /// - Parameters:
    ///   - paths: the paths to look at.
    ///   - concurrency: the most requests in flight; at least 1.
    ///   - followingSymlinks: whether to read what a symbolic link points to (the default) or
    ///     the link itself.
    /// - Returns: one result per path, in the order of `paths`.
    /// - Throws: like ``status(ofEach:concurrency:followingSymlinks:_:)``, and
    ///   ``LoopError/cancelled``.
    public func status(
        ofEach paths: [String], concurrency: Int = defaultStatusConcurrency, followingSymlinks: Bool = true
    ) async throws(LoopError) -> [Result<FileStatus, LoopError>] {
        try await performSteps { steps, completion throws(LoopError) in
            try startStatusBatch(paths, concurrency: concurrency, followingSymlinks: followingSymlinks, steps: steps, completion)
        }
    }

    private func startStatusBatch(
        _ paths: [String], concurrency: Int, followingSymlinks: Bool, steps: FileSystemSteps?,
        _ completion: @escaping (Result<[Result<FileStatus, LoopError>], LoopError>) -> Void
    ) throws(LoopError) {
        guard concurrency >= 1 else { throw .invalidArgument("concurrency must be at least 1 request (got \(concurrency))") }
        for (index, path) in paths.enumerated() { try Self.validate(path, "paths[\(index)]") }
        let batch = StatusBatch(
            paths, concurrency: concurrency, followingSymlinks: followingSymlinks, requests: requests, steps: steps,
            completion: completion)
        try batch.run()
    }
}

/// One ``LoopFileSystem/status(ofEach:concurrency:followingSymlinks:_:)``: up to `concurrency`
/// requests in flight, the next one started by each completion. Loop thread only.
///
/// The batch is its requests' client (`FileSystemRequestClient`): a finished request tells it,
/// and it reads the status in place and finds the path's index in the request's `tag`, so a stat
/// makes no closure and writes its result once, into its slot of the results (libuv's copy of
/// the path is the only allocation per stat). The batch keeps itself alive while requests are in
/// flight (`keepAlive`, cleared when it finishes).
private final class StatusBatch: FileSystemRequestClient {
    /// What each request changes. No access to it calls user code or starts a request. The
    /// paths taken per stat reach it through its mutating methods: reading a field through
    /// `HeapStorage.value` copies the whole state (a retain and a release per array).
    private struct State {
        var results: [Result<FileStatus, LoopError>]
        var next = 0
        var running = 0
        /// What ended the batch early: a cancellation, the loop's ending.
        var failure: LoopError? {
            didSet { failed = failure != nil }
        }
        /// Whether `failure` is set, read per request without copying the optional error out.
        var failed = false

        /// The index of the next path to stat, if a request should start.
        mutating func nextRequest(of count: Int, width: Int) -> Int? {
            guard !failed, next < count, running < width else { return nil }
            return next
        }

        mutating func started() {
            next += 1
            running += 1
        }

        /// Records what `request` found for its path, `paths[request.tag]` (which the request
        /// does not keep: its errors are named here).
        mutating func finished(_ request: FileSystemRequest, paths: [String]) {
            running -= 1
            if !request.wasEnded, request.result >= 0 {
                // The common case, made in the results' own slot, over its placeholder.
                request.storeStatus(in: &results, at: request.tag)
                return
            }
            let result = request.statusResult
            switch result {
            case .success: results[request.tag] = result
            case .failure(.fileSystem(let operation, _, let code)):
                results[request.tag] = .failure(.fileSystem(operation: operation, path: paths[request.tag], code: code))
            case .failure(let error):
                // Not the path's own failure: a cancellation, the loop's ending.
                if !failed { failure = error }
            }
        }

        /// Whether no request is in flight.
        mutating func isIdle() -> Bool { running == 0 }

        mutating func fail(_ error: LoopError) { failure = error }

        /// The batch's outcome; the results are moved out, so that the caller's array is not
        /// shared.
        mutating func takeOutcome() -> Result<[Result<FileStatus, LoopError>], LoopError> {
            if let failure { return .failure(failure) }
            defer { results = [] }
            return .success(results)
        }
    }

    private let paths: [String]
    private let width: Int
    private let followingSymlinks: Bool
    private let requests: FileSystemRequests
    private let steps: FileSystemSteps?
    private var completion: ((Result<[Result<FileStatus, LoopError>], LoopError>) -> Void)?
    /// In `HeapStorage`, not stored `var`s, so that a stat pays no run-time exclusivity check.
    private let state: HeapStorage<State>
    /// Set while requests are in flight: they do not retain the batch.
    private var keepAlive: StatusBatch?

    init(
        _ paths: [String], concurrency: Int, followingSymlinks: Bool, requests: FileSystemRequests, steps: FileSystemSteps?,
        completion: @escaping (Result<[Result<FileStatus, LoopError>], LoopError>) -> Void
    ) {
        self.paths = paths
        width = min(concurrency, paths.count)
        self.followingSymlinks = followingSymlinks
        self.requests = requests
        self.steps = steps
        self.completion = completion
        state = HeapStorage(State(results: Self.placeholders(paths.count)))
    }

    /// `count` results to be overwritten, one per path: placeholders that own nothing, which a
    /// status is written over without destroying them (`FileSystemRequest.storeStatus`).
    /// Appended one by one: `Array(repeating:count:)` copies the repeated result through its
    /// value witness for every path.
    private static func placeholders(_ count: Int) -> [Result<FileStatus, LoopError>] {
        var results: [Result<FileStatus, LoopError>] = []
        results.reserveCapacity(count)
        for _ in 0..<count { results.append(.failure(.cancelled)) }
        return results
    }

    /// Starts the first requests; throws when the first cannot start (the completion does not
    /// run then).
    func run() throws(LoopError) {
        // The caller holds the batch: what `finish` and `startMore` hand back can go here.
        guard let index = state.value.nextRequest(of: paths.count, width: width) else {
            _ = finish()
            return
        }
        try start(index)
        keepAlive = self
        state.value.started()
        _ = startMore()
    }

    /// Starts requests up to the width; finishes the batch when none is in flight.
    /// - Returns: the batch's hold on itself when it finished (see `finish`).
    private func startMore() -> StatusBatch? {
        while let index = state.value.nextRequest(of: paths.count, width: width) {
            do throws(LoopError) {
                try start(index)
            } catch {
                state.value.fail(error)
                break
            }
            state.value.started()
        }
        return state.value.isIdle() ? finish() : nil
    }

    /// Starts the request for `paths[index]`.
    private func start(_ index: Int) throws(LoopError) {
        let followingSymlinks = followingSymlinks
        let operation: StaticString = followingSymlinks ? "stat" : "lstat"
        if let steps {
            try steps.start(requests, operation, path: paths[index], client: self, tag: index) {
                $0.startStatus(of: $1, followingSymlinks: followingSymlinks)
            }
        } else {
            try requests.start(operation, path: paths[index], client: self, tag: index) {
                $0.startStatus(of: $1, followingSymlinks: followingSymlinks)
            }
        }
    }

    override func requestDidFinish(_ request: FileSystemRequest) -> FileSystemRequestClient? {
        state.value.finished(request, paths: paths)
        return startMore()
    }

    /// Calls the completion once.
    /// - Returns: the batch's hold on itself, taken out, for the caller to release once the
    ///   batch's own calls have returned (the request that told the batch does not retain it).
    private func finish() -> StatusBatch? {
        guard let completion else { return nil }
        self.completion = nil
        let outcome = state.value.takeOutcome()
        let hold = keepAlive
        keepAlive = nil
        completion(outcome)
        return hold
    }
}
