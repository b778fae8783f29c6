import Synchronization
import UVLoop

/// One of the calls libuv's thread pool makes on a worker request (see `ThreadPoolJob`) that
/// depends on its `Value` (`willQueue` does not).
@usableFromInline
enum ThreadPoolStep: Sendable {
    case run(ThreadPoolWork)
    case finish(ThreadPoolWork, cancelled: Bool)
    /// After `finish` left the outcome in the result space: make it final.
    case publish(ThreadPoolWork, soleOwner: Bool)
}

/// What a `ThreadPoolStep` left for the next one (see `OperationRequest.finishOnLoop`).
@usableFromInline
enum ThreadPoolStepResult: Sendable {
    /// Nothing: the step did all there was to do.
    case done
    /// The final outcome waits in the result space for the `publish` step.
    case outcomeWaits
    /// As `outcomeWaits`, and dropping the outcome runs no code (nothing in it to release) and
    /// calls no parent's hook: a request that no one else holds needs no `publish` step.
    case outcomeWaitsDroppable
}

// Running a request. Everything on the path from `start` to the completion is inlinable, so that
// it is compiled for the caller's `Value`: unspecialised generic code looks up the metadata of
// every type built from `Value` (`Outcome<Value>`, the state, its optionals and closures) at run
// time, on every step of every request.
extension OperationRequest {
    /// Enters `session`, if any, so that its `cancelAll` reaches this request.
    @inlinable
    func joinSession() {
        guard let session else { return }
        sessionSlot.store(session.insert(self), ordering: .relaxed)
    }

    /// Leaves `session`, if still in it.
    @inlinable
    func leaveSession() {
        guard let session else { return }
        // The store in `joinSession` happened before the request began, which happened before this.
        let slot = sessionSlot.exchange(-1, ordering: .relaxed)
        if slot >= 0 { session.remove(slot: slot) }
    }

    /// Hands a worker to the thread pool, or begins a composite on the loop's thread (posted, so
    /// that no completion runs inside `start`).
    @inlinable
    func begin() throws(LoopError) {
        if let driver {
            try begin(driver)
        } else {
            try loop.queueWork(self)
        }
    }

    @usableFromInline
    func begin(_ driver: CompositeDriver<Value>) throws(LoopError) {
        try loop.post { [self] in
            state.withLock { $0.stage = .running }
            driver.begin(self)
        }
    }

    /// Completes a composite with its children's results.
    func finishComposite(with result: Result<Value, any Error>) {
        let (cancelled, closures) = state.withLock { state in
            state.stage = .completing
            return (cancelRequested.load(ordering: .relaxed), takeClosures())
        }
        deliver(Outcome(result: result, isCancelled: cancelled), closures: closures)
    }

    /// Moves the closures out, leaving nil. Called once, with `state`'s lock held, by the call that
    /// begins completing.
    @inlinable
    func takeClosures() -> OperationClosures<Value> {
        guard let taken = closures.take() else {
            fatalError("UVOperations: a request began completing twice")
        }
        return taken
    }

    /// Runs the transform and completion, leaves the session, wakes waiters, tells the parent.
    /// `closures` are the request's, taken out when completing began: the last reference to them.
    @inlinable
    func deliver(_ decided: consuming Outcome<Value>, closures: consuming OperationClosures<Value>) {
        publish(complete(decided, closures: closures))
    }

    /// Runs the transform and completion, releases the closures and leaves the session; returns
    /// the final outcome. Inlined into its two callers: a call of its own copies the completion
    /// (a retain and a release) to run it.
    @inlinable @inline(__always)
    func complete(_ decided: consuming Outcome<Value>, closures: consuming OperationClosures<Value>) -> Outcome<Value> {
        var outcome = decided
        closures.transform?(&outcome)
        closures.completion?(outcome)
        // Released here, before the waiters wake, so that they find what the closures captured
        // released. This may run deinits, which are user code: no lock is held.
        _ = consume closures
        leaveSession()
        return outcome
    }

    /// Makes `outcome` final: stores it for waiters and `finishedOutcome`, wakes the waiters, and
    /// tells the parent.
    @inlinable
    func publish(_ outcome: consuming Outcome<Value>) {
        // Copied only for a parent; everyone else reads the outcome from the state.
        let parentsOutcome = onFinish == nil ? nil : copy outcome
        // Swapped in: assigning an existential goes through a generic assign; a swap moves both
        // values, and the `()` swapped out costs little to destroy.
        var erased: any Sendable = consume outcome
        let waiting = state.withLock { state -> (ThreadEvent?, [CheckedContinuation<Void, Never>])? in
            state.stage = .finished
            let completion = state.madeCompletion()
            swap(&completion.outcome, &erased)
            // Most requests have no waiter: then there is nothing to take out (and release).
            guard completion.hasWaiters else { return nil }
            return completion.takeWaiters()
        }
        if let (waiters, continuations) = waiting {
            waiters?.signal()
            for continuation in continuations { continuation.resume() }
        }
        if let onFinish, let parentsOutcome { onFinish(parentsOutcome) }
    }

    // MARK: the thread pool's calls

    @inlinable
    func perform(_ step: ThreadPoolStep) -> ThreadPoolStepResult {
        switch step {
        case .run(let work):
            runWorker(work)
            return .done
        case .finish(let work, let cancelled):
            return finishWorker(work, cancelled: cancelled)
        case .publish(let work, let soleOwner):
            publishWorker(work, soleOwner: soleOwner)
            return .done
        }
    }

    /// Loop thread: the worker is about to be queued; a request cancelled before this withdraws.
    /// No lock: a cancel that this misses posts its withdrawal after setting the flag, and the
    /// withdrawal, on this thread, finds the handle stored here. Touches no type built from
    /// `Value`, so the conformance calls it directly rather than through `threadPoolStep`.
    @inlinable
    func willQueueWorker(_ work: ThreadPoolWork) -> Bool {
        guard !cancelRequested.load(ordering: .acquiring) else { return false }
        queuedWork.store(work.bitPattern, ordering: .relaxed)
        return true
    }

    /// Whether the worker's result crosses to the loop's thread in the job's result space; a
    /// larger one crosses in `RequestCompletion.outcome`, boxed.
    @inlinable
    static var resultFitsWork: Bool { ThreadPoolWork.canHoldResult(Result<Value, any Error>.self) }

    /// A pool thread: runs the worker; a throw becomes the outcome's error.
    @inlinable
    func runWorker(_ work: ThreadPoolWork) {
        // The request holds its closures until completing begins, which only the loop's thread
        // does, after this returns. Only a worker request is ever queued (`begin`), and a pool
        // thread runs it once, so `worker` is set. Moved out, so that what it captured is released
        // here once it has run, rather than on the loop's thread with the transform and completion.
        let worker = state.withLock { _ in closures!.worker.take()! }
        let result = Result { try worker() }
        if Self.resultFitsWork {
            work.storeResult(result)
        } else {
            let boxed: any Sendable = Outcome(result: result)
            state.withLock { $0.madeCompletion().outcome = boxed }
        }
    }

    /// Whether the final outcome fits the job's result space, where it waits for `publish`.
    @inlinable
    static var outcomeFitsWork: Bool { ThreadPoolWork.canHoldResult(Outcome<Value>.self) }

    /// Loop thread, exactly once: decides the outcome and completes the request. Returns whether
    /// it left the final outcome in the result space for `publishWorker` (and whether that step
    /// may be skipped for a request no one else holds), or published it itself (an outcome too
    /// large for the result space).
    @inlinable
    func finishWorker(_ work: ThreadPoolWork, cancelled: Bool) -> ThreadPoolStepResult {
        // The handle is recycled once this returns: a withdrawal posted by a cancel accepted
        // before the lock below finds nothing to withdraw.
        queuedWork.store(0, ordering: .relaxed)
        let (cancelAccepted, closures) = state.withLock { state in
            state.stage = .completing
            return (cancelRequested.load(ordering: .relaxed), takeClosures())
        }
        let result: Result<Value, any Error>?
        if cancelled {
            // A worker that libuv withdrew never ran, so it left no result.
            result = nil
        } else if Self.resultFitsWork {
            result = work.takeResult(Result<Value, any Error>.self)
        } else {
            let boxed = state.withLock { state -> any Sendable in
                let completion = state.madeCompletion()
                defer { completion.outcome = () }
                return completion.outcome
            }
            result = Self.unerased(boxed).result
        }
        // Moved, not copied: a copy of the closures would retain and release the completion's
        // context, and one of the result its value.
        let outcome = complete(
            Outcome(result: consume result, isCancelled: cancelled || cancelAccepted), closures: consume closures)
        guard Self.outcomeFitsWork else {
            publish(outcome)
            return .done
        }
        let droppable = onFinish == nil && Self.dropsTrivially(outcome)
        work.storeResult(outcome)
        return droppable ? .outcomeWaitsDroppable : .outcomeWaits
    }

    /// Whether dropping `outcome` runs no code: a value with nothing to release, or none, and no
    /// error. Decided when the code is compiled for `Value`, except for the error.
    @inlinable
    static func dropsTrivially(_ outcome: Outcome<Value>) -> Bool {
        guard _isPOD(Value.self) else { return false }
        if case .failure = outcome.result { return false }
        return true
    }

    /// Loop thread, right after `finishWorker` left the outcome in the result space: publishes it.
    /// A request that no one else holds (not the caller, nor a session, which it has left, nor a
    /// waiter, which holds it while it waits) and that has no parent's hook to call needs none of
    /// that: nothing can look at it again, so the outcome is dropped, with no lock taken and no
    /// type-erased copy made.
    @inlinable
    func publishWorker(_ work: ThreadPoolWork, soleOwner: Bool) {
        let outcome = work.takeResult(Outcome<Value>.self)
        if soleOwner && onFinish == nil { return }
        publish(outcome)
    }
}

// libuv's callbacks reach the request through this conformance, whose witnesses are compiled once
// for every `Value`: those that touch a type built from `Value` forward to `threadPoolStep`, which
// was compiled for the caller's.
extension OperationRequest: ThreadPoolJob {
    /// Loop thread: the worker is about to be queued; a request cancelled before this withdraws.
    @usableFromInline
    package func willQueue(_ work: ThreadPoolWork) -> Bool {
        willQueueWorker(work)
    }

    /// A pool thread: runs the worker; a throw becomes the outcome's error.
    @usableFromInline
    package func runOnThreadPool(_ work: ThreadPoolWork) {
        _ = threadPoolStep(self, .run(work))
    }

    /// Loop thread, exactly once: decides the outcome and delivers it. Between completing (the
    /// transform and completion run, the session is left) and publishing, the request looks at
    /// whether the queue's reference, handed over here, is the only one left. If so, and the
    /// outcome can be dropped without running any code, nothing is left to do (see
    /// `publishWorker`), and the `publish` step is not called.
    @usableFromInline
    package consuming func finishOnLoop(_ work: ThreadPoolWork, cancelled: Bool) {
        // Read once: each read of the closure retains and releases its context.
        let step = threadPoolStep
        let left = step(self, .finish(work, cancelled: cancelled))
        if case .done = left { return }
        var request = consume self
        let soleOwner = isKnownUniquelyReferenced(&request)
        if soleOwner, case .outcomeWaitsDroppable = left { return }
        // A `let` again: a call with the `var` copies the reference first (a retain and a release).
        let owned = consume request
        _ = step(owned, .publish(work, soleOwner: soleOwner))
    }
}
