import UVLoop

/// What an `OperationRequest` keeps under its lock: where it stands, whether it was cancelled,
/// its outcome, and who waits for it.
///
/// Not generic, and the outcome is kept as `any Sendable` (an `Outcome<Value>`), because a
/// request's deinit is compiled once for every `Value`: destroying a lock around generic state
/// there would look up the metadata of the state, of the lock's cell and of their fields at run
/// time, for every request. An existential is destroyed through the metadata it carries, and an
/// outcome of up to three words (any `Value` of up to 16 bytes, such as an `Int` or a `String`)
/// is stored in place, without an allocation. Reading it back costs a dynamic cast, so the hot
/// path never does: the worker's result reaches the loop's thread in the job's result space, and
/// only waiters read the final outcome.
@usableFromInline
struct RequestState {
    @usableFromInline
    enum Stage {
        /// Not handed to the thread pool (or, for a composite, not begun) yet.
        case created
        /// In libuv's thread pool: waiting for a thread, or running.
        case queued(ThreadPoolWork)
        /// A composite whose children run.
        case running
        /// The outcome is decided; the transform and completion are running.
        case completing
        /// The completion has run; `outcome` is final.
        case finished
    }

    @usableFromInline var stage: Stage
    @usableFromInline var cancelRequested: Bool
    /// A worker's outcome too large for the thread-pool job's result space, stored by the pool
    /// thread; from `finished` on, the final outcome; `()` when there is none. Not an optional:
    /// destroying an optional existential goes through the optional's generic value witness,
    /// which costs several times what destroying a plain existential does.
    @usableFromInline var outcome: any Sendable
    /// Made by the first blocking waiter only.
    @usableFromInline var waiters: ThreadEvent?
    /// Tasks awaiting the outcome, resumed once it is final.
    @usableFromInline var continuations: [CheckedContinuation<Void, Never>]

    /// Every field set here rather than by default values, which are not inlinable: an opaque
    /// call in the middle of a request's initialiser keeps the optimiser from pairing up retains
    /// and releases around it.
    @inlinable
    init() {
        stage = .created
        cancelRequested = false
        outcome = ()
        waiters = nil
        continuations = []
    }

    @inlinable
    var isCompleting: Bool {
        switch stage {
        case .completing, .finished: return true
        case .created, .queued, .running: return false
        }
    }

    @inlinable
    var isFinished: Bool {
        if case .finished = stage { return true }
        return false
    }
}
