/// Chunked loops: long loops that run on the loop's thread a chunk per loop iteration, so that
/// timers, posted work and I/O keep being served while they run.
extension Loop {
    /// Starts a chunked loop that calls `body` with each index in `0..<count`, on the loop's thread.
    ///
    /// Callable from any thread; returns at once with a handle to cancel or await it.
    ///
    /// ## Order
    /// 1. `progress` reports the initial state (0 of `count`), in the loop's next idle phase;
    /// 2. in each later loop iteration, one chunk of `body` calls runs (in index order, bounded by
    ///    `budget`), then `progress` reports how far it got;
    /// 3. `completion` runs once at the end, after the last `progress`.
    ///
    /// All three run on the loop's thread. Between two chunks the loop polls for I/O, fires due
    /// timers and drains posted work; a timer that comes due during a chunk under a time budget
    /// ends the chunk early, so it fires within about 50 µs of work. Several chunked loops share
    /// the loop round-robin, one chunk per iteration.
    ///
    /// ## Ending
    /// The completion reports how many items were processed and why it ended (a
    /// ``ChunkedLoopCompletion``): every item done; ``ChunkedLoop/cancel()`` (no body call begins
    /// after the loop's thread sees it); the body threw (the loop stops at that index, which does
    /// not count as processed); or the loop shut down or was detached (the completion then runs
    /// during shutdown, after the work posted before it). A count of zero reports its initial
    /// progress and completes without calling `body`.
    ///
    /// - Parameters:
    ///   - count: how many times to call `body`; must not be negative.
    ///   - budget: what bounds one chunk: ``ChunkBudget/time(_:)`` on the loop's clock (default
    ///     2 ms) or ``ChunkBudget/items(_:)``. See ``ChunkBudget``.
    ///   - body: called with each index, in order.
    ///   - progress: called first with the initial state, then after each chunk.
    ///   - completion: called once, last.
    /// - Returns: the handle that cancels or awaits the chunked loop.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for a negative count or an empty budget;
    ///   ``LoopError/shutDown`` (or ``LoopError/detached``) when the loop no longer accepts work.
    @discardableResult
    public func startChunkedLoop(
        count: Int,
        budget: ChunkBudget = .default,
        body: @escaping @Sendable (Int) throws -> Void,
        progress: @escaping @Sendable (ChunkedLoopProgress) -> Void = { _ in },
        completion: @escaping @Sendable (ChunkedLoopCompletion) -> Void = { _ in }
    ) throws(LoopError) -> ChunkedLoop {
        guard count >= 0 else {
            throw .invalidArgument("a chunked loop's count must not be negative (got \(count))")
        }
        return try startChunkedLoop(
            lowerBound: 0, count: count, budget: budget, body: body, progress: progress, completion: completion)
    }

    /// Starts a chunked loop that calls `body` with each integer in `range`, in order, on the
    /// loop's thread. Same behaviour as
    /// ``startChunkedLoop(count:budget:body:progress:completion:)``;
    /// progress and completion count items from the range's start, and
    /// ``ChunkedLoopCompletion/stoppedAt`` is a value in the range.
    /// - Parameters:
    ///   - range: the integers to call `body` with.
    ///   - budget: what bounds one chunk; see ``ChunkBudget``.
    ///   - body: called with each integer, in order.
    ///   - progress: called first with the initial state, then after each chunk.
    ///   - completion: called once, last.
    /// - Returns: the handle that cancels or awaits the chunked loop.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for an empty budget or a range of more than
    ///   `Int.max` integers; ``LoopError/shutDown`` (or ``LoopError/detached``) when the loop no
    ///   longer accepts work.
    @discardableResult
    public func startChunkedLoop(
        over range: Range<Int>,
        budget: ChunkBudget = .default,
        body: @escaping @Sendable (Int) throws -> Void,
        progress: @escaping @Sendable (ChunkedLoopProgress) -> Void = { _ in },
        completion: @escaping @Sendable (ChunkedLoopCompletion) -> Void = { _ in }
    ) throws(LoopError) -> ChunkedLoop {
        let (count, overflow) = range.upperBound.subtractingReportingOverflow(range.lowerBound)
        guard !overflow else {
            throw .invalidArgument("a chunked loop's range \(range) holds more than Int.max integers; split it")
        }
        return try startChunkedLoop(
            lowerBound: range.lowerBound, count: count, budget: budget, body: body, progress: progress,
            completion: completion)
    }

    /// Starts a chunked loop that calls `body` with each element of `collection`, in order, on the
    /// loop's thread. Same behaviour as
    /// ``startChunkedLoop(count:budget:body:progress:completion:)``;
    /// ``ChunkedLoopCompletion/stoppedAt`` is an offset from the collection's start.
    ///
    /// The element lookup is specialised for the caller's collection type and costs O(1) per item.
    /// - Parameters:
    ///   - collection: the elements to call `body` with; read on the loop's thread.
    ///   - budget: what bounds one chunk; see ``ChunkBudget``.
    ///   - body: called with each element, in order.
    ///   - progress: called first with the initial state, then after each chunk.
    ///   - completion: called once, last.
    /// - Returns: the handle that cancels or awaits the chunked loop.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for an empty budget; ``LoopError/shutDown`` (or
    ///   ``LoopError/detached``) when the loop no longer accepts work.
    @inlinable
    @discardableResult
    public func startChunkedLoop<C: RandomAccessCollection & Sendable>(
        over collection: C,
        budget: ChunkBudget = .default,
        body: @escaping @Sendable (C.Element) throws -> Void,
        progress: @escaping @Sendable (ChunkedLoopProgress) -> Void = { _ in },
        completion: @escaping @Sendable (ChunkedLoopCompletion) -> Void = { _ in }
    ) throws(LoopError) -> ChunkedLoop {
        try startChunkedLoop(
            count: collection.count, budget: budget,
            body: { offset in try body(collection[collection.index(collection.startIndex, offsetBy: offset)]) },
            progress: progress, completion: completion)
    }

    /// Starts a chunked loop that calls `body` with each element of a collection that is not
    /// random-access (a `Set`, a `Dictionary`, a lazy view…), in order, on the loop's thread.
    /// Same behaviour as ``startChunkedLoop(count:budget:body:progress:completion:)``;
    /// ``ChunkedLoopCompletion/stoppedAt`` is an offset from the collection's start.
    ///
    /// A cursor kept on the loop's thread walks the collection, so each item costs one index step.
    /// - Parameters:
    ///   - collection: the elements to call `body` with; read on the loop's thread.
    ///   - budget: what bounds one chunk; see ``ChunkBudget``.
    ///   - body: called with each element, in order.
    ///   - progress: called first with the initial state, then after each chunk.
    ///   - completion: called once, last.
    /// - Returns: the handle that cancels or awaits the chunked loop.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for an empty budget; ``LoopError/shutDown`` (or
    ///   ``LoopError/detached``) when the loop no longer accepts work.
    @inlinable
    @discardableResult
    public func startChunkedLoop<C: Collection & Sendable>(
        over collection: C,
        budget: ChunkBudget = .default,
        body: @escaping @Sendable (C.Element) throws -> Void,
        progress: @escaping @Sendable (ChunkedLoopProgress) -> Void = { _ in },
        completion: @escaping @Sendable (ChunkedLoopCompletion) -> Void = { _ in }
    ) throws(LoopError) -> ChunkedLoop {
        // Offsets arrive in order, one by one: the cursor steps once per item.
        let cursor = LoopBound((offset: 0, index: collection.startIndex), loop: self)
        return try startChunkedLoop(
            count: collection.count, budget: budget,
            body: { offset in
                let element = cursor.withValue { cursor in
                    if cursor.offset != offset {
                        cursor.index = collection.index(collection.startIndex, offsetBy: offset)
                    }
                    let element = collection[cursor.index]
                    collection.formIndex(after: &cursor.index)
                    cursor.offset = offset + 1
                    return element
                }
                try body(element)
            },
            progress: progress, completion: completion)
    }

    private func startChunkedLoop(
        lowerBound: Int, count: Int, budget: ChunkBudget,
        body: @escaping @Sendable (Int) throws -> Void,
        progress: @escaping @Sendable (ChunkedLoopProgress) -> Void,
        completion: @escaping @Sendable (ChunkedLoopCompletion) -> Void
    ) throws(LoopError) -> ChunkedLoop {
        let limit = try budget.validated()
        let handle = ChunkedLoop(loop: self)
        // The run (mutable, loop-thread state) is created on the loop's thread.
        let admit: @Sendable (LoopEngine) -> Void = { engine in
            engine.admitChunkedLoop(ChunkedLoopRun(
                handle: handle, lowerBound: lowerBound, total: count, limit: limit,
                body: body, progress: progress, completion: completion))
        }
        if isOnLoopThread {
            try lifecycle.admitWork()
            admit(engine)
        } else {
            try enqueue(.run { [confined] in admit(confined.value) })
        }
        return handle
    }
}
