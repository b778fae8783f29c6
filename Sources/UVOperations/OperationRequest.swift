import Synchronization
import UVLoop

/// One run of an operation, returned by ``LoopOperation/start(on:session:)``: wait for it, await
/// it, or cancel it, from any thread.
///
/// ## Completion
/// Every request completes exactly once, whatever the interleaving of finishing, ``cancel()``,
/// timed-out waits and ``OperationSession/cancelAll()``: the transform runs, then the completion,
/// then the request leaves its session, then waiters wake (so a waiter sees the completion's
/// effects), in that order, on the loop's thread.
///
/// The request lets go of the operation's worker once it has run (on the pool thread), and of its
/// transform and completion once the completion has run, so what they captured is released then,
/// even while the request is kept.
///
/// ## Cancelling
/// ``cancel()`` is accepted until the request starts completing. Then:
/// - a worker not yet taken by a pool thread is withdrawn (`uv_cancel` frees its pool slot, or,
///   cancelled before the loop handed it to the pool, it never gets there): it never runs, and the
///   outcome has no value, no error, and ``Outcome/isCancelled``;
/// - a worker already running finishes; the outcome has its value or error, and
///   ``Outcome/isCancelled``;
/// - a composite cancels its running children (which finish with the cancelled flag) and completes
///   the children not started yet without running them.
///
/// ## Waiting
/// ``wait()`` blocks a thread other than the loop's; on the loop's thread it throws
/// `LoopError.wouldDeadlock` (the completion needs that thread), so use ``outcome`` (async) or a
/// completion closure there.
public final class OperationRequest<Value: Sendable>: Sendable {
    /// The loop on whose thread the transform and completion run.
    public let loop: Loop
    /// The operation's name.
    public let name: String?
    /// The driver, for a composite; nil for a worker request.
    @usableFromInline let driver: CompositeDriver<Value>?
    /// A parent composite's hook, called last.
    @usableFromInline let onFinish: (@Sendable (Outcome<Value>) -> Void)?
    @usableFromInline let session: OperationSession?
    /// This request's slot in `session`, set when it joins.
    @usableFromInline let sessionSlot: Atomic<Int>
    @usableFromInline let state: AnnotatedMutex<RequestState>
    /// Whether ``cancel()`` was accepted: set only by it, under `state`'s lock, where it is decided
    /// together with the stage. Read under that lock, and without it by `willQueueWorker`, so that
    /// handing a worker to the thread pool takes no lock.
    @usableFromInline let cancelRequested: Atomic<Bool>
    /// A worker's thread-pool handle (`ThreadPoolWork.bitPattern`) from when it is queued until it
    /// begins completing, 0 otherwise: how a cancel withdraws it. Read and written on the loop's
    /// thread only (queueing, completing and withdrawing all happen there), so relaxed.
    @usableFromInline let queuedWork: Atomic<UInt>
    /// The operation's closures (see `OperationClosures`): set by `init`, then read and changed
    /// only while holding `state`'s lock, until completing begins and takes them out.
    ///
    /// `nonisolated(unsafe)` is safe because every access after `init` happens inside
    /// `state.withLock` (`runWorker`, `takeClosures`), so the lock orders them, and `init` and
    /// the deinit have the request to themselves. A stored property of the request rather than a
    /// field of `RequestState`, because the request's deinit is compiled once for every `Value`:
    /// a lock around state that depends on `Value` is destroyed there through type metadata
    /// looked up at run time, while this field has the same layout for every `Value` (references
    /// to the closures' contexts) and is destroyed in place. The only such property outside the
    /// folders for unchecked code; scripts/check-unsafe-code allows this one and no other.
    ///
    /// Without the run-time exclusivity check: the lock already keeps accesses from overlapping,
    /// and no access runs user code (each moves the worker, or all the closures, out), so the check
    /// could never fire; it would cost the loop's thread a `swift_beginAccess` call per request.
    @usableFromInline @exclusivity(unchecked) nonisolated(unsafe) var closures: OperationClosures<Value>?
    /// The thread-pool steps, compiled where `Value` is known (see `ThreadPoolStep`).
    @usableFromInline let threadPoolStep: @Sendable (OperationRequest<Value>, ThreadPoolStep) -> ThreadPoolStepResult

    @inlinable
    init(
        loop: Loop, runnable: RunnableOperation<Value>, session: OperationSession?,
        onFinish: (@Sendable (Outcome<Value>) -> Void)?
    ) {
        self.loop = loop
        self.name = runnable.name
        self.session = session
        self.onFinish = onFinish
        let worker: (@Sendable () throws -> Value)?
        switch runnable.kind {
        case .worker(let work):
            worker = work
            driver = nil
        case .composite(let plan, let wrap):
            worker = nil
            driver = CompositeDriver(loop: loop, plan: plan, wrap: wrap)
        }
        closures = OperationClosures(worker: worker, transform: runnable.transform, completion: runnable.completion)
        sessionSlot = Atomic(-1)
        state = AnnotatedMutex(RequestState())
        cancelRequested = Atomic(false)
        queuedWork = Atomic(0)
        // Captures nothing once specialised, so it costs no allocation there.
        threadPoolStep = { request, step in request.perform(step) }
    }

    // MARK: observing

    /// Whether the request has completed (its completion has run). Any thread.
    public var isFinished: Bool { state.withLock { $0.isFinished } }

    /// Whether ``cancel()`` was accepted (before the request began completing). Any thread.
    public var isCancelled: Bool { cancelRequested.load(ordering: .acquiring) }

    /// The outcome once the request has completed, nil before. Any thread, never blocks.
    public var finishedOutcome: Outcome<Value>? {
        state.withLock { state -> (any Sendable)? in state.isFinished ? state.completion?.outcome : nil }.map(Self.unerased)
    }

    /// Blocks the calling thread until the request has completed, and returns its outcome.
    ///
    /// - Returns: the outcome, after the completion has run.
    /// - Throws: `LoopError.wouldDeadlock` on the loop's thread, where the request needs to run
    ///   its completion: await ``outcome`` there, or use a completion closure.
    public func wait() throws(LoopError) -> Outcome<Value> {
        let waiters = try waiters(operation: "OperationRequest.wait()")
        waiters?.wait()
        return finishedOutcome!
    }

    /// Blocks the calling thread until the request has completed or `timeout` has passed.
    ///
    /// A timeout ends only this wait: the request goes on and completes as usual.
    /// - Parameter timeout: the longest to wait; `.zero` only looks.
    /// - Returns: the outcome, after the completion has run.
    /// - Throws: `LoopError.timedOut` when `timeout` passes first, `LoopError.invalidArgument` for
    ///   a negative timeout, `LoopError.wouldDeadlock` on the loop's thread (see ``wait()``).
    public func wait(timeout: Duration) throws(LoopError) -> Outcome<Value> {
        guard timeout >= .zero else {
            throw .invalidArgument("wait(timeout:) needs a non-negative timeout (got \(timeout))")
        }
        let waiters = try waiters(operation: "OperationRequest.wait(timeout:)")
        if let waiters, !waiters.wait(timeoutNanoseconds: timeout.delayNanoseconds) { throw .timedOut }
        return finishedOutcome!
    }

    /// The event to block on, or nil when the request has completed.
    private func waiters(operation: String) throws(LoopError) -> ThreadEvent? {
        guard !loop.isOnLoopThread else { throw .wouldDeadlock(operation: operation) }
        return state.withLock { state in
            guard !state.isFinished else { return nil }
            let completion = state.madeCompletion()
            if let waiters = completion.waiters { return waiters }
            let waiters = ThreadEvent()
            completion.waiters = waiters
            return waiters
        }
    }

    /// The outcome, once the request has completed; suspends the calling task until then.
    ///
    /// Callable from any context, the loop's thread included. Cancelling the awaiting task
    /// cancels the request, and the outcome then reports it.
    public var outcome: Outcome<Value> {
        get async {
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let finished = state.withLock { state in
                        if state.isFinished { return true }
                        state.madeCompletion().append(continuation)
                        return false
                    }
                    if finished { continuation.resume() } else { loop.preconditionSteppedWhileAwaiting("OperationRequest.outcome") }
                }
            } onCancel: {
                cancel()
            }
            return finishedOutcome!
        }
    }

    // MARK: cancelling

    /// Cancels the request (see the type's description for what that does). Any thread.
    ///
    /// From another thread the libuv part (`uv_cancel`) happens when the loop next drains its
    /// posted work; once the loop is shut down it cannot, so a queued worker then still runs, and
    /// its outcome carries the cancelled flag.
    /// - Returns: true when this call cancelled the request: it had not begun completing and had
    ///   not been cancelled already. The outcome will have ``Outcome/isCancelled`` set.
    @discardableResult
    public func cancel() -> Bool {
        let accepted = state.withLock { state in
            guard !state.isCompleting, !cancelRequested.load(ordering: .relaxed) else { return false }
            // Before the withdrawal is posted: a worker that the loop's thread queues after this
            // sees the flag (`willQueueWorker`), and one it queued before is withdrawn by the post.
            cancelRequested.store(true, ordering: .releasing)
            return true
        }
        guard accepted else { return false }
        if let driver {
            // At once, from this thread: a running child is marked cancelled before it can finish.
            driver.cancel()
        } else if loop.isOnLoopThread {
            withdrawFromThreadPool()
        } else {
            try? loop.post { [self] in withdrawFromThreadPool() }
        }
        return true
    }

    /// Loop thread: `uv_cancel` for a worker still in the pool's queue.
    private func withdrawFromThreadPool() {
        // 0 before the worker is queued (it then sees the flag) and once it began completing.
        let bits = queuedWork.load(ordering: .relaxed)
        guard bits != 0 else { return }
        // Withdrawn or not, the after-work callback reports it; nothing more to do here.
        _ = ThreadPoolWork(bitPattern: bits).cancel()
    }
}

extension OperationRequest: CancellableRequest {}

extension OperationRequest {
    /// The outcome that `RequestCompletion.outcome` holds: only this request's `Outcome<Value>` is
    /// ever stored there.
    @inlinable
    static func unerased(_ stored: any Sendable) -> Outcome<Value> {
        stored as! Outcome<Value>
    }
}
