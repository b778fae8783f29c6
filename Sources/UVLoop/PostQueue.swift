
/// Where a loop is in its life. Work is accepted only while `open`.
enum LoopPhase: Sendable, Equatable {
    case open
    case shuttingDown
    case closed
    case detached

    var refusal: LoopError { self == .detached ? .detached : .shutDown }
}

/// The cross-thread half of a loop: a multi-producer, single-consumer queue of jobs.
///
/// Producers append under a mutex; the loop's thread swaps the whole buffer out in one lock and
/// runs it outside the lock, so a producer never waits for work to run. Both buffers keep their
/// capacity, so in steady state posting allocates nothing. `wakePending` makes a burst of posts
/// cost one wake-up: only the post that finds it clear wakes the loop.
final class PostQueue: Sendable {
    struct State {
        var jobs: [Job] = []
        var wakePending = false
        var phase = LoopPhase.open
        var stopRequested = false
        /// After close: the thread running executor jobs that arrived too late for the loop, and
        /// the jobs waiting for it (see `PostQueue+ExecutorJobs.swift`).
        var lateRunner: ThreadIdentity?
        var lateJobs: [LateJob] = []
    }

    let state = NativeMutex(State())

    /// Appends `job`; returns true when the loop needs waking. With `waking`, the wake is sent
    /// while the lock is held: shutdown changes the phase under the same lock before it closes the
    /// handle, so a send can never reach a closed (freed) handle.
    @inline(__always)
    func append(_ job: Job, waking: WakeHandle?) throws(LoopError) -> Bool {
        try state.withLock { (state: inout State) throws(LoopError) -> Bool in
            guard state.phase == .open else { throw state.phase.refusal }
            state.jobs.append(job)
            if state.wakePending { return false }
            state.wakePending = true
            waking?.send()
            return true
        }
    }

    /// Swaps the pending jobs into `buffer` (which must be empty) and clears the wake flag.
    @inline(__always)
    func takeAll(into buffer: inout [Job]) {
        state.withLock { state in
            swap(&state.jobs, &buffer)
            state.wakePending = false
        }
    }

    var phase: LoopPhase { state.withLock { $0.phase } }

    var isEmpty: Bool { state.withLock { $0.jobs.isEmpty } }
}
