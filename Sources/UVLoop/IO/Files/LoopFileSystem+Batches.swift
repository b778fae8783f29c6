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
/// Each request in flight has a lane, whose completion is made once and knows which path its
/// lane stats now: a stat allocates no closure. The lanes' completions keep the batch alive (a
/// cycle broken when it finishes, or when its first request cannot start).
private final class StatusBatch {
    /// A closure in a struct: an array stores it as it is, where a bare closure would be wrapped
    /// in a reabstraction thunk (an allocation) each time it is taken out.
    private struct LaneCompletion {
        let call: (Result<FileStatus, LoopError>) -> Void
    }

    /// What each request changes. No access to it calls user code or starts a request. The
    /// paths taken per stat reach it through its mutating methods: reading a field through
    /// `HeapStorage.value` copies the whole state (a retain and a release per array).
    private struct State {
        var results: [Result<FileStatus, LoopError>]
        var lanes: [LaneCompletion] = []
        /// The path each lane stats now.
        var laneIndex: [Int]
        var freeLanes: [Int]
        var next = 0
        var running = 0
        /// What ended the batch early: a cancellation, the loop's ending.
        var failure: LoopError?

        /// The next request to start, if one should start: its lane, its path's index and the
        /// lane's completion.
        mutating func nextRequest(of count: Int) -> (lane: Int, index: Int, completion: LaneCompletion)? {
            guard failure == nil, next < count, running < lanes.count else { return nil }
            let lane = freeLanes[freeLanes.count - 1]
            return (lane, next, lanes[lane])
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

        /// Takes the lanes' completions out, breaking the cycle through them; the caller lets
        /// them go after the access.
        mutating func takeLanes() -> [LaneCompletion] {
            defer { lanes = [] }
            return lanes
        }

        mutating func started(lane: Int) {
            freeLanes.removeLast()
            laneIndex[lane] = next
            next += 1
            running += 1
        }

        mutating func finished(lane: Int, _ result: Result<FileStatus, LoopError>) {
            running -= 1
            freeLanes.append(lane)
            switch result {
            case .failure(.fileSystem), .success: results[laneIndex[lane]] = result
            case .failure(let error):
                // Not the path's own failure: a cancellation, the loop's ending.
                if failure == nil { failure = error }
            }
        }
    }

    private let paths: [String]
    private let followingSymlinks: Bool
    private let requests: FileSystemRequests
    private let steps: FileSystemSteps?
    private var completion: ((Result<[Result<FileStatus, LoopError>], LoopError>) -> Void)?
    /// In `HeapStorage`, not stored `var`s, so that a stat pays no run-time exclusivity check.
    private let state: HeapStorage<State>

    init(
        _ paths: [String], concurrency: Int, followingSymlinks: Bool, requests: FileSystemRequests, steps: FileSystemSteps?,
        completion: @escaping (Result<[Result<FileStatus, LoopError>], LoopError>) -> Void
    ) {
        self.paths = paths
        self.followingSymlinks = followingSymlinks
        self.requests = requests
        self.steps = steps
        self.completion = completion
        let width = min(concurrency, paths.count)
        state = HeapStorage(
            State(
                results: Array(repeating: .failure(.cancelled), count: paths.count),
                laneIndex: Array(repeating: 0, count: width), freeLanes: Array((0..<width).reversed())))
        state.value.lanes = (0..<width).map { lane in LaneCompletion { [self] result in didStat(lane: lane, result) } }
    }

    /// Starts the first requests; throws when the first cannot start (the completion does not
    /// run then).
    func run() throws(LoopError) {
        guard let (lane, index, laneCompletion) = state.value.nextRequest(of: paths.count) else { return finish() }
        do throws(LoopError) {
            try start(index, laneCompletion)
        } catch {
            _ = state.value.takeLanes()
            throw error
        }
        state.value.started(lane: lane)
        startMore()
    }

    private func startMore() {
        while let (lane, index, laneCompletion) = state.value.nextRequest(of: paths.count) {
            do throws(LoopError) {
                try start(index, laneCompletion)
            } catch {
                state.value.fail(error)
                break
            }
            state.value.started(lane: lane)
        }
        if state.value.isIdle() { finish() }
    }

    /// Starts the request for `paths[index]`, which calls `laneCompletion`.
    private func start(_ index: Int, _ laneCompletion: LaneCompletion) throws(LoopError) {
        let status = FileSystemCompletion.status(laneCompletion.call)
        let followingSymlinks = followingSymlinks
        let operation: StaticString = followingSymlinks ? "stat" : "lstat"
        if let steps {
            try steps.start(requests, operation, path: paths[index], completion: status) { $0.startStatus(followingSymlinks: followingSymlinks) }
        } else {
            try requests.start(operation, path: paths[index], completion: status) { $0.startStatus(followingSymlinks: followingSymlinks) }
        }
    }

    private func didStat(lane: Int, _ result: Result<FileStatus, LoopError>) {
        state.value.finished(lane: lane, result)
        startMore()
    }

    private func finish() {
        guard let completion else { return }
        self.completion = nil
        let outcome = state.value.takeOutcome()
        _ = state.value.takeLanes()
        completion(outcome)
    }
}
