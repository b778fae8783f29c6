import UVLoop

/// What an `OperationRequest` keeps under its lock: where it stands and, once anyone can look at
/// them, its outcome and who waits for it (`completion`). Whether it was cancelled is the
/// request's `cancelRequested`, changed only under this lock.
///
/// Not generic, because a request's deinit is compiled once for every `Value`: destroying a lock
/// around generic state there would look up the metadata of the state, of the lock's cell and of
/// their fields at run time, for every request. For the same reason the outcome is kept as
/// `any Sendable` (an `Outcome<Value>`), and in an object of its own, made only when someone
/// waits or can still read it: a request that no one holds when it completes (see
/// `publishWorker`) then has no outcome, event or array of tasks to destroy, only a nil.
@usableFromInline
struct RequestState {
    @usableFromInline
    enum Stage {
        /// A worker on its way to libuv's thread pool or in it (waiting for a thread, or
        /// running; see the request's `queuedWork`); a composite not begun yet.
        case created
        /// A composite whose children run.
        case running
        /// The outcome is decided; the transform and completion are running.
        case completing
        /// The completion has run; `outcome` is final.
        case finished
    }

    @usableFromInline var stage: Stage
    /// The outcome and the waiters, made by the first waiter, by a pool thread with an outcome
    /// too large for the thread-pool job's result space, or when the request completes while
    /// someone holds it. Nil otherwise.
    @usableFromInline var completion: RequestCompletion?

    /// Every field set here rather than by default values, which are not inlinable: an opaque
    /// call in the middle of a request's initialiser keeps the optimiser from pairing up retains
    /// and releases around it.
    @inlinable
    init() {
        stage = .created
        completion = nil
    }

    /// `completion`, made if there is none yet.
    @inlinable
    mutating func madeCompletion() -> RequestCompletion {
        if let completion { return completion }
        let made = RequestCompletion()
        completion = made
        return made
    }

    @inlinable
    var isCompleting: Bool {
        switch stage {
        case .completing, .finished: return true
        case .created, .running: return false
        }
    }

    @inlinable
    var isFinished: Bool {
        if case .finished = stage { return true }
        return false
    }
}

/// A request's outcome and waiters (see `RequestState.completion`). Reached only under the
/// request's lock, and never handed out of it.
@usableFromInline
final class RequestCompletion {
    /// A worker's outcome too large for the thread-pool job's result space, stored by the pool
    /// thread; from `finished` on, the final outcome; `()` when there is none. Not an optional:
    /// destroying an optional existential goes through the optional's generic value witness,
    /// which costs several times what destroying a plain existential does.
    @usableFromInline var outcome: any Sendable
    /// Made by the first blocking waiter only.
    @usableFromInline var waiters: ThreadEvent?
    /// The first task awaiting the outcome, resumed once it is final: kept here rather than in
    /// `moreContinuations`, so that a request with one awaiting task allocates nothing more.
    @usableFromInline var continuation: CheckedContinuation<Void, Never>?
    /// Further tasks awaiting the outcome.
    @usableFromInline var moreContinuations: [CheckedContinuation<Void, Never>]

    @inlinable
    init() {
        outcome = ()
        waiters = nil
        continuation = nil
        moreContinuations = []
    }

    /// Adds a task that awaits the outcome.
    @inlinable
    func append(_ awaiting: CheckedContinuation<Void, Never>) {
        if continuation == nil { continuation = awaiting } else { moreContinuations.append(awaiting) }
    }

    /// Whether anyone waits: a blocking waiter or an awaiting task.
    @inlinable
    var hasWaiters: Bool { waiters != nil || continuation != nil }

    /// Takes the waiters out: the blocking waiters' event and the awaiting tasks.
    @inlinable
    func takeWaiters() -> (ThreadEvent?, [CheckedContinuation<Void, Never>]) {
        var awaiting = moreContinuations
        if let continuation { awaiting.insert(continuation, at: 0) }
        defer { waiters = nil; continuation = nil; moreContinuations = [] }
        return (waiters, awaiting)
    }
}
