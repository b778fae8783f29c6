import Glibc
import Synchronization

/// Where a loop is in its life.
///
/// ```
/// open ──shutdown()──▶ shuttingDown ──queue drained──▶ closed
///   └────detach()────▶ detaching ────queue drained──▶ detached
/// ```
/// An owned loop ends by shutting down, an attached one by detaching; releasing the last
/// reference begins the same ending. `stop()` is not a phase: it makes `run()` return and leaves
/// the loop open.
enum LoopPhase: Sendable, Equatable {
    /// Accepts work and handles.
    case open
    /// An owned loop's shutdown has begun: new work is refused; what was accepted still runs.
    case shuttingDown
    /// An attached loop's detach has begun: new work is refused; what was accepted still runs.
    case detaching
    /// An owned loop has shut down: its handles are closed and so is its `uv_loop_t`.
    case closed
    /// An attached loop has detached: its handles are closed; the owner's `uv_loop_t` remains.
    case detached
}

/// The one owner of a loop's lifecycle: its phase, whether it accepts work, its wake-up flag, a
/// stop request, the threads sending a wake-up, and whether its handles are closed.
///
/// Every "may I?" question is asked here: ``admitWork()`` (posting, timers, chunked loops,
/// inboxes), ``admitHandle()`` (every I/O handle kind), ``admitInline()`` (work run at once on the
/// loop's thread, which a shutdown still runs), and the cross-thread paths ``admitPost(waking:_:)``
/// and ``admitExecutorJob(_:late:waking:)``. Each refusal throws ``refusal``: the one error of a
/// loop that no longer accepts work.
///
/// Every change of phase is one of the named transitions below, each written once, as a `switch`
/// over every phase: ``beginShutdown(onLoopThread:waking:)``, ``beginDetach()``,
/// ``beginRelease()``, ``finishEnding()``, ``markHandlesClosed()``; the wake-up flag changes in
/// ``admitPost(waking:_:)``, ``admitExecutorJob(_:late:waking:)``, ``requestStop(onLoopThread:waking:)``
/// and ``rearmWakeUnlessPending()``. The fields are private to this file.
///
/// One lock guards the phase, the wake-up flag and the post queue's storage (`Guarded.jobs`), so
/// that admitting a post and queuing it are one step: a post is either queued before the loop's
/// last drain or refused, never neither. The lock is a pthread mutex (see `NativeMutex`).
final class LoopLifecycle: Sendable {
    /// What the lock guards.
    struct Guarded {
        /// Where the loop is in its life; changed only by the transitions of `LoopLifecycle`.
        fileprivate(set) var phase = LoopPhase.open
        /// Set by the post that wakes the loop (and by shutdown); cleared only right before a
        /// poll that may block (`rearmWakeUnlessPending`), in the lock that sees the queue empty.
        fileprivate(set) var wakePending = false
        /// The post queue's jobs from other threads (see `PostQueue`).
        var jobs: [Job] = []
        /// After the loop closed: the thread running executor jobs that arrived too late for the
        /// loop, and the jobs waiting for it (see `PostQueue+ExecutorJobs.swift`).
        var lateRunner: ThreadIdentity?
        var lateJobs: [LateJob] = []
    }

    private let guarded = NativeMutex(Guarded())

    /// What a refused call throws: ``LoopError/detached`` for an attached loop (which only ever
    /// ends by detaching, or by being released), ``LoopError/shutDown`` otherwise. Fixed at
    /// creation, so that work refused while a detach is still under way already says so.
    let refusal: LoopError

    /// Whether the loop is attached to a `uv_loop_t` that C code owns (it detaches) or owned (it
    /// shuts down).
    private let isAttached: Bool

    /// `phase == .open`, readable without the lock: cleared in the lock that ends the open phase.
    private let acceptsWorkFlag = Atomic<Bool>(true)
    /// `stop()` was called; the loop's thread takes the request when it acts on it.
    private let stopFlag = Atomic<Bool>(false)
    /// The loop's handles are closed (set once, by the loop's thread, at the end of an ending).
    private let handlesClosedFlag = Atomic<Bool>(false)
    /// Threads between deciding, under the lock, to wake the loop and returning from
    /// `WakeHandle.send()`. The send happens outside the lock, so that the woken loop thread does
    /// not find the lock taken; closing the wake handle waits for this to reach zero.
    private let wakersInFlight = Atomic<Int>(0)
    /// `wakePending`, readable without the lock: set in the lock that sets the flag, cleared in
    /// the lock that clears it. Lets the loop's thread skip the lock before a poll while no post
    /// has claimed the wake-up since it last re-armed it (see `rearmWakeUnlessPending`).
    private let wakeClaimedFlag = Atomic<Bool>(false)

    init(attached: Bool) {
        isAttached = attached
        refusal = attached ? .detached : .shutDown
    }

    // MARK: questions

    /// Whether the loop accepts new work and handles (its phase is open). Any thread, no lock.
    @inline(__always)
    var acceptsWork: Bool { acceptsWorkFlag.load(ordering: .acquiring) }

    /// Whether the loop's handles are closed: the ending has finished (or was never needed).
    @inline(__always)
    var handlesClosed: Bool { handlesClosedFlag.load(ordering: .acquiring) }

    /// The phase, read under the lock.
    var phase: LoopPhase { guarded.withLock { $0.phase } }

    /// Whether a shutdown or detach has begun and not yet finished. Loop thread.
    var isEnding: Bool {
        guard !acceptsWork else { return false }
        switch phase {
        case .shuttingDown, .detaching: return true
        case .open, .closed, .detached: return false
        }
    }

    // MARK: admission

    /// New work (a post from the loop's thread, a timer, a chunked loop, an inbox, a stall
    /// handler) is admitted only while the loop is open.
    /// - Throws: ``refusal`` otherwise.
    @inline(__always)
    func admitWork() throws(LoopError) {
        guard acceptsWork else { throw refusal }
    }

    /// A new handle (a signal or descriptor watch, a stream, a listener, a name lookup) is
    /// admitted only while the loop is open and its handles are not closed. Loop thread only.
    /// - Throws: ``refusal`` otherwise.
    @inline(__always)
    func admitHandle() throws(LoopError) {
        guard acceptsWork, !handlesClosedFlag.load(ordering: .relaxed) else { throw refusal }
    }

    /// Work run at once on the loop's thread (an inline `invoke`, a handle's verb from its loop)
    /// is admitted until the loop's handles are closed: a shutdown or detach still runs work that
    /// was accepted, and that work may call back into the loop. Loop thread only.
    /// - Throws: ``refusal`` once the handles are closed.
    @inline(__always)
    func admitInline() throws(LoopError) {
        guard !handlesClosedFlag.load(ordering: .relaxed) else { throw refusal }
    }

    /// Admits a post from another thread: `queue` runs under the lock while the loop is open,
    /// and the loop is woken unless a wake-up is already pending (sent after unlocking).
    /// - Throws: ``refusal`` once the loop no longer accepts work; `queue` did not run.
    @inline(__always)
    func admitPost(waking wake: WakeHandle, _ queue: (inout Guarded) -> Void) throws(LoopError) {
        let mustWake = try guarded.withLock { (state: inout Guarded) throws(LoopError) -> Bool in
            guard state.phase == .open else { throw refusal }
            queue(&state)
            return claimWake(&state)
        }
        if mustWake { sendRegisteredWake(wake) }
    }

    /// Admits a Swift concurrency job from another thread (or one the loop's thread enqueues
    /// after its ending began). `SerialExecutor.enqueue` cannot throw, so unlike a post a job is
    /// never refused:
    /// - open: queued like a post (a wake-up only if the loop may be asleep);
    /// - shutting down or detaching: queued without a wake-up; the ending's drain runs it before
    ///   the loop closes (the ending already woke the loop, and a wake-up could reach a handle
    ///   being closed);
    /// - closed or detached: handed to the late runner, or the caller becomes it.
    @inline(__always)
    func admitExecutorJob(_ job: Job, late: () -> LateJob, waking wake: WakeHandle) -> JobAdmission {
        let (admission, mustWake) = guarded.withLock { state -> (JobAdmission, Bool) in
            switch state.phase {
            case .open:
                state.jobs.append(job)
                return (.queued, claimWake(&state))
            case .shuttingDown, .detaching:
                state.jobs.append(job)
                return (.queued, false)
            case .closed, .detached:
                if state.lateRunner != nil {
                    state.lateJobs.append(late())
                    return (.queued, false)
                }
                state.lateRunner = .current
                return (.runHere, false)
            }
        }
        if mustWake { sendRegisteredWake(wake) }
        return admission
    }

    /// Runs `body` under the lock, for the post queue's own bookkeeping (taking jobs, counting
    /// them, the late runner). `body` must not take the lock again.
    @inline(__always)
    func withGuarded<Result>(_ body: (inout Guarded) -> Result) -> Result {
        guarded.withLock(body)
    }

    // MARK: the wake-up flag

    /// Claims the wake-up under the lock: true for the first claim since the flag was cleared,
    /// and that caller is registered in `wakersInFlight` and must send the wake-up.
    @inline(__always)
    private func claimWake(_ state: inout Guarded) -> Bool {
        if state.wakePending { return false }
        state.wakePending = true
        wakeClaimedFlag.store(true, ordering: .relaxed)
        wakersInFlight.wrappingAdd(1, ordering: .relaxed)
        return true
    }

    /// Sends a wake-up registered under the lock, and unregisters it.
    @inline(__always)
    private func sendRegisteredWake(_ wake: WakeHandle) {
        wake.send()
        wakersInFlight.wrappingSubtract(1, ordering: .releasing)
    }

    /// Called by the loop's thread right before a poll that may block. Returns true when jobs are
    /// queued (the loop must run them instead of blocking; the wake-up flag stays set). Otherwise
    /// clears the flag, in the lock that saw the queue empty, so that the next post wakes the
    /// loop, and returns false.
    ///
    /// Without the lock while the loop is open and the flag is clear (no post claimed the wake-up
    /// since the last re-arm, the case after every I/O callback of a busy loop): nothing is left
    /// to clear, and a job queued meanwhile, unseen here, has claimed the wake-up and sends it,
    /// so a blocking poll returns at once. Jobs queued without claiming it (the executor jobs of
    /// an ending loop) come only once the loop no longer accepts work, and then the lock is taken.
    @inline(__always)
    func rearmWakeUnlessPending() -> Bool {
        if !wakeClaimedFlag.load(ordering: .relaxed) && acceptsWork { return false }
        return guarded.withLock { state in
            if !state.jobs.isEmpty { return true }
            state.wakePending = false
            wakeClaimedFlag.store(false, ordering: .relaxed)
            return false
        }
    }

    // MARK: transitions

    /// Begins an owned loop's shutdown: open → shutting down, refusing new work from now on. The
    /// wake-up flag is set (a post must not clear what the loop will look at anyway), and a
    /// caller on another thread wakes the loop so that it runs the shutdown.
    /// - Returns: whether this call began it (false once the loop is no longer open).
    func beginShutdown(onLoopThread: Bool, waking wake: WakeHandle) -> Bool {
        let mustWake = guarded.withLock { state -> Bool? in
            guard end(&state, as: .shuttingDown) else { return nil }
            state.wakePending = true
            wakeClaimedFlag.store(true, ordering: .relaxed)
            guard !onLoopThread else { return false }
            wakersInFlight.wrappingAdd(1, ordering: .relaxed)
            return true
        }
        guard let mustWake else { return false }
        if mustWake { sendRegisteredWake(wake) }
        return true
    }

    /// Begins an attached loop's detach, on its thread: open → detaching.
    /// - Returns: whether this call began it (false once the loop is no longer open).
    func beginDetach() -> Bool {
        guarded.withLock { end(&$0, as: .detaching) }
    }

    /// Begins the ending that releasing the last reference implies (shutting down an owned loop,
    /// detaching an attached one), unless one has begun already. No wake-up: the releasing
    /// thread finishes it.
    func beginRelease() {
        guarded.withLock { _ = end(&$0, as: isAttached ? .detaching : .shuttingDown) }
    }

    /// open → `ending`; false from any other phase. Clears `acceptsWork` in the same lock.
    private func end(_ state: inout Guarded, as ending: LoopPhase) -> Bool {
        switch state.phase {
        case .open:
            state.phase = ending
            acceptsWorkFlag.store(false, ordering: .releasing)
            return true
        case .shuttingDown, .detaching, .closed, .detached:
            return false
        }
    }

    /// Ends a shutdown or detach if no job is left: shutting down → closed, detaching →
    /// detached, in the same lock that sees the queue empty, so that a job admitted concurrently
    /// is either drained by the loop or handled as late, never neither.
    /// - Returns: false while jobs are still queued (drain them and call again).
    func finishEnding() -> Bool {
        guarded.withLock { state in
            guard state.jobs.isEmpty else { return false }
            switch state.phase {
            case .shuttingDown: state.phase = .closed
            case .detaching: state.phase = .detached
            case .closed, .detached: break
            case .open:
                misusePrecondition(false, "UVLoop internal error: a loop finished ending without beginning to end")
            }
            return true
        }
    }

    /// Waits until every registered wake-up has been sent. Called by the loop's thread once the
    /// loop has stopped accepting work (no new waker can register) and before the wake-up handle
    /// closes.
    func waitForWakers() {
        while wakersInFlight.load(ordering: .acquiring) != 0 { sched_yield() }
    }

    /// The loop's handles are closed: the ending is complete. Loop thread only, once.
    func markHandlesClosed() {
        handlesClosedFlag.store(true, ordering: .releasing)
    }

    // MARK: stop requests

    /// Asks the loop to leave `run()` after the current turn, while it is open. A caller on
    /// another thread wakes the loop.
    /// - Returns: whether the request was made (false once the loop is no longer open).
    func requestStop(onLoopThread: Bool, waking wake: WakeHandle) -> Bool {
        let mustWake = guarded.withLock { state -> Bool? in
            switch state.phase {
            case .open:
                stopFlag.store(true, ordering: .releasing)
                // Always a wake-up: a pending one only promises a look at the queue before the
                // loop blocks, and a stop request is not in the queue.
                guard !onLoopThread else { return false }
                wakersInFlight.wrappingAdd(1, ordering: .relaxed)
                return true
            case .shuttingDown, .detaching, .closed, .detached:
                return nil
            }
        }
        guard let mustWake else { return false }
        if mustWake { sendRegisteredWake(wake) }
        return true
    }

    /// Takes a pending stop request. Loop thread.
    @inline(__always)
    func takeStopRequest() -> Bool {
        stopFlag.load(ordering: .relaxed) && stopFlag.exchange(false, ordering: .acquiring)
    }
}
