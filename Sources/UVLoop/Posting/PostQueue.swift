import Glibc
import Synchronization

/// Where a loop is in its life. Work is accepted only while `open`.
enum LoopPhase: Sendable, Equatable {
    case open
    case shuttingDown
    case closed
    case detached
}

/// The cross-thread half of a loop: a multi-producer, single-consumer queue of jobs.
///
/// Producers append under a mutex; the loop's thread swaps the whole buffer out in one lock and
/// runs it outside the lock, so a producer never waits for work to run. Both buffers keep their
/// capacity, so in steady state posting allocates nothing. `wakePending` makes posting cost no
/// wake-up while the loop is awake: only the post that finds it clear wakes the loop, and the loop
/// clears it only right before a poll that may block, in the lock that sees the queue empty
/// (`rearmWakeUnlessPending`). Until then the loop looks at the queue again before it polls, so
/// a post that arrives while it works sends no wake-up, and the loop reads none. (The loop's
/// own thread queues into `LoopEngine`'s loop-confined queue instead, without the lock, while the
/// loop is open; once shutdown begins, its executor jobs come here too.)
final class PostQueue: Sendable {
    struct State {
        var jobs: [Job] = []
        /// Set by the post that wakes the loop (and by shutdown); cleared only by
        /// `rearmWakeUnlessPending`, right before a poll that may block.
        var wakePending = false
        var phase = LoopPhase.open
        /// After close: the thread running executor jobs that arrived too late for the loop, and
        /// the jobs waiting for it (see `PostQueue+ExecutorJobs.swift`).
        var lateRunner: ThreadIdentity?
        var lateJobs: [LateJob] = []
    }

    let state = NativeMutex(State())

    /// What posting throws once the loop no longer accepts work: `.detached` for a loop C code
    /// owns (which only ever ends by `detach()`, or by being released), `.shutDown` otherwise.
    /// Fixed at creation, so that a post refused while a detach is still under way (requested
    /// inside a loop callback, it waits for that callback) already reports the detach.
    let refusal: LoopError

    init(refusesAsDetached: Bool) {
        refusal = refusesAsDetached ? .detached : .shutDown
    }

    /// `phase == .open`, readable without the lock: cleared (under the lock) when shutdown or
    /// detach begins. Loop-thread fast paths (scheduling a timer, next-iteration work) read it.
    let acceptsWork = Atomic<Bool>(true)

    /// `stop()` was called; the loop's thread clears it when it stops.
    let stopRequested = Atomic<Bool>(false)

    /// `Loop.busyPoll` in nanoseconds: set from any thread, read by the loop's thread.
    let busyPollNanoseconds = Atomic<UInt64>(0)

    /// Whether the loop accepts work, without taking the lock.
    @inline(__always)
    var isOpen: Bool { acceptsWork.load(ordering: .acquiring) }

    /// Threads between deciding, under the lock, to wake the loop and returning from
    /// `WakeHandle.send()`. The send itself happens outside the lock, so that the woken loop thread
    /// does not find the lock taken; closing the wake handle waits for this to reach zero.
    let wakersInFlight = Atomic<Int>(0)

    /// Appends `job` from a thread other than the loop's, and wakes the loop unless a wake-up is
    /// already pending. The wake is sent after the lock is released, registered in
    /// `wakersInFlight` so that the handle outlives the send.
    /// `job` is moved into the queue (left `.empty`) when it is queued, and left as it was when
    /// the loop refuses it.
    @inline(__always)
    func append(taking job: inout Job, waking wake: WakeHandle) throws(LoopError) {
        let mustWake = try state.withLock { (state: inout State) throws(LoopError) -> Bool in
            guard state.phase == .open else { throw refusal }
            state.jobs.append(Job.take(&job))
            if state.wakePending { return false }
            state.wakePending = true
            wakersInFlight.wrappingAdd(1, ordering: .relaxed)
            return true
        }
        if mustWake { sendRegisteredWake(wake) }
    }

    /// Sends a wake-up registered (under the lock) in `wakersInFlight`, and unregisters it.
    @inline(__always)
    func sendRegisteredWake(_ wake: WakeHandle) {
        wake.send()
        wakersInFlight.wrappingSubtract(1, ordering: .releasing)
    }

    /// Waits until every registered wake-up has been sent. Called by the loop's thread after the
    /// phase stopped accepting work (so no new waker can register) and before closing the handle.
    func waitForWakers() {
        while wakersInFlight.load(ordering: .acquiring) != 0 { sched_yield() }
    }

    /// Swaps the pending jobs into `buffer` (which must be empty). The wake flag stays set: the
    /// loop is awake, and `rearmWakeUnlessPending` runs before it next blocks.
    @inline(__always)
    func takeAll(into buffer: inout [Job]) {
        state.withLock { state in
            swap(&state.jobs, &buffer)
        }
    }

    /// Called by the loop's thread right before a poll that may block. Returns true when jobs are
    /// queued (the loop must run them instead of blocking; the wake flag stays set). Otherwise
    /// clears the wake flag, in the same lock that saw the queue empty, so that the next post
    /// wakes the loop, and returns false.
    @inline(__always)
    func rearmWakeUnlessPending() -> Bool {
        state.withLock { state in
            if !state.jobs.isEmpty { return true }
            state.wakePending = false
            return false
        }
    }

    var phase: LoopPhase { state.withLock { $0.phase } }

    var isEmpty: Bool { state.withLock { $0.jobs.isEmpty } }

    /// The jobs queued by other threads and not yet taken by the loop.
    var count: Int { state.withLock { $0.jobs.count } }
}
